/* Outputs written completely or not at all, with their messages (out_file.h). */
#include "out_file.h"

#include <errno.h>
#include <string.h>

static int oops(struct out_file *o, const char *path)
{
	fprintf(stderr, "%s: cannot write %s: %s\n", o->cmd, path, trace_out_strerror(errno));
	return -1;
}

int out_open(struct out_file *o, const char *cmd, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->name = "standard output";
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	o->name = path;
	o->file = true;
	if (trace_out_open(&o->t, path, false))
		return oops(o, path);
	o->f = o->t.f;
	return 0;
}

bool out_failed(struct out_file *o)
{
	/* Asked right after the writes: errno still says why they failed. */
	if (!o->err && ferror(o->f))
		o->err = errno ? errno : EIO;
	return o->err != 0;
}

int out_commit(struct out_file *o)
{
	bool failed;
	int err;

	/* errno may still say why an earlier write failed (render_graph keeps it so); out_failed
	 * knew it first. */
	failed = ferror(o->f);
	if (o->err)
		errno = o->err;
	else if (!failed)
		errno = 0;
	if (o->file) {
		err = o->err ? o->err : errno ? errno : EIO;
		o->f = NULL;
		if (failed) {
			trace_out_abort(&o->t);
			errno = err;
			return oops(o, o->name);
		}
		return trace_out_commit(&o->t, false) ? oops(o, o->name) : 0;
	}
	failed = fflush(o->f) || failed;
	err = o->err ? o->err : errno ? errno : EIO;
	o->f = NULL;
	if (failed) {
		errno = err;
		return oops(o, o->name);
	}
	return 0;
}

void out_abort(struct out_file *o)
{
	if (o->file)
		trace_out_abort(&o->t);
	o->f = NULL;
}
