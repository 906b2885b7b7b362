/*
 * What record and check share beyond the recorder: the messages for a refused environment, so
 * that both say the same thing (each prints one line saying what to do and returns
 * EXIT_ENVIRONMENT), and option parsing.
 */
#ifndef CLOSURETRACE_RECORD_SHARED_H
#define CLOSURETRACE_RECORD_SHARED_H

#include <stddef.h>
#include <stdint.h>

/* "closuretrace CMD: MSG[: ARG]; see 'closuretrace CMD --help'", returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *msg, const char *arg);

/* No permission to use BPF and uprobes. */
int permission_error(void);

/* what (a binary, a process) has no closure probes. */
int no_probes_error(const char *what);

/* The BPF programs would not load (err: -errno). */
int load_error(int err);

/* A ring-buffer size: a power of two from 4K to 2G, with K, M or G. 0, or -1 when it is not. */
int parse_size(const char *s, size_t *out);

/* A number of seconds, finite and above 0 (a limit of 1e-300 or inf is none): 0 or -1. */
int parse_seconds(const char *s, uint64_t *ns);

#endif
