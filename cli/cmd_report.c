/* closuretrace report: totals, closures by kind, leaks and stuck closures of a trace. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "out_file.h"
#include "viewer.h"
#include "viz.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: closuretrace report [-i TRACE] [--json]\n"
		"\n"
		"Summarise TRACE (default closuretrace.json): closures by kind with lifetime\n"
		"percentiles, every leak with the call site to blame and the chain to its root,\n"
		"stuck closures. Leaks do not change the exit status (see 'closuretrace check').\n"
		"\n"
		"  -i, --input TRACE   the trace to read ('-': standard input)\n"
		"      --json          one JSON document, for machines\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option options[] = {
		{"input", required_argument, NULL, 'i'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *input = "closuretrace.json";
	bool json = false;
	struct viz_input in;
	struct out_file out;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "closuretrace report: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (viewer_load(input, false, NULL, &in))
		return EXIT_USAGE;
	if (out_open(&out, "closuretrace report", NULL)) {
		viz_unload(&in);
		return EXIT_USAGE;
	}
	rc = render_report(&in, out.f, json);
	viz_unload(&in);
	if (out_commit(&out))
		return EXIT_USAGE;
	return rc ? EXIT_USAGE : EXIT_OK;
}
