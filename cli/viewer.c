/* What the viewers share (viewer.h). */
#include "viewer.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "out_file.h"

/* viz_load, then the error or the warnings on standard error. Returns 0, or -1 (bad input). */
static int load(const struct viewer_job *job, struct viz_input *in)
{
	char warnings[VIZ_MAX_WARNINGS][256];
	struct trace_error err;
	unsigned n;

	if (viz_load(job->input, job->keep_finished, job->watch, in, &err)) {
		fprintf(stderr, "%s\n", err.text);
		viewer_hint_no_trace(job->cmd, job->input);
		return -1;
	}
	n = viz_warnings(in, warnings);
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, "%s\n", warnings[i]);
	return 0;
}

int viewer_show(const struct viewer_job *job)
{
	struct viz_input in;
	struct out_file out;
	int rc;

	if (load(job, &in))
		return EXIT_USAGE;
	if (out_open(&out, job->cmd, job->output)) {
		viz_unload(&in);
		return EXIT_USAGE;
	}
	rc = job->render(&in, out.f, job->ctx);
	viz_unload(&in);
	if (rc) {
		out_abort(&out);
		return EXIT_USAGE;
	}
	return out_commit(&out) ? EXIT_USAGE : EXIT_OK;
}

int viewer_closure_arg(const char *cmd, const char *want, const char *s, struct model_id *id)
{
	if (!viz_parse_closure(s, id))
		return 0;
	fprintf(stderr, "closuretrace %s: %s a closure as " VIZ_CLOSURE_SYNTAX ", not '%s'\n", cmd,
		want, s);
	return EXIT_USAGE;
}

void viewer_hint_no_trace(const char *cmd, const char *input)
{
	if (strcmp(input, DEFAULT_TRACE) || access(input, F_OK) == 0 || errno != ENOENT)
		return;
	fprintf(stderr,
		"%s: hint: no trace here to read; record one first: closuretrace record -- COMMAND "
		"(or record -p PID), or name one with -i TRACE\n",
		cmd);
}
