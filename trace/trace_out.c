/* Writing a trace file safely: see trace_out.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_out.h"
#include "zstd_out.h"

#define BUFFER (1 << 20)

/*
 * The file a target names: a link to an existing file names that file (it is replaced, the link
 * stays), anything else (a dangling link, nothing, a plain file) the name itself: nothing is ever
 * created where a dangling link points. Returns a new string, or NULL with errno set.
 */
static char *target_file(const char *target)
{
	struct stat st, lst;

	if (!lstat(target, &lst) && S_ISLNK(lst.st_mode) && !stat(target, &st) &&
	    S_ISREG(st.st_mode))
		return realpath(target, NULL);
	return strdup(target);
}

/*
 * A new file beside t->path, created exclusively (DIR/.BASE.XXXXXX: no planted link is followed)
 * with the mode of the file it replaces, or a new file's under the umask. -1 with errno set.
 */
static int open_temp(struct trace_out *t)
{
	char *d = strdup(t->path), *b = strdup(t->path);
	struct stat st;
	mode_t mask = umask(0), mode;
	int fd = -1;

	umask(mask);
	mode = !stat(t->path, &st) && S_ISREG(st.st_mode) ? st.st_mode & 07777 : 0666 & ~mask;
	if (d && b && asprintf(&t->temp, "%s/.%s.XXXXXX", dirname(d), basename(b)) < 0)
		t->temp = NULL;
	if (t->temp)
		fd = mkostemp(t->temp, O_CLOEXEC);
	if (fd >= 0 && fchmod(fd, mode)) { /* mkostemp makes it 0600 */
		close(fd);
		unlink(t->temp);
		fd = -1;
	}
	free(d);
	free(b);
	if (fd < 0) {
		int e = errno;

		free(t->temp);
		t->temp = NULL;
		errno = e;
	}
	return fd;
}

int trace_out_writable(const char *target)
{
	struct stat st;
	char *dir;
	int r;

	if (!strcmp(target, "-"))
		return 0;
	if (!stat(target, &st) && S_ISDIR(st.st_mode))
		return errno = EISDIR, -1;
	if (!stat(target, &st) && !S_ISREG(st.st_mode))
		return access(target, W_OK);
	dir = strdup(target);
	if (!dir)
		return -1;
	r = access(dirname(dir), W_OK | X_OK);
	free(dir);
	return r;
}

bool trace_out_zstd_name(const char *target)
{
	size_t n = strlen(target);

	return n > 4 && !strcmp(target + n - 4, ".zst");
}

int trace_out_open(struct trace_out *t, const char *target, bool compress)
{
	struct stat st;
	int fd;

	*t = (struct trace_out){.target = target};
	if (!strcmp(target, "-"))
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	else if (!stat(target, &st) && S_ISDIR(st.st_mode))
		return errno = EISDIR, -1;
	else if (!stat(target, &st) && !S_ISREG(st.st_mode))
		fd = open(target, O_WRONLY | O_CLOEXEC); /* a device or a fifo: never created */
	else if (!(t->path = target_file(target)))
		return -1;
	else if ((fd = open_temp(t)) >= 0 && (t->sync_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		int e = errno;

		trace_out_abort(t);
		return errno = e, -1;
	}
	t->f = compress ? zstd_out_open(fd) : fdopen(fd, "w");
	if (!t->f) {
		int e = errno;

		close(fd);
		trace_out_abort(t);
		return errno = e, -1;
	}
	/* A compressed trace: a buffer of our own, so that a frame holds 1 MiB of text (given
	 * none, glibc ignores the size and buffers one block: 8 KiB frames compress to half as
	 * well). A plain one keeps glibc's block. */
	t->buf = compress ? malloc(BUFFER) : NULL;
	setvbuf(t->f, t->buf, _IOFBF, BUFFER);
	return 0;
}

static int keep_as_old(const char *target)
{
	struct stat st;
	char *old;
	int r;

	if (lstat(target, &st) || !S_ISREG(st.st_mode))
		return 0; /* nothing, or a link: replaced, never followed */
	if (asprintf(&old, "%s.old", target) < 0)
		return -1;
	r = rename(target, old);
	free(old);
	return r;
}

int trace_out_place(struct trace_out *t, bool keep_old)
{
	struct stat st;
	int e;

	if (!t->temp)
		return 0; /* written in place already */
	if (keep_old && !lstat(t->path, &st) && S_ISREG(st.st_mode)) {
		if (asprintf(&t->old, "%s.old", t->path) < 0) {
			t->old = NULL;
			return -1;
		}
		if (rename(t->path, t->old)) {
			e = errno;
			free(t->old);
			t->old = NULL;
			return errno = e, -1;
		}
	}
	if (rename(t->temp, t->path)) {
		e = errno;
		if (t->old)
			rename(t->old, t->path);
		free(t->old);
		t->old = NULL;
		return errno = e, -1;
	}
	free(t->temp);
	t->temp = NULL;
	t->placed = true;
	return 0;
}

int trace_out_commit(struct trace_out *t, bool keep_old)
{
	bool ok = !fflush(t->f) && !ferror(t->f);
	int e = ok ? 0 : errno ? errno : EIO;

	/* close can report the error of a write still pending (NFS, a full disk); a compressed
	 * stream writes its last frame there. */
	if (fclose(t->f) && ok)
		ok = false, e = errno;
	t->f = NULL;
	free(t->buf);
	t->buf = NULL;
	/* On disk before the rename: a crash then leaves the old file or the new one, never an
	 * empty one. */
	if (ok && t->sync_fd > 0 && fsync(t->sync_fd))
		ok = false, e = errno;
	if (ok && t->temp && ((keep_old && keep_as_old(t->path)) || rename(t->temp, t->path)))
		ok = false, e = errno;
	if (!ok) {
		trace_out_abort(t);
		errno = e;
		return -1;
	}
	free(t->temp); /* renamed: nothing to remove any more */
	t->temp = NULL;
	t->placed = false;
	trace_out_abort(t); /* closes and frees what is left */
	return 0;
}

void trace_out_abort(struct trace_out *t)
{
	if (t->f)
		fclose(t->f);
	t->f = NULL;
	free(t->buf);
	t->buf = NULL;
	if (t->sync_fd > 0)
		close(t->sync_fd);
	t->sync_fd = 0;
	if (t->temp)
		unlink(t->temp);
	free(t->temp);
	t->temp = NULL;
	if (t->placed) { /* the target as it was: the previous one back, or none */
		if (!t->old || rename(t->old, t->path))
			unlink(t->path);
		t->placed = false;
	}
	free(t->old);
	t->old = NULL;
	free(t->path);
	t->path = NULL;
}
