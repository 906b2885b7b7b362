/*
 * What record, check, list and ps share beyond the recorder: the messages for a refused
 * environment, so that all say the same thing (each prints one line saying what to do and returns
 * EXIT_ENVIRONMENT). Their options are read with args.h.
 */
#ifndef CLOSURETRACE_RECORD_SHARED_H
#define CLOSURETRACE_RECORD_SHARED_H

#include <sys/types.h>

/* No permission to use BPF and uprobes. */
int permission_error(void);

/* No process with that pid. */
int no_process_error(pid_t pid);

/* what (a binary, a process) has no closure probes. */
int no_probes_error(const char *what);

/* Process pid has no closure probes: said with its program's name (comm). */
int no_probes_in_process(pid_t pid);

/* The BPF programs would not load (err: -errno). */
int load_error(int err);

#endif
