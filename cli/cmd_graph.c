/* closuretrace graph: the closure trees of a trace as a picture (Graphviz, in-process). */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "viewer.h"
#include "viz.h"

static bool known_format(const char *f)
{
	return !strcmp(f, "svg") || !strcmp(f, "png") || !strcmp(f, "pdf") || !strcmp(f, "dot");
}

/* Without -T, the format of -o FILE's extension (tree.png: png), as dot -O and matplotlib do;
 * svg for standard output or a name without one. Returns 0, or -1 after saying why. */
static int format_of(const char *output, const char **format)
{
	const char *slash, *dot;
	static char ext[8];

	*format = "svg";
	if (!output || !strcmp(output, "-"))
		return 0;
	slash = strrchr(output, '/');
	dot = strrchr(slash ? slash + 1 : output, '.');
	if (!dot || dot == (slash ? slash + 1 : output))
		return 0;
	for (size_t i = 0; i + 1 < sizeof(ext); i++) {
		ext[i] = (char)tolower((unsigned char)dot[1 + i]);
		if (!ext[i])
			break;
	}
	ext[sizeof(ext) - 1] = 0;
	if (!strcmp(ext, "gv"))
		strcpy(ext, "dot");
	if (strlen(dot + 1) >= sizeof(ext) - 1 || !known_format(ext)) {
		fprintf(stderr,
			"closuretrace graph: cannot tell the format of '%s' from its name: use "
			".svg, "
			".png, .pdf or .dot, or -T svg|png|pdf|dot\n",
			output);
		return -1;
	}
	*format = ext;
	return 0;
}

/* png and pdf are bytes for a file or a pipe: refused on a terminal, as gzip and perf do. */
static bool binary_to_terminal(const char *format, const char *output)
{
	if (strcmp(format, "png") && strcmp(format, "pdf"))
		return false;
	if ((output && strcmp(output, "-")) || !isatty(STDOUT_FILENO))
		return false;
	fprintf(stderr,
		"closuretrace graph: -T %s is binary, not written to a terminal: give -o FILE, or "
		"redirect the output\n",
		format);
	return true;
}

static int show(struct viz_input *in, FILE *out, void *opts)
{
	struct trace_error err;

	if (!render_graph(in, opts, out, &err))
		return 0;
	fprintf(stderr, "closuretrace graph: %s\n", err.text);
	return -1;
}

static int root_arg(void *root, const char *arg, const char *cmd)
{
	return viewer_closure_arg(cmd, "--root wants", arg, root);
}

int cmd_graph(int argc, char **argv)
{
	struct render_graph_opts opts = {.format = NULL};
	const char *input = DEFAULT_TRACE, *output = NULL;
	const struct opt options[] = {
		OPTION(OPT_STRING, 'i', "input", &input, "TRACE",
		       "the trace to read ('-': standard input)"),
		OPTION(OPT_STRING, 'T', "format", &opts.format, "FMT",
		       "svg, png, pdf, or dot (structure, no layout); default:\nFILE's extension, "
		       "else "
		       "svg"),
		OPTION(OPT_STRING, 'o', "output", &output, "FILE",
		       "write there instead of standard output"),
		OPTION(OPT_FLAG, 0, "leaks", &opts.leaks_only, NULL,
		       "only unfinished closures and their ancestors"),
		OPTION(OPT_CALL, 0, "root", &opts.root, "[PID:]ADDR[#N]",
		       "only the tree below that closure (#N: its Nth life;\nPID: of that process, "
		       "in a "
		       "trace of several)",
		       .call = root_arg),
		OPTION(OPT_FLAG, 0, "no-fold", &opts.no_fold, NULL,
		       "one node per closure, however many"),
		OPTION_MAX_MEMORY,
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "graph",
		.synopsis = "usage: closuretrace graph [-i TRACE] [-T svg|png|pdf|dot] [-o FILE] "
			    "[--leaks]\n"
			    "                          [--root [PID:]ADDR[#N]] [--no-fold]\n"
			    "\n"
			    "Draw the parent/child trees of the closures in TRACE "
			    "(default " DEFAULT_TRACE "):\n"
			    "leaked closures (and roots of a hang) red, never folded with\n"
			    "others, the closures they keep alive orange, finished ones grey;\n"
			    "finished siblings of the same kind fold into one counted node, a\n"
			    "long chain of alike closures into its ends and '... N levels ...';\n"
			    "waitlists with what waits on them and what would wake them.\n",
		.opts = options,
	};
	int ret = args_parse_only(&cl, argc, argv);
	/* Finished closures kept of a kind under one parent; past that they are counted only: a
	 * picture folds them anyway, and memory then follows what is alive (model_fold_finished).
	 */
	unsigned keep = 64;

	if (ret >= 0)
		return ret;
	if (!opts.format && format_of(output, &opts.format))
		return EXIT_USAGE;
	if (!known_format(opts.format)) {
		fprintf(stderr, "closuretrace graph: -T wants svg, png, pdf or dot, not '%s'\n",
			opts.format);
		return EXIT_USAGE;
	}
	if (binary_to_terminal(opts.format, output))
		return EXIT_USAGE;
	/* One tree, or every closure drawn: each finished one is needed. */
	if (opts.root.addr || opts.no_fold)
		keep = VIZ_KEEP_ALL;
	return viewer_show(&(struct viewer_job){.cmd = "closuretrace graph",
						.input = input,
						.output = output,
						.keep_finished = keep,
						.render = show,
						.ctx = &opts});
}
