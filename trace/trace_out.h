/*
 * Every file the tool writes, written whole or not at all, and safely where others write too
 * (/tmp): the one rule for traces, pictures, SARIF, timelines and suppressions (out_file.h adds
 * the messages). The output goes to a new file beside the target, created exclusively in the
 * target's folder (openat with O_EXCL and O_NOFOLLOW: no planted link is followed), flushed to
 * disk (fsync) and then renamed over the target in that folder (renameat), only once complete
 * (or, for a recording, from its start: trace_out_place); for a trace the previous file is kept
 * as TARGET.old, as perf does. "-" is standard output.
 *
 * Links, as the kernel's protected_symlinks and protected_regular would judge them whatever the
 * sysctls say: in a world-writable sticky folder (/tmp), a link, a file or a fifo owned by
 * someone else than us or the folder's owner is refused (TRACE_OUT_ELINK, TRACE_OUT_EOTHERS).
 * Elsewhere a link to an existing file is followed (up to 16 links, each judged the same) to a
 * file we may write as ourselves, which is replaced (the link stays); a dangling link is replaced
 * by the file itself, nothing is created where it points. A new file gets the permission bits of
 * the file it replaces, or 0666 under the umask. A target that is a device or a fifo (/dev/null,
 * /dev/stdout) is written in place. Until trace_out_commit (or trace_out_place), the target is
 * untouched.
 */
#ifndef CLOSURETRACE_TRACE_OUT_H
#define CLOSURETRACE_TRACE_OUT_H

#include <stdbool.h>
#include <stdio.h>

/* errno values of a refused target (trace_out_strerror says them). */
#define TRACE_OUT_ELINK	  4096 /* a link of someone else's in a world-writable sticky folder */
#define TRACE_OUT_EOTHERS 4097 /* a file or fifo of someone else's there */

struct trace_out {
	const char *target; /* borrowed */
	int dir;	 /* the folder of the file the target names (see above), open; <= 0: none */
	char *name;	 /* that file's name in dir */
	char *path;	 /* and its path, for the messages */
	char *temp;	 /* the file written (its path), renamed at commit; NULL when in place */
	char *temp_name; /* ... its name in dir */
	int sync_fd;	 /* the file written, for its fsync; 0: none (in place) */
	FILE *f;
	bool placed; /* trace_out_place: the target is the file written (until commit or abort) */
	char *old;   /* the previous target's name in dir once moved (NAME.old), or NULL */
	char *buf;   /* f's buffer, when compressed */
};

/* What a failure's errno means: strerror's words, or a refused target's. */
const char *trace_out_strerror(int err);

/* Whether target can be written (checked before a run: a new file in its folder, or a device in
 * place). 0, or -1 with errno set. */
int trace_out_writable(const char *target);

/* Opens for target (see above), close-on-exec, fully buffered; compressed with zstd (a frame
 * per 1 MiB of text: zstd_out.h) when compress is set (a trace named .zst: trace_out_zstd_name).
 * 0, or -1 with errno set. */
int trace_out_open(struct trace_out *t, const char *target, bool compress);

/* Whether target's name asks for a compressed trace (".zst"). */
bool trace_out_zstd_name(const char *target);

/*
 * Makes the file being written the target now (the previous one TARGET.old when keep_old), for a
 * recording: a recorder killed then leaves the target readable up to its last complete line,
 * without the `end` line that a complete trace has (docs/trace-format.md), and no hidden file.
 * trace_out_abort still restores the target as it was. 0, or -1 with errno set (nothing moved).
 */
int trace_out_place(struct trace_out *t, bool keep_old);

/* Flushes, closes and syncs; the temporary file becomes the target (keep_old: the previous one is
 * TARGET.old). 0, or -1 with errno set (the temporary file is then removed). */
int trace_out_commit(struct trace_out *t, bool keep_old);

/* Closes and removes the temporary file (or a placed target): the target stays as it was. */
void trace_out_abort(struct trace_out *t);

#endif
