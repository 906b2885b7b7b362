/*
 * What record shares with check: the messages for a refused environment, so that both say the
 * same thing (each prints one line saying what to do and returns EXIT_ENVIRONMENT), and option
 * parsing.
 */
#ifndef CLOSURETRACE_RECORD_SHARED_H
#define CLOSURETRACE_RECORD_SHARED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct trace_end;

/* No permission to use BPF and uprobes. */
int permission_error(void);

/* what (a binary, a process) has no closure probes. */
int no_probes_error(const char *what);

/* The BPF programs would not load (err: -errno). */
int load_error(int err);

/*
 * A launched command's exit status or killing signal into end, once it has exited (block: wait
 * for it); else end is left as it is.
 */
void child_status(pid_t pid, struct trace_end *end, bool block);

/* A ring-buffer size: a power of two from 4K to 2G, with K, M or G. 0, or -1 when it is not. */
int parse_size(const char *s, size_t *out);

#endif
