/* closuretrace explain ADDR[#N]: the life of one closure, operation by operation. */
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "viewer.h"
#include "viz.h"

static int show(struct viz_input *in, FILE *out, void *id)
{
	struct trace_error err;

	if (!render_explain(in, id, out, &err))
		return 0;
	fprintf(stderr, "closuretrace explain: %s\n", err.text);
	return -1;
}

int cmd_explain(int argc, char **argv)
{
	const char *input = DEFAULT_TRACE;
	const struct opt opts[] = {
		OPTION(OPT_STRING, 'i', "input", &input, "TRACE",
		       "the trace to read ('-': standard input)"),
		OPTION_MAX_MEMORY,
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "explain",
		.synopsis = "usage: closuretrace explain [-i TRACE] [PID:]ADDR[#N]\n"
			    "\n"
			    "The life of the closure at ADDR in TRACE (default " DEFAULT_TRACE
			    "), one line\n"
			    "per operation: time, thread, operation, count after it, call site. An "
			    "address\n"
			    "used again is a new life: ADDR#N names the Nth (default: the last). "
			    "In a trace\n"
			    "of several processes, PID:ADDR names the closure of process PID.\n",
		.opts = opts,
	};
	struct model_id id;
	int next, ret = args_parse(&cl, argc, argv, &next);

	if (ret >= 0)
		return ret;
	if (next == argc)
		return args_error("explain", "give the closure: [PID:]ADDR[#N]", NULL);
	if (next + 1 < argc)
		return args_extra("explain", argv[next + 1]);
	if (viewer_closure_arg("explain", "want", argv[next], &id))
		return EXIT_USAGE;
	return viewer_show(&(struct viewer_job){.cmd = "closuretrace explain",
						.input = input,
						.watch = &id,
						.render = show,
						.ctx = &id});
}
