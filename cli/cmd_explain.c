/* closuretrace explain ADDR[#N]: the life of one closure, operation by operation. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "out_file.h"
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

int cmd_explain(int argc, char **argv)
{
	static const struct option options[] = {
		{"input", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *input = "closuretrace.json";
	struct viz_input in;
	struct out_file out;
	struct model_id id;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (viz_parse_closure(argv[optind], &id)) {
		fprintf(stderr,
			"closuretrace explain: want a closure as " VIZ_CLOSURE_SYNTAX
			", not '%s'\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (viewer_load(input, false, &id, &in))
		return EXIT_USAGE;
	if (out_open(&out, "closuretrace explain", NULL)) {
		viz_unload(&in);
		return EXIT_USAGE;
	}
	rc = render_explain(&in, &id, out.f);
	viz_unload(&in);
	if (out_commit(&out))
		return EXIT_USAGE;
	return rc ? EXIT_USAGE : EXIT_OK;
}
