/* closuretrace graph: the closure trees of a trace as a picture (Graphviz, in-process). */
#include <ctype.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "viewer.h"
#include "viz.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: closuretrace graph [-i TRACE] [-T svg|png|pdf|dot] [-o FILE] [--leaks]\n"
		"                          [--root [PID:]ADDR[#N]] [--no-fold]\n"
		"\n"
		"Draw the parent/child trees of the closures in TRACE (default "
		"closuretrace.json):\n"
		"leaked closures red, the closures they keep alive orange, finished ones grey;\n"
		"finished siblings of the same kind fold into one counted node.\n"
		"\n"
		"  -i, --input TRACE   the trace to read ('-': standard input)\n"
		"  -T, --format FMT    svg, png, pdf, or dot (structure, no layout); default:\n"
		"                      FILE's extension, else svg\n"
		"  -o, --output FILE   write there instead of standard output\n"
		"      --leaks         only unfinished closures and their ancestors\n"
		"      --root [PID:]ADDR[#N] only the tree below that closure (#N: its Nth life;\n"
		"                      PID: of that process, in a trace of several)\n"
		"      --no-fold       one node per closure, however many\n");
}

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
	struct viz_error err;

	if (!render_graph(in, opts, out, &err))
		return 0;
	fprintf(stderr, "closuretrace graph: %s\n", err.text);
	return -1;
}

int cmd_graph(int argc, char **argv)
{
	static const struct option options[] = {
		{"input", required_argument, NULL, 'i'},  {"format", required_argument, NULL, 'T'},
		{"output", required_argument, NULL, 'o'}, {"leaks", no_argument, NULL, 'l'},
		{"root", required_argument, NULL, 'r'},	  {"no-fold", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},	  {NULL, 0, NULL, 0},
	};
	struct render_graph_opts opts = {.format = NULL};
	const char *input = VIEWER_DEFAULT_TRACE, *output = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:T:o:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'T':
			opts.format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'l':
			opts.leaks_only = true;
			break;
		case 'n':
			opts.no_fold = true;
			break;
		case 'r':
			if (viewer_closure_arg("graph", "--root wants", optarg, &opts.root))
				return EXIT_USAGE;
			break;
		case 'h':
		default:
			return help_or_usage(usage, c);
		}
	}
	if (optind < argc)
		return extra_arg("graph", argv[optind]);
	if (!opts.format && format_of(output, &opts.format))
		return EXIT_USAGE;
	if (!known_format(opts.format)) {
		fprintf(stderr, "closuretrace graph: -T wants svg, png, pdf or dot, not '%s'\n",
			opts.format);
		return EXIT_USAGE;
	}
	if (binary_to_terminal(opts.format, output))
		return EXIT_USAGE;
	return viewer_show(&(struct viewer_job){.cmd = "closuretrace graph",
						.input = input,
						.output = output,
						.keep_finished = true,
						.render = show,
						.ctx = &opts});
}
