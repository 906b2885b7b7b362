/* closuretrace timeline: a trace as Chrome trace-event JSON, for Perfetto and chrome://tracing. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "out_file.h"
#include "timeline.h"
#include "viewer.h"
#include "viz.h"

/* --from and --to: a time since the start of the trace (bare: nanoseconds). */
static int time_arg(void *ns, const char *arg, const char *cmd)
{
	uint64_t v;

	if (!parse_duration(arg, 1, &v) && v <= INT64_MAX) {
		*(int64_t *)ns = (int64_t)v;
		return 0;
	}
	return args_error(cmd, "--from and --to need a time such as 1.5s, 20ms or 300us (bare: ns)",
			  arg);
}

static int closure_arg(void *o, const char *arg, const char *cmd)
{
	((struct timeline_opts *)o)->select = true;
	return viewer_closure_arg(cmd, "want", arg, &((struct timeline_opts *)o)->sel);
}

/* Fills *o and *output; returns -1 to go on, or the exit status to stop with (after --help: 0). */
static int parse_args(int argc, char **argv, struct timeline_opts *o, const char **output)
{
	const struct opt opts[] = {
		OPTION(OPT_STRING, 'i', "input", &o->path, "TRACE",
		       "the trace to read ('-': standard input)"),
		OPTION(OPT_STRING, 'o', "output", output, "FILE",
		       "write FILE, whole or not at all (default: standard output)"),
		OPTION(OPT_CALL, 0, "from", &o->from_ns, "T",
		       "only what happened from T (since the start: 1.5s,\n20ms, 300us; bare: ns)",
		       .call = time_arg),
		OPTION(OPT_CALL, 0, "to", &o->to_ns, "T", "only what happened until T",
		       .call = time_arg),
		OPTION(OPT_CALL, 0, "closure", o, "ID",
		       "only that closure, its ancestors and descendants\n(ID: ADDR, ADDR#N or "
		       "PID:ADDR#N)",
		       .call = closure_arg),
		OPTION_MAX_MEMORY,
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "timeline",
		.synopsis =
			"usage: closuretrace timeline [-i TRACE] [-o FILE] [--from T] [--to T]\n"
			"                             [--closure [PID:]ADDR[#N]]\n"
			"\n"
			"Write TRACE (default " DEFAULT_TRACE
			") as Chrome trace-event JSON, which\n"
			"ui.perfetto.dev and chrome://tracing open: threads as tracks, each "
			"closure's\n"
			"life as a slice on the track of its kind, operations as instant events "
			"with\n"
			"their file:line, closure_sync as a slice, and arrows for the hops "
			"between\n"
			"threads. Memory stays bounded whatever the size of the trace.\n",
		.opts = opts,
	};
	int ret = args_parse_only(&cl, argc, argv);

	if (ret >= 0)
		return ret;
	if (o->from_ns > o->to_ns)
		return args_error("timeline", "--from is after --to", NULL);
	return -1;
}

/* Streams: the trace is never loaded whole, so not a viewer_show job; the output is the same
 * whole-or-nothing out_file as theirs. */
int cmd_timeline(int argc, char **argv)
{
	struct timeline_opts o = {.path = DEFAULT_TRACE, .from_ns = INT64_MIN, .to_ns = INT64_MAX};
	struct timeline_result res;
	struct trace_error err;
	const char *output = NULL;
	struct out_file out;
	int rc = parse_args(argc, argv, &o, &output);

	if (rc >= 0)
		return rc;
	/* Streamed: a trace that cannot be opened is said before any of the output is written. */
	if (strcmp(o.path, "-") && access(o.path, R_OK)) {
		fprintf(stderr, "%s: error: %s\n", o.path, strerror(errno));
		viewer_hint_no_trace("closuretrace timeline", o.path);
		return EXIT_USAGE;
	}
	if (out_open(&out, "closuretrace timeline", output))
		return EXIT_USAGE;
	if (render_timeline(&o, out.f, &res, &err)) {
		fprintf(stderr, "%s%s\n", err.placed ? "" : "closuretrace timeline: ", err.text);
		out_abort(&out);
		return EXIT_USAGE;
	}
	for (unsigned i = 0; i < res.nwarnings; i++)
		fprintf(stderr, "%s\n", res.warnings[i]);
	if (out_commit(&out))
		return EXIT_USAGE;
	fprintf(stderr,
		"closuretrace timeline: wrote %" PRIu64 " event%s (%" PRIu64
		" closure slice%s, %" PRIu64 " operation%s, %" PRIu64
		" closure_sync slice%s, %" PRIu64 " arrow%s) to %s\n",
		res.events, res.events == 1 ? "" : "s", res.slices, res.slices == 1 ? "" : "s",
		res.instants, res.instants == 1 ? "" : "s", res.syncs, res.syncs == 1 ? "" : "s",
		res.flows, res.flows == 1 ? "" : "s", out.name);
	return EXIT_OK;
}
