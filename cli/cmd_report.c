/* closuretrace report: totals, closures by kind, leaks and stuck closures of a trace. */
#include <getopt.h>
#include <stdio.h>

#include "args.h"
#include "commands.h"
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

static int show(struct viz_input *in, FILE *out, void *json)
{
	return render_report(in, out, *(bool *)json);
}

int cmd_report(int argc, char **argv)
{
	static const struct option options[] = {
		{"input", required_argument, NULL, 'i'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *input = VIEWER_DEFAULT_TRACE;
	bool json = false;
	int c;

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
		default:
			return help_or_usage(usage, c);
		}
	}
	if (optind < argc)
		return extra_arg("report", argv[optind]);
	return viewer_show(&(struct viewer_job){
		.cmd = "closuretrace report", .input = input, .render = show, .ctx = &json});
}
