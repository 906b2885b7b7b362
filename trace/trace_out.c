/* Writing a trace file safely: see trace_out.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_out.h"
#include "zstd_out.h"

#define BUFFER (1 << 20)
/* Outputs open at once at most that an exit cleans up after (a command writes one or two). */
#define ACTIVE_MAX 8

/*
 * The outputs being written: a command that exits before their end (out of memory under the
 * limit, mem_limit.h) leaves no temporary file behind and the targets as they were.
 */
static struct trace_out *active[ACTIVE_MAX];

static void abort_active(void)
{
	for (int i = 0; i < ACTIVE_MAX; i++)
		if (active[i])
			trace_out_abort(active[i]);
}

static void track(struct trace_out *t, bool on)
{
	static bool registered;

	if (on && !registered)
		registered = !atexit(abort_active);
	for (int i = 0; i < ACTIVE_MAX; i++)
		if (on ? !active[i] : active[i] == t) {
			active[i] = on ? t : NULL;
			return;
		}
}
/* Links followed from a target at most (a loop, or a chain nobody needs). */
#define HOPS_MAX 16

const char *trace_out_strerror(int err)
{
	switch (err) {
	case TRACE_OUT_ELINK:
		return "a link owned by another user in a world-writable sticky folder (not "
		       "followed)";
	case TRACE_OUT_EOTHERS:
		return "a file owned by another user in a world-writable sticky folder (not "
		       "replaced)";
	default:
		return strerror(err);
	}
}

/* path's folder ("." when it names none) and last name, as new strings; -1 with errno set. */
static int split(const char *path, char **dir, char **name)
{
	const char *slash = strrchr(path, '/');

	*dir = !slash ? strdup(".") : slash == path ? strdup("/") : strndup(path, slash - path);
	*name = *dir ? strdup(slash ? slash + 1 : path) : NULL;
	if (*name)
		return 0;
	free(*dir);
	*dir = NULL;
	return -1;
}

/*
 * Judges entry, the name's entry in folder dir (the kernel's protected_symlinks,
 * protected_regular and protected_fifos, whatever the sysctls say): in a world-writable sticky
 * folder an entry owned by someone else than us or the folder's owner is refused, since its owner
 * could point it anywhere or swap it. 0, or -1 with errno set.
 */
static int judge(int dir, const struct stat *entry)
{
	struct stat d;

	if (fstat(dir, &d))
		return -1;
	if (!(d.st_mode & S_ISVTX) || !(d.st_mode & S_IWOTH) || entry->st_uid == geteuid() ||
	    entry->st_uid == d.st_uid)
		return 0;
	errno = S_ISLNK(entry->st_mode) ? TRACE_OUT_ELINK : TRACE_OUT_EOTHERS;
	return -1;
}

/* The path a link read in folder dir names: itself when absolute, else under dir. */
static char *link_path(const char *dir, const char *link)
{
	char *p;

	if (link[0] == '/')
		return strdup(link);
	return asprintf(&p, "%s/%s", dir, link) < 0 ? NULL : p;
}

/*
 * A folder, open (O_PATH) at a descriptor above 2: a struct trace_out zeroed by its caller reads
 * as holding none (dir 0), so descriptor 0 is never one (a daemon may have closed its stdin).
 */
static int open_folder(const char *dir)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), high;

	if (fd < 0 || fd > 2)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return high;
}

/* One hop of resolve: what name in folder dir is. 1: a link to follow (*next), 0: the place. */
static int hop(struct trace_out *t, const char *dir, bool followed, struct stat *entry, char **next)
{
	struct stat at;
	char link[PATH_MAX];
	ssize_t n;

	if (!*t->name || !strcmp(t->name, ".") || !strcmp(t->name, ".."))
		return errno = EISDIR, -1;
	if ((t->dir = open_folder(dir)) < 0)
		return -1;
	if (fstatat(t->dir, t->name, &at, AT_SYMLINK_NOFOLLOW)) {
		if (errno != ENOENT)
			return -1;
		*entry = (struct stat){0}; /* nothing yet: a new file */
		return 0;
	}
	if (judge(t->dir, &at))
		return -1;
	if (S_ISDIR(at.st_mode))
		return errno = EISDIR, -1;
	if (S_ISLNK(at.st_mode) && !fstatat(t->dir, t->name, entry, 0)) {
		if (!S_ISREG(entry->st_mode))
			return 0; /* a device or fifo, opened through the link (/dev/stdout) */
		n = readlinkat(t->dir, t->name, link, sizeof(link) - 1);
		if (n < 0)
			return -1;
		link[n] = '\0';
		return (*next = link_path(dir, link)) ? 1 : -1;
	}
	/* The entry itself: a file or a device (followed to: one we may write as ourselves), or a
	 * dangling link, replaced by the file. */
	if (followed && !S_ISLNK(at.st_mode) && faccessat(t->dir, t->name, W_OK, AT_EACCESS))
		return -1;
	*entry = at;
	return 0;
}

/*
 * Where target goes: t->dir (its folder, open) and t->name there, t->path for the messages;
 * *entry the entry there as it is now (st_mode 0: none yet). -1 with errno set.
 */
static int resolve(struct trace_out *t, const char *target, struct stat *entry)
{
	char *path = strdup(target), *dir = NULL, *next = NULL;
	int r = -1;

	for (int hops = 0; path && hops <= HOPS_MAX; hops++) {
		free(t->name);
		t->name = NULL;
		if (t->dir > 0)
			close(t->dir);
		t->dir = -1;
		if (split(path, &dir, &t->name))
			break;
		r = hop(t, dir, hops > 0, entry, &next);
		free(dir);
		dir = NULL;
		if (r <= 0)
			break;
		free(path);
		path = next;
		r = -1;
		errno = ELOOP; /* past HOPS_MAX */
	}
	if (!r) {
		t->path = path;
		return 0;
	}
	{
		int e = path ? errno : ENOMEM;

		free(path);
		errno = e;
	}
	return -1;
}

/* The path of name beside t->path (in its folder), for the messages and for a guard. */
static char *beside(const struct trace_out *t, const char *name)
{
	const char *slash = strrchr(t->path, '/');
	int len = slash ? (int)(slash - t->path) + 1 : 0;
	char *p;

	return asprintf(&p, "%.*s%s", len, t->path, name) < 0 ? NULL : p;
}

/*
 * A new file beside the target, created exclusively in its folder (.NAME.XXXXXX: no planted
 * link is followed) with the mode of the file it replaces, or a new file's under the umask. -1
 * with errno set.
 */
static int open_temp(struct trace_out *t, const struct stat *replaced)
{
	mode_t mask = umask(0), mode;
	int fd = -1, e;

	umask(mask);
	mode = S_ISREG(replaced->st_mode) ? replaced->st_mode & 0777 : 0666 & ~mask;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		uint64_t r;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r) ||
		    asprintf(&t->temp_name, ".%s.%06llx", t->name,
			     (unsigned long long)(r & 0xffffff)) < 0) {
			t->temp_name = NULL;
			return -1;
		}
		fd = openat(t->dir, t->temp_name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			e = errno;
			free(t->temp_name);
			t->temp_name = NULL;
			if (e != EEXIST)
				return errno = e, -1;
		}
	}
	if (fd < 0)
		return errno = EEXIST, -1;
	if (!fchmod(fd, mode) && (t->temp = beside(t, t->temp_name)))
		return fd;
	e = errno;
	close(fd);
	unlinkat(t->dir, t->temp_name, 0);
	free(t->temp_name);
	t->temp_name = NULL;
	return errno = e, -1;
}

/* An existing device or fifo, written in place: the very one judged (a link to it followed:
 * /dev/stdout's target may be a pipe, which has no path). */
static int open_in_place(struct trace_out *t, const struct stat *entry)
{
	struct stat st;
	int fd = openat(t->dir, t->name, O_WRONLY | O_CLOEXEC);

	if (fd >= 0 &&
	    (fstat(fd, &st) || st.st_dev != entry->st_dev || st.st_ino != entry->st_ino)) {
		close(fd);
		return errno = EAGAIN, -1; /* swapped since it was judged */
	}
	return fd;
}

int trace_out_writable(const char *target)
{
	struct trace_out t = {.dir = -1};
	struct stat entry;
	int r;

	if (!strcmp(target, "-"))
		return 0;
	r = resolve(&t, target, &entry);
	if (!r && (S_ISREG(entry.st_mode) || !entry.st_mode || S_ISLNK(entry.st_mode)))
		r = faccessat(t.dir, ".", W_OK | X_OK, AT_EACCESS);
	else if (!r)
		r = faccessat(t.dir, t.name, W_OK, AT_EACCESS);
	{
		int e = errno;

		trace_out_abort(&t);
		errno = e;
	}
	return r;
}

bool trace_out_zstd_name(const char *target)
{
	size_t n = strlen(target);

	return n > 4 && !strcmp(target + n - 4, ".zst");
}

int trace_out_open(struct trace_out *t, const char *target, bool compress)
{
	struct stat entry;
	int fd = -1;

	*t = (struct trace_out){.target = target, .dir = -1};
	if (!strcmp(target, "-"))
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	else if (resolve(t, target, &entry))
		fd = -1;
	else if (entry.st_mode && !S_ISREG(entry.st_mode) && !S_ISLNK(entry.st_mode))
		fd = open_in_place(t, &entry); /* a device or a fifo: never created */
	else if ((fd = open_temp(t, &entry)) >= 0 &&
		 (t->sync_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
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
	if (t->temp)
		track(t, true);
	return 0;
}

/* The target as it is, a regular file, moves to NAME.old in its folder (a link there is
 * replaced, never followed). 0 when there is none to keep; -1 with errno set. */
static int keep_as_old(struct trace_out *t)
{
	struct stat st;
	char *old;
	int r;

	if (fstatat(t->dir, t->name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		return 0;
	if (asprintf(&old, "%s.old", t->name) < 0)
		return -1;
	r = renameat(t->dir, t->name, t->dir, old);
	if (!r)
		t->old = old;
	else
		free(old);
	return r;
}

/* The previous target back from NAME.old (or the target gone, when there was none). */
static void restore_old(struct trace_out *t)
{
	if (!t->old || renameat(t->dir, t->old, t->dir, t->name))
		unlinkat(t->dir, t->name, 0);
	free(t->old);
	t->old = NULL;
}

int trace_out_place(struct trace_out *t, bool keep_old)
{
	int e;

	if (!t->temp)
		return 0; /* written in place already */
	if (keep_old && keep_as_old(t))
		return -1;
	if (renameat(t->dir, t->temp_name, t->dir, t->name)) {
		e = errno;
		if (t->old && !renameat(t->dir, t->old, t->dir, t->name)) {
			free(t->old);
			t->old = NULL;
		}
		return errno = e, -1;
	}
	free(t->temp);
	t->temp = NULL;
	free(t->temp_name);
	t->temp_name = NULL;
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
	if (ok && t->temp &&
	    ((keep_old && keep_as_old(t)) || renameat(t->dir, t->temp_name, t->dir, t->name)))
		ok = false, e = errno;
	if (!ok) {
		if (t->temp && t->old) /* the previous target back where it was */
			renameat(t->dir, t->old, t->dir, t->name);
		trace_out_abort(t);
		errno = e;
		return -1;
	}
	free(t->temp); /* renamed: nothing to remove any more */
	t->temp = NULL;
	free(t->temp_name);
	t->temp_name = NULL;
	free(t->old); /* kept: the previous target stays NAME.old */
	t->old = NULL;
	t->placed = false;
	trace_out_abort(t); /* closes and frees what is left */
	return 0;
}

void trace_out_abort(struct trace_out *t)
{
	track(t, false);
	if (t->f)
		fclose(t->f);
	t->f = NULL;
	free(t->buf);
	t->buf = NULL;
	if (t->sync_fd > 0)
		close(t->sync_fd);
	t->sync_fd = 0;
	if (t->temp_name && t->dir > 0)
		unlinkat(t->dir, t->temp_name, 0);
	free(t->temp_name);
	t->temp_name = NULL;
	free(t->temp);
	t->temp = NULL;
	if (t->placed) /* the target as it was: the previous one back, or none */
		restore_old(t);
	t->placed = false;
	free(t->old);
	t->old = NULL;
	free(t->path);
	t->path = NULL;
	free(t->name);
	t->name = NULL;
	if (t->dir > 0)
		close(t->dir);
	t->dir = -1;
}
