/* A recording session: see session.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "closuretrace.skel.h"
#include "elf_probes.h"
#include "event.h"
#include "session.h"
#include "symbols.h"
#include "trace_writer.h"

#define MAX_OBJECTS    256
#define RESCAN_NS      (100 * 1000 * 1000ull) /* how often the maps are read again (dlopen) */
#define STATUS_NS      (1000 * 1000 * 1000ull)
#define USDT_MAX_SPECS 4096 /* distinct (probe, argument registers) pairs */

uint64_t session_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int session_init(struct session *s, pid_t pid, FILE *out)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	objects_set_process(&s->objects, pid);
	s->out = out;
	s->pidfd = s->sigfd = s->epfd = -1;
	s->syms = symbols_new();
	return s->syms ? 0 : -1;
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int verbose_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

static int on_record(void *ctx, void *data, size_t size);
static int add_link(struct session *s, struct bpf_link *link);

/* Follow mode: the launched command is traced from its exec on, with what it forks. */
static int setup_follow(struct session *s)
{
	struct closuretrace_bpf *k = s->skel;
	struct stat ns;

	if (!s->follow) {
		bpf_program__set_autoload(k->progs.on_fork, false);
		bpf_program__set_autoload(k->progs.on_exec, false);
		bpf_program__set_autoload(k->progs.on_exit, false);
		return 0;
	}
	if (stat("/proc/self/ns/pid", &ns))
		return -errno;
	k->rodata->follow = true;
	k->rodata->pidns_dev = ns.st_dev;
	k->rodata->pidns_ino = ns.st_ino;
	k->rodata->root_pid = (__u32)s->pid;
	return 0;
}

static int attach_follow(struct session *s)
{
	struct bpf_program *progs[] = {s->skel->progs.on_fork, s->skel->progs.on_exec,
				       s->skel->progs.on_exit};

	for (size_t i = 0; s->follow && i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_link *link = bpf_program__attach(progs[i]);

		if (!link || add_link(s, link))
			return -errno;
	}
	return 0;
}

/* Opens and loads the skeleton; without the uprobe_multi programs when s->use_libbpf. */
static int open_and_load(struct session *s, size_t buffer_size)
{
	struct closuretrace_bpf *skel = closuretrace_bpf__open();
	struct bpf_program *multi[3];
	int err;

	if (!skel)
		return -errno;
	s->skel = skel;
	multi[0] = skel->progs.on_op_multi;
	multi[1] = skel->progs.on_module_multi;
	multi[2] = skel->progs.on_loader;
	skel->rodata->wakeup_bytes = buffer_size / 8;
	skel->rodata->stop_on_load = s->stop_on_load;
	err = setup_follow(s);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.events, buffer_size);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.__bpf_usdt_specs, USDT_MAX_SPECS);
	for (int i = 0; i < 2 && !err; i++)
		err = s->use_libbpf ? bpf_program__set_autoload(multi[i], false)
				    : bpf_program__set_expected_attach_type(
					      multi[i], USDT_ATTACH_UPROBE_MULTI);
	if (!err && !s->use_libbpf) /* on_loader: one uprobe, attached like the others */
		err = bpf_program__set_expected_attach_type(multi[2], USDT_ATTACH_UPROBE_MULTI);
	if (!err)
		err = closuretrace_bpf__load(skel);
	return err < 0 ? err : -err;
}

int session_load(struct session *s, size_t buffer_size)
{
	int err;

	libbpf_set_print(s->verbose ? verbose_print : silent_print);
	err = open_and_load(s, buffer_size);
	if (err == -EINVAL && !s->use_libbpf) {
		/* A kernel before 6.6 may refuse the uprobe_multi attach type: libbpf's way. */
		closuretrace_bpf__destroy(s->skel);
		s->skel = NULL;
		s->use_libbpf = true;
		err = open_and_load(s, buffer_size);
	}
	if (!err)
		err = attach_follow(s);
	if (err)
		return err;
	if (bpf_map__value_size(s->skel->maps.__bpf_usdt_specs) != sizeof(struct usdt_spec))
		return -EPROTO; /* libbpf's usdt.bpf.h changed its layout */
	s->multi.specs_fd = bpf_map__fd(s->skel->maps.__bpf_usdt_specs);
	s->multi.max_specs = USDT_MAX_SPECS;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_record, s, NULL);
	return s->rb ? 0 : -errno;
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
	return -1;
}

static int add_link(struct session *s, struct bpf_link *link)
{
	struct bpf_link **v = realloc(s->links, (s->n_links + 1) * sizeof(*v));

	if (!v) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	s->links = v;
	s->links[s->n_links++] = link;
	return 0;
}

static bool already_attached(struct session *s, struct file_id id)
{
	for (size_t i = 0; i < s->n_attached; i++)
		if (s->attached[i].ino == id.ino && s->attached[i].dev == id.dev)
			return true;
	return false;
}

static int add_link_fd(struct session *s, int fd)
{
	int *v = realloc(s->link_fds, (s->n_link_fds + 1) * sizeof(*v));

	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	s->link_fds = v;
	s->link_fds[s->n_link_fds++] = fd;
	return 0;
}

/* Attaches prog to the sites of path whose probe is module (or, with !module, every other). */
static int attach_multi_prog(struct session *s, const char *path, struct elf_site *sites, long n,
			     bool module, int *names)
{
	struct bpf_program *prog =
		module ? s->skel->progs.on_module_multi : s->skel->progs.on_op_multi;
	struct elf_site *mine = calloc(n, sizeof(*mine));
	uint64_t *cookies = calloc(n, sizeof(*cookies));
	bool seen_kind[CT_NR_OPS + 1] = {false};
	size_t k = 0;
	int fd = 0;

	if (!mine || !cookies) {
		fd = -ENOMEM;
		goto out;
	}
	for (long i = 0; i < n; i++) {
		int kind = probe_kind(sites[i].name);

		if (kind < 0 || (kind == CT_MODULE) != module)
			continue; /* a newer library's probe: not ours to interpret */
		mine[k] = sites[i];
		cookies[k++] = (uint64_t)kind;
		*names += !seen_kind[kind];
		seen_kind[kind] = true;
	}
	if (!k)
		goto out;
	/* Follow mode filters processes in BPF: every process that maps path (pid 0: all). */
	fd = usdt_multi_attach(&s->multi, bpf_program__fd(prog), s->follow ? 0 : s->pid, path, mine,
			       cookies, k);
	if (fd >= 0)
		fd = add_link_fd(s, fd);
out:
	free(mine);
	free(cookies);
	return fd;
}

/* Every closure probe of path with two uprobe_multi links. Probe names attached, or -errno. */
static int attach_multi(struct session *s, const char *path)
{
	struct elf_site *sites;
	long n = elf_probe_sites(path, &sites);
	int names = 0, err;

	if (n <= 0)
		return 0;
	err = attach_multi_prog(s, path, sites, n, false, &names);
	if (!err)
		err = attach_multi_prog(s, path, sites, n, true, &names);
	free(sites);
	return err ? err : names;
}

static int attach_libbpf(struct session *s, const char *path)
{
	struct elf_probes probes;
	int attached = 0, err = 0;

	if (elf_probes_read(path, &probes))
		return 0;
	for (size_t i = 0; i < probes.n; i++) {
		int kind = probe_kind(probes.probes[i].name);
		LIBBPF_OPTS(bpf_usdt_opts, opts, .usdt_cookie = kind);
		struct bpf_program *prog =
			kind == CT_MODULE ? s->skel->progs.on_module : s->skel->progs.on_op;
		struct bpf_link *link;

		if (kind < 0)
			continue; /* a newer library's probe: not ours to interpret */
		link = bpf_program__attach_usdt(prog, s->follow ? -1 : s->pid, path, "closure",
						probes.probes[i].name, &opts);
		if (!link) {
			err = -errno;
			if (err == -ESRCH)
				break; /* the process is gone */
			fprintf(stderr, "closuretrace: cannot attach closure:%s in %s: %s\n",
				probes.probes[i].name, path, strerror(errno));
			continue;
		}
		if (add_link(s, link))
			break;
		attached++;
	}
	elf_probes_free(&probes);
	return attached ? attached : err;
}

int session_attach_path(struct session *s, const char *path)
{
	struct file_id id = file_id_of(path), *v;
	int r = -EOPNOTSUPP;

	if (!id.ino || already_attached(s, id))
		return 0;
	v = realloc(s->attached, (s->n_attached + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->attached = v;
	s->attached[s->n_attached++] = id;
	if (!s->use_libbpf) {
		r = attach_multi(s, path);
		/* No uprobe_multi in this kernel (before 6.6): libbpf's way from now on. */
		if ((r == -EINVAL || r == -EOPNOTSUPP || r == -ENOSYS) && !s->n_link_fds)
			s->use_libbpf = true;
		else if (r < 0 && r != -ESRCH)
			fprintf(stderr, "closuretrace: cannot attach the probes in %s: %s\n", path,
				strerror(-r));
	}
	if (s->use_libbpf)
		r = attach_libbpf(s, path);
	if (r > 0)
		s->probes += r;
	if (s->verbose && r > 0)
		fprintf(stderr, "closuretrace: attached %d probes in %s\n", r, path);
	return r;
}

int session_attach_program(struct session *s, const char *path)
{
	char *objs[MAX_OBJECTS];
	size_t n = elf_load_order(path, objs, MAX_OBJECTS);
	int total = 0, err = 0;

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
	char *file = rooted(s->objects.root, exe), *interp = file ? elf_interpreter(file) : NULL;
	char *loader = interp ? rooted(s->objects.root, interp) : NULL;
	uint64_t off = loader ? elf_symbol_offset(loader, "_dl_debug_state") : 0;
	struct bpf_program *prog = s->skel->progs.on_loader;
	int err = 0;

	if (off && !s->use_libbpf) {
		int fd = uprobe_multi_attach(bpf_program__fd(prog), s->pid, loader, &off, NULL,
					     NULL, 1);

		err = fd < 0 ? fd : add_link_fd(s, fd);
	} else if (off) {
		struct bpf_link *link =
			bpf_program__attach_uprobe(prog, false, s->pid, loader, off);

		err = link ? add_link(s, link) : -errno;
	}
	if (s->verbose && off && !err)
		fprintf(stderr, "closuretrace: watching the loader %s\n", loader);
	free(file);
	free(interp);
	free(loader);
	return err;
}

/* --- addresses: each resolved once, written as a sym record --- */

static size_t hash_addr(uint64_t a)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 17);
}

/* Inserts a; false when it was already there. */
static bool seen_insert(struct session *s, uint64_t a)
{
	size_t i;

	if (s->seen_n * 2 >= s->seen_cap) {
		size_t cap = s->seen_cap ? s->seen_cap * 2 : 1024;
		uint64_t *v = calloc(cap, sizeof(*v)), *old = s->seen;

		if (!v)
			return false;
		for (size_t k = 0; k < s->seen_cap; k++) {
			if (!old[k])
				continue;
			for (i = hash_addr(old[k]) & (cap - 1); v[i]; i = (i + 1) & (cap - 1))
				;
			v[i] = old[k];
		}
		free(old);
		s->seen = v;
		s->seen_cap = cap;
	}
	for (i = hash_addr(a) & (s->seen_cap - 1); s->seen[i]; i = (i + 1) & (s->seen_cap - 1))
		if (s->seen[i] == a)
			return false;
	s->seen[i] = a;
	s->seen_n++;
	return true;
}

static bool resolve_and_write(struct session *s, uint64_t addr)
{
	struct sym_info info;

	if (!symbols_resolve(s->syms, addr, &info))
		return false;
	trace_write_sym(s->out, addr, &info);
	return true;
}

static void note_address(struct session *s, uint64_t addr)
{
	if (!addr || !seen_insert(s, addr) || resolve_and_write(s, addr))
		return;
	if (s->n_pending == s->pending_cap) {
		size_t cap = s->pending_cap ? s->pending_cap * 2 : 64;
		uint64_t *v = realloc(s->pending, cap * sizeof(*v));

		if (!v)
			return;
		s->pending = v;
		s->pending_cap = cap;
	}
	s->pending[s->n_pending++] = addr;
}

static void retry_pending(struct session *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n_pending; i++)
		if (!resolve_and_write(s, s->pending[i]))
			s->pending[kept++] = s->pending[i];
	s->n_pending = kept;
}

/* --- objects --- */

/* Makes the objects from index first on known: symbols, a module record, their probes. */
static void learn_objects(struct session *s, size_t first)
{
	for (size_t i = first; i < s->objects.n; i++) {
		struct object *o = &s->objects.v[i];

		if (!o->elf)
			continue;
		symbols_add_object(s->syms, o->path, o->file, o->bias);
		trace_write_module(s->out, o->path, o->bias);
		if (o->has_probes && s->skel)
			session_attach_path(s, o->file);
	}
	if (first < s->objects.n)
		retry_pending(s);
}

/* Whether the process runs s->exe yet (a launched child is our own image until it execs). */
static bool runs_exe(struct session *s)
{
	char link[64], exe[4096];
	ssize_t n;

	if (!s->exe)
		return true;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)s->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n < 0)
		return false;
	exe[n] = '\0';
	return !strcmp(exe, s->exe);
}

void session_scan(struct session *s)
{
	size_t first = s->objects.n;

	if (!runs_exe(s))
		return;

	if (objects_scan_maps(&s->objects, s->pid) > 0)
		learn_objects(s, first);
}

static void on_module(struct session *s, const struct ct_module_event *m)
{
	size_t first = s->objects.n;
	char path[CT_PATH_MAX + 1];
	char *canonical;
	bool added;

	memcpy(path, m->path, CT_PATH_MAX);
	path[m->path_len < CT_PATH_MAX ? m->path_len : CT_PATH_MAX] = '\0';
	if (path[0] != '/')
		return;
	/*
	 * The loader's name may be a symlink (libclosure.so.0): the trace names the file, as the
	 * maps do. Another mount namespace's path cannot be resolved here; objects_add still
	 * knows the file by its identity.
	 */
	canonical = s->objects.root[0] ? NULL : realpath(path, NULL);
	if (objects_add(&s->objects, canonical ? canonical : path, m->base, &added) >= 0 && added)
		learn_objects(s, first);
	free(canonical);
}

/* SIGCONT through the pidfd: the pid may be reaped and reused by now, the pidfd cannot. */
static void continue_process(struct session *s)
{
	if (s->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, s->pidfd, SIGCONT, NULL, 0);
}

/*
 * Follow mode: the process of a thread, for the trace to keep the processes apart. Threads that
 * the command's processes started are in a BPF map; a thread that is not is a process's first.
 * Cached: a tid is not reused before pid_max others, far more than a check sees.
 */
static uint32_t process_of(struct session *s, uint32_t tid)
{
	uint32_t pid = tid;
	size_t i;

	if (!s->follow || !tid)
		return 0;
	if (s->tid_pid_n * 2 >= s->tid_pid_cap) {
		size_t cap = s->tid_pid_cap ? s->tid_pid_cap * 2 : 256;
		uint32_t *v = calloc(cap * 2, sizeof(*v)), *old = s->tid_pid;

		if (!v)
			return 0;
		for (size_t k = 0; k < s->tid_pid_cap; k++) {
			if (!old[2 * k])
				continue;
			for (i = hash_addr(old[2 * k]) & (cap - 1); v[2 * i];
			     i = (i + 1) & (cap - 1))
				;
			v[2 * i] = old[2 * k];
			v[2 * i + 1] = old[2 * k + 1];
		}
		free(old);
		s->tid_pid = v;
		s->tid_pid_cap = cap;
	}
	for (i = hash_addr(tid) & (s->tid_pid_cap - 1); s->tid_pid[2 * i];
	     i = (i + 1) & (s->tid_pid_cap - 1))
		if (s->tid_pid[2 * i] == tid)
			return s->tid_pid[2 * i + 1];
	bpf_map__lookup_elem(s->skel->maps.thread_process, &tid, sizeof(tid), &pid, sizeof(pid), 0);
	s->tid_pid[2 * i] = tid;
	s->tid_pid[2 * i + 1] = pid;
	s->tid_pid_n++;
	return pid;
}

/* Follow mode: a traced process exec'ed and waits, stopped: attach its program, let it go. */
static void on_exec(struct session *s, const struct ct_exec_event *x)
{
	char link[64], exe[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/exe", x->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0 && !s->closing) {
		exe[n] = '\0';
		session_attach_program(s, exe);
	}
	kill((pid_t)x->pid, SIGCONT);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct ct_event *e = data;

	if (size == sizeof(struct ct_exec_event)) {
		on_exec(s, data);
		return 0;
	}
	if (s->closing)
		return 0; /* the trace is complete */
	if (size == sizeof(struct ct_module_event)) {
		on_module(s, data);
		return 0;
	}
	if (size == sizeof(struct ct_loader_event)) {
		session_scan(s);
		if (s->stop_on_load)
			continue_process(s); /* the BPF side stopped it for this */
		return 0;
	}
	if (size < sizeof(*e))
		return 0;
	trace_write_event(s->out, e, s->start_ns, process_of(s, e->tid));
	s->events++;
	note_address(s, e->ip);
	switch (e->kind) {
	case CT_INIT:
		s->live += !e->x5;
		break;
	case CT_FINISH:
		s->live--;
		break;
	case CT_CONTINUE_AT:
	case CT_RUN:
	case CT_DESTRUCTOR:
		note_address(s, e->x4);
		break;
	}
	return 0;
}

/* --- the loop --- */

int session_start(struct session *s, uint64_t start_ns)
{
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t stop;

	s->start_ns = start_ns;
	s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (s->pidfd < 0)
		return -errno;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	s->sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->sigfd < 0 || s->epfd < 0)
		return -errno;
	ev.data.fd = s->pidfd;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->pidfd, &ev);
	ev.data.fd = s->sigfd;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev);
	ev.data.fd = ring_buffer__epoll_fd(s->rb);
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	return 0;
}

static uint64_t read_stat(struct session *s, __u32 slot)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t total = 0;
	__u64 *v;

	if (ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return 0;
	if (!bpf_map__lookup_elem(s->skel->maps.stats, &slot, sizeof(slot), v, ncpu * sizeof(*v),
				  0))
		for (int i = 0; i < ncpu; i++)
			total += v[i];
	free(v);
	return total;
}

static void show_status(struct session *s, uint64_t now, uint64_t *last_ns, uint64_t *last_events)
{
	double secs = (now - *last_ns) / 1e9;

	fprintf(stderr, "\rclosuretrace: %.0f events/s, %llu events, %llu lost, %lld live\033[K",
		(s->events - *last_events) / (secs > 0 ? secs : 1), (unsigned long long)s->events,
		(unsigned long long)read_stat(s, CT_STAT_LOST), (long long)s->live);
	*last_ns = now;
	*last_events = s->events;
}

/* After a stop signal, a launched command gets the same signal; give it a moment to exit. */
static void wait_child_exit(struct session *s)
{
	uint64_t deadline = session_now_ns() + 2000000000ull;

	kill(s->pid, s->stop_signal);
	while (session_now_ns() < deadline) {
		struct epoll_event ev[3];
		int n = epoll_wait(s->epfd, ev, 3, 10);

		ring_buffer__consume(s->rb);
		for (int i = 0; i < n; i++)
			if (ev[i].data.fd == s->pidfd)
				return;
	}
}

enum session_end session_run(struct session *s, uint64_t duration_ns)
{
	uint64_t begin = session_now_ns(), last_scan = begin, last_status = begin, last_events = 0;
	bool status = !s->quiet && isatty(STDERR_FILENO);
	enum session_end end;

	for (;;) {
		struct epoll_event ev[3];
		int n = epoll_wait(s->epfd, ev, 3, 10);
		uint64_t now;

		ring_buffer__consume(s->rb);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == s->pidfd) {
				end = SESSION_EXIT;
				goto out;
			}
			if (ev[i].data.fd == s->sigfd) {
				struct signalfd_siginfo si;

				if (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
					s->stop_signal = (int)si.ssi_signo;
					end = SESSION_SIGNAL;
					if (s->launched)
						wait_child_exit(s);
					goto out;
				}
			}
		}
		now = session_now_ns();
		if (duration_ns && now - begin >= duration_ns) {
			end = SESSION_DURATION;
			s->stop_signal = SIGTERM; /* a launched command ends with its recording */
			if (s->launched)
				wait_child_exit(s);
			goto out;
		}
		if (now - last_scan >= RESCAN_NS) {
			session_scan(s);
			last_scan = now;
		}
		if (status && now - last_status >= STATUS_NS)
			show_status(s, now, &last_status, &last_events);
	}
out:
	ring_buffer__consume(s->rb);
	if (status)
		fputs("\r\033[K", stderr);
	return end;
}

uint64_t session_finish(struct session *s)
{
	uint64_t lost_modules;

	ring_buffer__consume(s->rb);
	if (s->n_pending)
		session_scan(s); /* still alive after a signal or --duration: maps are there */
	retry_pending(s);
	lost_modules = read_stat(s, CT_STAT_LOST_MODULES);
	if (lost_modules)
		fprintf(stderr,
			"closuretrace: warning: %llu module records lost (ring buffer full); some "
			"call sites may lack file:line: try a larger --buffer-size\n",
			(unsigned long long)lost_modules);
	return read_stat(s, CT_STAT_LOST);
}

void session_close(struct session *s)
{
	for (size_t i = 0; i < s->n_link_fds; i++)
		close(s->link_fds[i]);
	free(s->link_fds);
	usdt_multi_free(&s->multi);
	/* libbpf's links: each detach waits for an RCU grace period (0.1-0.25 s measured here). */
	for (size_t i = 0; i < s->n_links; i++)
		bpf_link__destroy(s->links[i]);
	if (s->stop_on_load)
		continue_process(s); /* never leave it stopped at a loader change */
	free(s->links);
	/*
	 * Follow mode: a process of the command that exec'ed since the last read (one that outlived
	 * it) waits, stopped, for a SIGCONT. The programs are detached now: let the last ones go.
	 */
	if (s->follow && s->rb) {
		s->closing = true;
		ring_buffer__consume(s->rb);
	}
	free(s->attached);
	ring_buffer__free(s->rb);
	closuretrace_bpf__destroy(s->skel);
	symbols_free(s->syms);
	objects_free(&s->objects);
	free(s->seen);
	free(s->pending);
	free(s->tid_pid);
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->epfd >= 0)
		close(s->epfd);
}
