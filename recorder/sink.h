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

#include "recorder.h"

/* Whether this process may load BPF programs (else: the sink). */
bool sink_bpf_permitted(void);

/*
 * recorder_run's way without BPF, for a command (o->argv): runs it with the sink to its end and
 * writes the whole trace, header to trailer. res->probes: some process of the command wrote to
 * the sink. -1 when the command ran, else an exit status after saying why.
 */
int sink_run(const struct recorder_opts *o, recorder_open_fn open_out, void *ctx,
	     struct recorder_result *res);

#endif
