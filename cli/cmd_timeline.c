/* closuretrace timeline: a trace as Chrome trace-event JSON, for Perfetto and chrome://tracing. */
#include <errno.h>
#include <getopt.h>
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

static void usage(FILE *out)
{
	fprintf(out,
		"usage: closuretrace timeline [-i TRACE] [-o FILE] [--from T] [--to T]\n"
		"                             [--closure [PID:]ADDR[#N]]\n"
		"\n"
		"Write TRACE (default closuretrace.json) as Chrome trace-event JSON, which\n"
		"ui.perfetto.dev and chrome://tracing open: threads as tracks, each closure's\n"
		"life as a slice on the track of its kind, operations as instant events with\n"
		"their file:line, closure_sync as a slice, and arrows for the hops between\n"
		"threads. Memory stays bounded whatever the size of the trace.\n"
		"\n"
		"  -i, --input TRACE      the trace to read ('-': standard input)\n"
		"  -o, --output FILE      write FILE, whole or not at all (default: standard "
		"output)\n"
		"      --from T, --to T   only what happened between T and T (ns since the start,\n"
		"                         or with a unit: 1.5s, 20ms, 300us)\n"
		"      --closure ID       only that closure, its ancestors and descendants\n"
		"                         (ID: ADDR, ADDR#N or PID:ADDR#N)\n");
}

/* Fills *o and *output; returns -1 to go on, or the exit status to stop with (after --help: 0). */
static int parse_args(int argc, char **argv, struct timeline_opts *o, const char **output)
{
	static const struct option options[] = {
		{"input", required_argument, NULL, 'i'},
		{"output", required_argument, NULL, 'o'},
		{"from", required_argument, NULL, 'F'},
		{"to", required_argument, NULL, 'T'},
		{"closure", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->path = optarg;
			break;
		case 'o':
			*output = optarg;
			break;
		case 'F':
		case 'T':
			if (timeline_parse_time(optarg, c == 'F' ? &o->from_ns : &o->to_ns)) {
				fprintf(stderr,
					"closuretrace timeline: bad time '%s' (ns, or 1.5s, 20ms, "
					"300us)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			o->select = true;
			if (viewer_closure_arg("timeline", "want", optarg, &o->sel))
				return EXIT_USAGE;
			break;
		case 'h':
		default:
			return help_or_usage(usage, c);
		}
	}
	if (optind < argc)
		return extra_arg("timeline", argv[optind]);
	if (o->from_ns > o->to_ns) {
		fprintf(stderr, "closuretrace timeline: --from is after --to\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* Streams: the trace is never loaded whole, so not a viewer_show job; the output is the same
 * whole-or-nothing out_file as theirs. */
int cmd_timeline(int argc, char **argv)
{
	struct timeline_opts o = {
		.path = VIEWER_DEFAULT_TRACE, .from_ns = INT64_MIN, .to_ns = INT64_MAX};
	struct timeline_stats st;
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
	rc = render_timeline(&o, out.f, &st);
	if (rc) {
		out_abort(&out);
		return rc;
	}
	if (out_commit(&out))
		return EXIT_USAGE;
	fprintf(stderr,
		"closuretrace timeline: wrote %" PRIu64 " events (%" PRIu64
		" closure slices, %" PRIu64 " operations, %" PRIu64 " closure_sync slices, %" PRIu64
		" arrows) to %s\n",
		st.events, st.slices, st.instants, st.syncs, st.flows, out.name);
	return EXIT_OK;
}
