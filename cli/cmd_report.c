/* closuretrace report: totals, closures by kind, leaks and stuck closures of a trace. */
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "viewer.h"
#include "viz.h"

static int show(struct viz_input *in, FILE *out, void *json)
{
	return render_report(in, out, *(bool *)json);
}

int cmd_report(int argc, char **argv)
{
	const char *input = DEFAULT_TRACE;
	bool json = false;
	const struct opt opts[] = {
		OPTION(OPT_STRING, 'i', "input", &input, "TRACE",
		       "the trace to read ('-': standard input)"),
		OPTION(OPT_FLAG, 0, "json", &json, NULL, "one JSON document, for machines"),
		OPTION_MAX_MEMORY,
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "report",
		.synopsis = "usage: closuretrace report [-i TRACE] [--json]\n"
			    "\n"
			    "Summarise TRACE (default " DEFAULT_TRACE
			    "): closures by kind with lifetime\n"
			    "percentiles, every leak with the call site to blame and the chain to "
			    "its root,\n"
			    "stuck closures. Leaks do not change the exit status (see "
			    "'closuretrace check').\n",
		.opts = opts,
	};
	int ret = args_parse_only(&cl, argc, argv);

	if (ret >= 0)
		return ret;
	return viewer_show(&(struct viewer_job){
		.cmd = "closuretrace report", .input = input, .render = show, .ctx = &json});
}
