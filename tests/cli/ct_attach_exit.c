/*
 * A target for `record -p` that exits while closuretrace attaches to it, at a chosen point, every
 * time (issue 12 item 10, and the attach errors of a target that is gone):
 *
 *   ct_attach_exit WHEN REAP PLACE DIR
 *
 * prints the target's pid, then waits for standard input to close. In the target's own mount
 * namespace a file of DIR is bind-mounted over a file the target maps, so the recorder, which
 * reads the target's files through /proc/PID/root, opens that cover and nobody else does. This
 * program holds an fanotify permission mark on the cover: each open of it waits, in the kernel,
 * for this program's answer. At the chosen open the target is killed, and only once it has exited
 * is the open let go on; every other open is let go at once:
 *   WHEN scan      the first open (the recorder checking -p's target, before anything loads)
 *   WHEN attached  the first open once the dynamic loader is watched (its uprobe is in place:
 *                  the byte at _r_debug.r_brk is an int3), i.e. as recording is about to begin
 *   WHEN N         the N-th open once the loader is watched (N >= 1; 1 is "attached")
 *   REAP zombie    the target stays a zombie until standard input closes
 *   REAP reaped    the target is reaped at once
 *   PLACE below    the target maps DIR/data below libclosure, covered by a file of zeros: the
 *                  recorder reads it first, and cannot read libclosure once the target is gone
 *   PLACE above    the same, above libclosure: libclosure is read, with its probes, before
 *   PLACE lib      libclosure itself is covered by a copy: with WHEN N, the target dies at each
 *                  of the recorder's opens of it in turn, up to the one just before its attach
 * The recorder reads the maps in address order; the place is chosen, never left to the kernel's
 * layout, so that each run takes the same path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <closure.h>

static void die(const char *what)
{
	fprintf(stderr, "ct_attach_exit: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Whether the loader's breakpoint function in pid holds an int3: a uprobe is attached there. */
static bool loader_watched(pid_t pid)
{
	unsigned char byte = 0;
	struct iovec local = {&byte, 1}, remote = {(void *)_r_debug.r_brk, 1};

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != 1)
		die("process_vm_readv");
	return byte == 0xcc;
}

/* libclosure's pages and its file name. */
struct span {
	uintptr_t lo, hi;
	char name[PATH_MAX];
};

static int find_span(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t in = (uintptr_t)closure_sync, lo = UINTPTR_MAX, hi = 0;
	struct span *sp = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (start < lo)
			lo = start;
		if (start + ph->p_memsz > hi)
			hi = start + ph->p_memsz;
	}
	if (in < lo || in >= hi)
		return 0;
	sp->lo = lo & ~(uintptr_t)4095;
	sp->hi = (hi + 4095) & ~(uintptr_t)4095;
	if (!realpath(info->dlpi_name, sp->name)) /* the name the maps show */
		die(info->dlpi_name);
	return 1;
}

/*
 * Maps fd's first page below or above libclosure's pages: at the free page nearest to them, found
 * by trying the page just past each mapping's edge, walking away from libclosure (the pages right
 * beside it may be taken, e.g. by a sanitizer's large reservations).
 */
static void map_beside_libclosure(const struct span *sp, int fd, bool above)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	uintptr_t edges[4096], lo, hi;
	size_t n = 0;

	if (!maps)
		die("/proc/self/maps");
	while (n < sizeof(edges) / sizeof(edges[0]) &&
	       fscanf(maps, "%lx-%lx%*[^\n]", &lo, &hi) == 2)
		if (above ? hi >= sp->hi : lo <= sp->lo)
			edges[n++] = above ? hi : lo - 4096;
	fclose(maps);
	/* The maps are in address order: above, walk them forwards; below, backwards. */
	for (size_t i = 0; i < n; i++) {
		uintptr_t at = edges[above ? i : n - 1 - i];

		if (mmap((void *)at, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0) !=
		    MAP_FAILED)
			return;
		if (errno != EEXIST)
			break;
	}
	die("mmap beside libclosure");
}

static void copy_file(const char *from, int to)
{
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || sendfile(to, fd, NULL, (size_t)st.st_size) != st.st_size)
		die(from);
	close(fd);
}

/*
 * A private mount namespace where a file the process maps is covered by DIR/cover: DIR/data
 * (mapped beside libclosure here), or libclosure itself. Returns the cover's path.
 */
static char *cover_mapped_file(const char *dir, const char *place)
{
	struct span sp;
	char *data, *cover;
	int fd;

	if (!dl_iterate_phdr(find_span, &sp))
		die("libclosure's mappings");
	if (asprintf(&data, "%s/data", dir) < 0 || asprintf(&cover, "%s/cover", dir) < 0)
		die("asprintf");
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("a private mount namespace");
	fd = open(cover, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die(cover);
	if (!strcmp(place, "lib")) {
		copy_file(sp.name, fd);
		free(data);
		data = strdup(sp.name);
	} else {
		int mapped = open(data, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (mapped < 0 || ftruncate(mapped, 4096) || ftruncate(fd, 4096))
			die(data);
		map_beside_libclosure(&sp, mapped, !strcmp(place, "above"));
		close(mapped);
	}
	close(fd);
	if (!data || mount(cover, data, NULL, MS_BIND, NULL))
		die("the file over the mapped one");
	free(data);
	return cover;
}

/* The target: a process with libclosure loaded, doing nothing until it is killed. */
static void target(int ready)
{
	struct closure cl;

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test's kill of its parent */
	closure_init_stack(&cl);	  /* libclosure stays a needed library */
	closure_sync(&cl);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

struct opens {
	pid_t pid;
	long when; /* 0: the first open; N: the N-th once the loader is watched */
	bool reap;
	long seen; /* opens once the loader is watched */
	bool done; /* the target was killed */
};

/* One open of the cover, waiting for the answer: at the chosen one, the target dies first. */
static void on_open(struct opens *o, int fan, const struct fanotify_event_metadata *m)
{
	struct fanotify_response allow = {m->fd, FAN_ALLOW};
	siginfo_t si;

	if (!o->done && (!o->when || (loader_watched(o->pid) && ++o->seen == o->when))) {
		kill(o->pid, SIGKILL);
		/* Exited before the recorder goes on: a zombie, or reaped. */
		if (waitid(P_PID, (id_t)o->pid, &si, WEXITED | (o->reap ? 0 : WNOWAIT)))
			die("waitid");
		o->done = true;
	}
	if (write(fan, &allow, sizeof(allow)) != sizeof(allow))
		die("fanotify response");
	close(m->fd);
}

/* Answers the opens of the cover until standard input closes. */
static void serve_opens(int fan, struct opens *o)
{
	struct pollfd p[2] = {{fan, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
	char buf[4096] __attribute__((aligned(8)));

	for (;;) {
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (p[1].revents && read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
			return;
		if (!p[0].revents)
			continue;
		n = read(fan, buf, sizeof(buf));
		if (n < 0)
			die("fanotify read");
		for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, n);
		     m = FAN_EVENT_NEXT(m, n))
			if (m->fd >= 0)
				on_open(o, fan, m);
	}
}

int main(int argc, char **argv)
{
	struct opens o = {0};
	int ready[2], fan;
	char c, *cover, *end;

	o.when = strtol(argv[1] ? argv[1] : "", &end, 10);
	if (!strcmp(argv[1] ? argv[1] : "", "attached"))
		o.when = 1;
	else if (strcmp(argv[1] ? argv[1] : "", "scan") && (*end || o.when < 1))
		o.when = -1;
	if (argc != 5 || o.when < 0 || (strcmp(argv[2], "zombie") && strcmp(argv[2], "reaped")) ||
	    (strcmp(argv[3], "below") && strcmp(argv[3], "above") && strcmp(argv[3], "lib"))) {
		fprintf(stderr, "usage: ct_attach_exit scan|attached|N zombie|reaped "
				"below|above|lib DIR\n");
		return 2;
	}
	o.reap = !strcmp(argv[2], "reaped");
	cover = cover_mapped_file(argv[4], argv[3]);
	fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
	if (fan < 0 || fanotify_mark(fan, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, cover))
		die("fanotify on the cover");
	if (pipe2(ready, O_CLOEXEC))
		die("pipe2");
	o.pid = fork();
	if (o.pid < 0)
		die("fork");
	if (!o.pid)
		target(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		die("the target did not start");
	printf("%d\n", (int)o.pid);
	fflush(stdout);
	serve_opens(fan, &o);
	kill(o.pid, SIGKILL);
	waitpid(o.pid, NULL, 0);
	free(cover);
	return 0;
}
