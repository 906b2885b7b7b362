/*
 * The in-process sink, the transport without BPF (docs/probes.md, "In-process sink"): the command
 * runs with CLOSURETRACE_SINK naming a private directory, where libclosure writes a file per
 * process; once it has exited, the files become the same trace the recorder writes.
 */
#ifndef CLOSURETRACE_SINK_H
#define CLOSURETRACE_SINK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct trace_end;

/* Whether this process may load BPF programs (else: the sink). */
bool sink_bpf_permitted(void);

/*
 * Runs argv (exe: its resolved path) with the sink and writes the whole trace, header to
 * trailer, to out; end is filled as the trailer says. Returns -1 when the command ran, else an
 * exit status after saying why. *probes: some process of the command wrote to the sink.
 */
int sink_run(char **argv, const char *exe, FILE *out, struct trace_end *end, bool *probes);

#endif
