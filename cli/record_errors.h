/*
 * The recorder's messages for a refused environment, shared by record and check so that both say
 * the same thing. Each prints one line saying what to do and returns EXIT_ENVIRONMENT.
 */
#ifndef CLOSURETRACE_RECORD_ERRORS_H
#define CLOSURETRACE_RECORD_ERRORS_H

/* No permission to use BPF and uprobes. */
int permission_error(void);

/* what (a binary, a process) has no closure probes. */
int no_probes_error(const char *what);

/* The BPF programs would not load (err: -errno). */
int load_error(int err);

#endif
