/* Probe discovery and attachment: see session.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "closuretrace.skel.h"
#include "elf_probes.h"
#include "event.h"
#include "object_open.h"
#include "proc_mem.h"
#include "session.h"
#include "trace_text.h"

#define MAX_OBJECTS 256

bool session_process_gone(pid_t pid)
{
	unsigned long flags;
	char state;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	state = proc_state(pid, &flags);
	return state == 'Z' || state == 'X';
}

/*
 * Whether a failure to attach is worth a word: not when the one process recorded (-p) has
 * exited meanwhile, since its files then vanish from under /proc/PID/root and its pid from the
 * kernel; the recorder says once that the process exited (issue 12 item 10).
 */
static bool attach_error_to_say(struct session *s, int err)
{
	return err != -ESRCH && (s->procs.follow || !session_process_gone(s->pid));
}

/* The probe names of the contract (closure_probes.h), indexed by enum ct_probe. */
static int probe_kind(const char *name)
{
	static const char *const names[CT_NR_OPS + 1] = {
#define PROBE_NAME(name, NAME, a4, a5, a6) [CT_##NAME] = #name,
		CLOSURE_PROBE_LIST(PROBE_NAME)
#undef PROBE_NAME
			[CT_MODULE] = "module",
	};

	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(names[i], name))
			return i;
	return strcmp(name, "batch") ? -1 : CT_BATCH;
}

int session_add_link(struct session *s, struct bpf_link *link)
{
	struct bpf_link **v = realloc(s->attach.links, (s->attach.n_links + 1) * sizeof(*v));

	if (!v) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	s->attach.links = v;
	s->attach.links[s->attach.n_links++] = link;
	return 0;
}

static bool already_attached(struct session *s, struct file_id id)
{
	for (size_t i = 0; i < s->attach.n_files; i++)
		if (s->attach.files[i].ino == id.ino && s->attach.files[i].dev == id.dev)
			return true;
	return false;
}

/* A uprobe_multi link of the process pid (0: not of one process), kept; fd taken either way. */
static int add_link_fd(struct session *s, int fd, pid_t pid)
{
	size_t n = s->attach.n_link_fds + 1;
	int *v = realloc(s->attach.link_fds, n * sizeof(*v));
	pid_t *p = v ? realloc(s->attach.link_pids, n * sizeof(*p)) : NULL;

	if (v)
		s->attach.link_fds = v;
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	s->attach.link_pids = p;
	s->attach.link_fds[n - 1] = fd;
	s->attach.link_pids[n - 1] = pid;
	s->attach.n_link_fds = n;
	return 0;
}

/*
 * Whether this recording attaches the probe kind: module always; then either batch (the library
 * hands its records over in batches) or the per-operation probes, never both.
 */
static bool attaches(const struct session *s, int kind)
{
	return kind == CT_MODULE || (kind == CT_BATCH) == s->batches.on;
}

/*
 * Batches are used when a libclosure of the process has the batch probe and the per-operation
 * probes were not asked for. The inline get and put of every object then record through the
 * library too, so no per-operation probe is attached anywhere: no trap at all. Decided from all
 * of a program's objects before any is attached.
 */
void session_detect_batch(struct session *s, const char *path)
{
	struct elf_site *sites;
	long n;

	if (s->opts->per_op || s->opts->stacks || s->batches.on)
		return; /* --stacks: a stack is taken by the per-operation probes only */
	n = elf_probe_sites(path, &sites);
	for (long i = 0; i < n; i++)
		s->batches.on |= !strcmp(sites[i].name, "batch");
	if (n > 0)
		free(sites);
}

/*
 * Every closure probe of path that this recording attaches, with one uprobe_multi link of
 * on_probe_multi for the process pid (0: every process that maps path), each site's kind its
 * cookie. Probe names attached, or -errno.
 */
static int attach_multi(struct session *s, const char *path, pid_t pid)
{
	struct elf_site *sites, *mine = NULL;
	long n = elf_probe_sites(path, &sites);
	uint64_t *cookies = NULL;
	bool seen_kind[CT_BATCH + 1] = {false};
	int names = 0, fd = 0;
	size_t k = 0;

	if (n <= 0)
		return 0;
	mine = calloc(n, sizeof(*mine));
	cookies = calloc(n, sizeof(*cookies));
	if (!mine || !cookies) {
		fd = -ENOMEM;
		goto out;
	}
	for (long i = 0; i < n; i++) {
		int kind = probe_kind(sites[i].name);

		if (kind < 0 || !attaches(s, kind))
			continue; /* a newer library's probe: not ours to interpret */
		mine[k] = sites[i];
		cookies[k++] = (uint64_t)kind;
		names += !seen_kind[kind];
		seen_kind[kind] = true;
	}
	if (!k)
		goto out;
	fd = usdt_multi_attach(&s->attach.multi, bpf_program__fd(s->skel->progs.on_probe_multi),
			       pid, path, mine, cookies, k);
	if (fd >= 0)
		fd = add_link_fd(s, fd, pid);
out:
	free(mine);
	free(cookies);
	free(sites);
	return fd < 0 ? fd : names;
}

/*
 * path's links: per process one for each traced process (a process that ended meanwhile is
 * passed over), else one for the process recorded, or, following, one for every process that
 * maps it (filtered in BPF by the set of traced processes). Probe names attached, or -errno.
 */
static int attach_each(struct session *s, const char *path)
{
	int r = 0;

	if (!s->procs.per_process)
		return attach_multi(s, path, s->procs.follow ? 0 : s->pid);
	for (size_t i = 0; i < s->attach.n_pids; i++) {
		int one = attach_multi(s, path, s->attach.pids[i]);

		if (one != -ESRCH && r <= 0)
			r = one;
	}
	return r;
}

/* file: the object as opened (/proc/self/fd/N); path: its name in messages. */
static int attach_libbpf(struct session *s, const char *file, const char *path)
{
	struct elf_probes probes;
	int attached = 0, err = 0;
	char shown[PATH_MAX * TEXT_ESCAPE_MAX]; /* a path the process chose */

	if (elf_probes_read(file, &probes))
		return 0;
	for (size_t i = 0; i < probes.n; i++) {
		int kind = probe_kind(probes.probes[i].name);
		LIBBPF_OPTS(bpf_usdt_opts, opts, .usdt_cookie = kind);
		struct bpf_link *link;

		if (kind < 0 || !attaches(s, kind))
			continue; /* a newer library's probe: not ours to interpret */
		link = bpf_program__attach_usdt(s->skel->progs.on_probe,
						s->procs.follow ? -1 : s->pid, file, "closure",
						probes.probes[i].name, &opts);
		if (!link) {
			err = -errno;
			if (!attach_error_to_say(s, err))
				break; /* the process is gone */
			fprintf(stderr, "closuretrace: cannot attach closure:%s in %s: %s\n",
				probes.probes[i].name, text_visible(shown, sizeof(shown), path),
				strerror(errno));
			continue;
		}
		if (session_add_link(s, link))
			break;
		attached++;
	}
	elf_probes_free(&probes);
	return attached ? attached : err;
}

/* The file id, attached; per process its descriptor fd kept (taken either way). 0 or -ENOMEM. */
static int add_file(struct session *s, struct file_id id, int fd)
{
	size_t n = s->attach.n_files + 1;
	struct file_id *v = realloc(s->attach.files, n * sizeof(*v));
	int *fds = v ? realloc(s->attach.file_fds, n * sizeof(*fds)) : NULL;

	if (v)
		s->attach.files = v;
	if (!fds) {
		close(fd);
		return -ENOMEM;
	}
	s->attach.file_fds = fds;
	s->attach.files[n - 1] = id;
	s->attach.file_fds[n - 1] = s->procs.per_process ? fd : -1;
	s->attach.n_files = n;
	if (!s->procs.per_process)
		close(fd);
	return 0;
}

int session_attach_path(struct session *s, const char *path)
{
	int r = -EOPNOTSUPP, fd = object_open(path);
	char opened[32], shown[PATH_MAX * TEXT_ESCAPE_MAX]; /* a path the process chose */
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	/*
	 * The probes are read and attached through the descriptor opened here: the path may name
	 * another file (a FIFO) by the time a second open would look it up.
	 */
	snprintf(opened, sizeof(opened), "/proc/self/fd/%d", fd);
	if (already_attached(s, (struct file_id){st.st_dev, st.st_ino})) {
		close(fd);
		return 0;
	}
	if (!s->attach.use_libbpf) {
		r = attach_each(s, opened);
		/* No uprobe_multi in this kernel (before 6.6): libbpf's way from now on. */
		if ((r == -EINVAL || r == -EOPNOTSUPP || r == -ENOSYS) && !s->attach.n_link_fds)
			s->attach.use_libbpf = true;
		else if (r < 0 && attach_error_to_say(s, r))
			fprintf(stderr, "closuretrace: cannot attach the probes in %s: %s\n",
				text_visible(shown, sizeof(shown), path), strerror(-r));
	}
	if (s->attach.use_libbpf)
		r = attach_libbpf(s, opened, path);
	/* The descriptor stays open per process: the processes to come link it through it. */
	if (add_file(s, (struct file_id){st.st_dev, st.st_ino}, fd))
		return -ENOMEM;
	if (r > 0)
		s->attach.probes += r;
	if (s->opts->verbose && r > 0)
		fprintf(stderr, "closuretrace: attached %d probes in %s%s\n", r,
			text_visible(shown, sizeof(shown), path),
			s->batches.on ? " (batched)" : "");
	return r;
}

void session_attach_process(struct session *s, pid_t pid)
{
	pid_t *v;
	int err;

	if (!s->procs.per_process ||
	    !(v = realloc(s->attach.pids, (s->attach.n_pids + 1) * sizeof(*v))))
		return;
	s->attach.pids = v;
	s->attach.pids[s->attach.n_pids++] = pid;
	for (size_t i = 0; i < s->attach.n_files && !s->attach.use_libbpf; i++) {
		char opened[32];

		if (s->attach.file_fds[i] < 0)
			continue;
		snprintf(opened, sizeof(opened), "/proc/self/fd/%d", s->attach.file_fds[i]);
		err = attach_multi(s, opened, pid);
		if (err < 0 && err != -ESRCH) /* -ESRCH: it ended meanwhile */
			fprintf(stderr,
				"closuretrace: cannot attach the probes for process %d: %s; its "
				"events are missed\n",
				(int)pid, strerror(-err));
	}
}

void session_release_process(struct session *s, pid_t pid)
{
	size_t kept = 0, n = 0;
	int *gone = s->procs.per_process ? calloc(s->attach.n_link_fds + 1, sizeof(*gone)) : NULL;

	if (!gone)
		return;
	for (size_t i = 0; i < s->attach.n_pids; i++)
		if (s->attach.pids[i] != pid)
			s->attach.pids[kept++] = s->attach.pids[i];
	s->attach.n_pids = kept;
	kept = 0;
	for (size_t i = 0; i < s->attach.n_link_fds; i++) {
		if (s->attach.link_pids[i] == pid) {
			gone[n++] = s->attach.link_fds[i];
			continue;
		}
		s->attach.link_fds[kept] = s->attach.link_fds[i];
		s->attach.link_pids[kept++] = s->attach.link_pids[i];
	}
	s->attach.n_link_fds = kept;
	session_detach_links(s, gone, n);
	free(gone);
}

void session_attach_free(struct session *s)
{
	for (size_t i = 0; i < s->attach.n_files; i++)
		if (s->attach.file_fds[i] >= 0)
			close(s->attach.file_fds[i]);
	free(s->attach.files);
	free(s->attach.file_fds);
	free(s->attach.pids);
	s->attach.files = NULL, s->attach.file_fds = NULL, s->attach.pids = NULL;
	s->attach.n_files = s->attach.n_pids = 0;
}

int session_attach_program(struct session *s, const char *path)
{
	char *objs[MAX_OBJECTS];
	size_t n = elf_load_order(path, objs, MAX_OBJECTS);
	int total = 0, err = 0;

	for (size_t i = 0; i < n; i++)
		if (elf_has_closure_probes(objs[i]))
			session_detect_batch(s, objs[i]);
	for (size_t i = 0; i < n; i++) {
		int r = elf_has_closure_probes(objs[i]) ? session_attach_path(s, objs[i]) : 0;

		if (r > 0)
			total += r;
		else if (r < 0)
			err = r;
		free(objs[i]);
	}
	return total ? total : err;
}

/* root + path, malloc'ed (NULL when out of memory). */
static char *rooted(const char *root, const char *path)
{
	char *p;

	return asprintf(&p, "%s%s", root, path) < 0 ? NULL : p;
}

int session_watch_loader(struct session *s, const char *exe)
{
	/* Its paths are of its mount namespace: read through /proc/PID/root when not ours. */
	char *file = rooted(s->addr.objects.root, exe),
	     *interp = file ? elf_interpreter(file) : NULL;
	char *loader = interp ? rooted(s->addr.objects.root, interp) : NULL;
	uint64_t off = loader ? elf_symbol_offset(loader, "_dl_debug_state") : 0;
	struct bpf_program *prog = s->skel->progs.on_loader;
	int err = 0;

	if (off && !s->attach.use_libbpf) {
		int fd = uprobe_multi_attach(bpf_program__fd(prog), s->pid, loader, &off, NULL,
					     NULL, 1);

		err = fd < 0 ? fd : add_link_fd(s, fd, 0); /* not one process's: kept to the end */
	} else if (off) {
		struct bpf_link *link =
			bpf_program__attach_uprobe(prog, false, s->pid, loader, off);

		err = link ? session_add_link(s, link) : -errno;
	}
	if (s->opts->verbose && off && !err) {
		char shown[PATH_MAX * TEXT_ESCAPE_MAX]; /* the program's PT_INTERP */

		fprintf(stderr, "closuretrace: watching the loader %s\n",
			text_visible(shown, sizeof(shown), loader));
	}
	free(file);
	free(interp);
	free(loader);
	return err;
}
