/* Where the tool makes its temporary files and folders: one rule for every command. */
#ifndef CLOSURETRACE_TEMP_DIR_H
#define CLOSURETRACE_TEMP_DIR_H

/* $TMPDIR when it is an absolute path, else /tmp (a relative one would move with the command's
 * working folder). */
const char *temp_dir(void);

#endif
