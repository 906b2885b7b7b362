/* closuretrace explain ADDR[#N]: the life of one closure, operation by operation. */
#include <getopt.h>
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "viewer.h"
#include "viz.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: closuretrace explain [-i TRACE] [PID:]ADDR[#N]\n"
		"\n"
		"The life of the closure at ADDR in TRACE (default closuretrace.json), one line\n"
		"per operation: time, thread, operation, count after it, call site. An address\n"
		"used again is a new life: ADDR#N names the Nth (default: the last). In a trace\n"
		"of several processes, PID:ADDR names the closure of process PID.\n"
		"\n"
		"  -i, --input TRACE   the trace to read ('-': standard input)\n");
}

static int show(struct viz_input *in, FILE *out, void *id)
{
	return render_explain(in, id, out);
}

int cmd_explain(int argc, char **argv)
{
	static const struct option options[] = {
		{"input", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *input = VIEWER_DEFAULT_TRACE;
	struct model_id id;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'h':
		default:
			return help_or_usage(usage, c);
		}
	}
	if (optind + 1 != argc)
		return help_or_usage(usage, '?');
	if (viewer_closure_arg("explain", "want", argv[optind], &id))
		return EXIT_USAGE;
	return viewer_show(&(struct viewer_job){.cmd = "closuretrace explain",
						.input = input,
						.watch = &id,
						.render = show,
						.ctx = &id});
}
