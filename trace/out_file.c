/* Outputs written completely or not at all (out_file.h). */
#define _GNU_SOURCE
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int oops(struct out_file *o, const char *what, const char *path)
{
	fprintf(stderr, "%s: cannot %s %s: %s\n", o->cmd, what, path, strerror(errno));
	return -1;
}

/* A new file beside target: .NAME.XXXXXX in the same directory, so that rename is atomic. */
static int open_temp(struct out_file *o, const char *target, mode_t mode)
{
	const char *slash = strrchr(target, '/');
	int dirlen = slash ? (int)(slash - target) + 1 : 0, fd;

	if (asprintf(&o->tmp, "%.*s.%s.XXXXXX", dirlen, target, target + dirlen) < 0) {
		o->tmp = NULL;
		return oops(o, "write", target);
	}
	/* mkostemp creates with O_EXCL: a link planted under that name fails it, never followed. */
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		oops(o, "create a file beside", target);
		return -1;
	}
	if (fchmod(fd, mode) || !(o->f = fdopen(fd, "wb"))) {
		oops(o, "write", o->tmp);
		close(fd);
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

int out_open(struct out_file *o, const char *cmd, const char *path)
{
	struct stat st, lst;
	mode_t mask;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->name = "standard output";
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	o->name = path;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return oops(o, "write", path);
	}
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		/* A device or a FIFO (/dev/stdout, /dev/null): no file to replace. */
		o->f = fopen(path, "wb");
		return o->f ? 0 : oops(o, "write", path);
	}
	/* A link to an existing file: that file is replaced, the link stays. A dangling link (or
	 * none): the name itself gets the new file, nothing is created where a link points. */
	if (!lstat(path, &lst) && S_ISLNK(lst.st_mode) && !stat(path, &st))
		o->path = realpath(path, NULL);
	else
		o->path = strdup(path);
	if (!o->path)
		return oops(o, "write", path);
	mask = umask(0);
	umask(mask);
	if (open_temp(o, o->path, !stat(o->path, &st) ? st.st_mode & 07777 : 0666 & ~mask)) {
		out_abort(o);
		return -1;
	}
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
	failed = fflush(o->f) || failed;
	/* On disk before the rename: a crash then leaves the old file or the new one, never an
	 * empty one. */
	failed = failed || (o->tmp && fsync(fileno(o->f)));
	err = o->err ? o->err : errno ? errno : EIO;

	/* close can report the error of a write that was still pending (NFS, a full disk). */
	if (o->f != stdout && fclose(o->f) && !failed)
		failed = true, err = errno;
	o->f = NULL;
	if (failed) {
		errno = err;
		oops(o, "write", o->name);
		out_abort(o);
		return -1;
	}
	if (o->tmp && rename(o->tmp, o->path)) {
		oops(o, "replace", o->path);
		out_abort(o);
		return -1;
	}
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return 0;
}

void out_abort(struct out_file *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
}
