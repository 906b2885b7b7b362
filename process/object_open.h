/* Opening the files a traced process names: see object_open.c. */
#ifndef CLOSURETRACE_OBJECT_OPEN_H
#define CLOSURETRACE_OBJECT_OPEN_H

/*
 * Opens a file that the traced process names (a path in its maps or in a closure:module record)
 * for reading, as the only way any of them is opened: without blocking and only when it is a
 * regular file (a FIFO or a device named by the process would hang or disturb the recorder,
 * docs/probes.md "Trust boundary"). Returns the descriptor (O_CLOEXEC), or -1 with errno set
 * (EINVAL: not a regular file).
 */
int object_open(const char *path);

#endif
