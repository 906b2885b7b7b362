/*
 * What the viewers (graph, report, explain) share: one sequence from a trace to an output. The
 * trace is loaded (its error or warnings said), the output opened whole or not at all
 * (out_file.h), the command's renderer run, and the output put in place.
 */
#ifndef CLOSURETRACE_VIEWER_H
#define CLOSURETRACE_VIEWER_H

#include <stdbool.h>
#include <stdio.h>

#include "viz.h"

/* Renders the loaded trace in (borrowed) into out: 0, or non-zero after saying why. */
typedef int viewer_render_fn(struct viz_input *in, FILE *out, void *ctx);

struct viewer_job {
	const char *cmd;	      /* "closuretrace graph": who complains */
	const char *input;	      /* the trace ('-': standard input) */
	const char *output;	      /* NULL or "-": standard output */
	unsigned keep_finished;	      /* as viz_load's keep */
	const struct model_id *watch; /* as viz_load */
	viewer_render_fn *render;
	void *ctx; /* render's */
};

/* Runs the job. Returns EXIT_OK, or EXIT_USAGE after saying why (bad input, a renderer that
 * failed, an output that could not be written: a file asked for is then left as it was). */
int viewer_show(const struct viewer_job *job);

/* A closure named on the command line (viz_parse_closure): 0, or EXIT_USAGE after "closuretrace
 * CMD: WANT a closure as ADDR, ADDR#N or PID:ADDR#N (...), not 'S'" (WANT: "want", "--root wants").
 */
int viewer_closure_arg(const char *cmd, const char *want, const char *s, struct model_id *id);

/*
 * After an input that could not be read: when it is the default trace and does not exist, a
 * hint to record one first (the user's first command is often report, not record).
 */
void viewer_hint_no_trace(const char *cmd, const char *input);

#endif
