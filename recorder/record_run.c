/*
 * A whole recording by either transport (recorder.h, recorder_run): BPF through the recorder, or,
 * without BPF permission (or with --no-bpf), the in-process sink. Apart from recorder.c so that
 * the recorder and the sink, which shares its options and result, do not call each other.
 */
#include <stdio.h>

#include "exit_status.h"
#include "recorder.h"
#include "sink.h"

int recorder_run(const struct recorder_opts *o, recorder_open_fn open_out, void *ctx,
		 struct recorder_result *res)
{
	int status = -1;
	struct recorder *r;
	const char *temp = NULL;
	FILE *out;

	/* Without BPF a command writes its own events; a running process cannot be told to. */
	if (o->argv && (o->no_bpf || !sink_bpf_permitted()))
		return sink_run(o, open_out, ctx, res);
	if (o->pid && !sink_bpf_permitted()) {
		fprintf(stderr, "closuretrace: not permitted to use BPF and uprobes: recording a "
				"running process (-p) needs root, or CAP_BPF and CAP_PERFMON "
				"(record -- COMMAND and check run without)\n");
		return EXIT_ENVIRONMENT;
	}
	r = recorder_new(o, &status);
	if (!r)
		return status;
	out = open_out ? open_out(ctx, &temp) : NULL;
	status = out || !open_out ? recorder_start(r, out, temp) : EXIT_USAGE;
	if (!status) {
		while (recorder_poll(r, 10) == RECORDER_RUNNING)
			;
		recorder_stop(r, res);
		status = -1;
	}
	recorder_free(r);
	return status;
}
