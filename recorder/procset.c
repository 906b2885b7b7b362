/*
 * The processes of a launched command (follow mode): BPF keeps the set (the command from its
 * exec on, every process a member forks; a member that exits leaves), stops a member at each exec
 * until its new program's probes are attached, and maps each thread to its process. Per process
 * (docs/design.md, "Attaching per process"), it also stops each new member at its fork until its
 * links are made, and says when one ends. Here: the user side of that set. See session.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "closuretrace.skel.h"
#include "event.h"
#include "session.h"
#include "proc_mem.h"

#define PROC_PID_INIT_INO 0xEFFFFFFCu /* the initial pid namespace's inode (linux/proc_ns.h) */

/* Whether the kernel is Linux major.minor or later. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a, b;

	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}

/*
 * Whether the probes are attached per process: each link names a traced process, so that no
 * other process pays a trap or has its semaphores raised. It needs uprobe_multi's pid (a link
 * names the process by its id in our namespace, the set keeps the first namespace's) and
 * bpf_send_signal_task (Linux 6.13), which stops a forked process until its links are made; a
 * load that refuses it is tried again without (session_load).
 */
static bool per_process(const struct session *s)
{
	return s->procs.init_pidns && !s->attach.use_libbpf && !s->attach.every_process &&
	       kernel_at_least(6, 13);
}

/* Room for a descriptor per process and object: the soft limit raised to the hard one. */
static void raise_files_limit(void)
{
	struct rlimit r;

	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r); /* the command, already started, keeps its own */
	}
}

int procset_setup(struct session *s)
{
	struct closuretrace_bpf *k = s->skel;
	struct stat ns;

	bpf_program__set_autoload(k->progs.on_fork_stop, false);
	if (!s->procs.follow) {
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
	/* The set's keys are the kernel's first-namespace pids: ours only in that namespace. */
	s->procs.init_pidns = ns.st_ino == PROC_PID_INIT_INO;
	s->procs.per_process = per_process(s);
	k->rodata->per_process = s->procs.per_process;
	bpf_program__set_autoload(k->progs.on_fork, !s->procs.per_process);
	bpf_program__set_autoload(k->progs.on_fork_stop, s->procs.per_process);
	if (s->procs.per_process)
		raise_files_limit();
	return 0;
}

int procset_attach(struct session *s)
{
	struct bpf_program *progs[] = {s->procs.per_process ? s->skel->progs.on_fork_stop
							    : s->skel->progs.on_fork,
				       s->skel->progs.on_exec, s->skel->progs.on_exit};

	for (size_t i = 0; s->procs.follow && i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_link *link = bpf_program__attach(progs[i]);

		if (!link || session_add_link(s, link))
			return -errno;
	}
	/* The command, held before its exec: the links attached next name it. */
	session_attach_process(s, s->pid);
	return 0;
}

/*
 * Threads that the command's processes started are in a BPF map; a thread that is not is a
 * process's first. Cached: a tid is not reused before pid_max others, far more than a run sees.
 */
uint32_t procset_process_of(struct session *s, uint32_t tid)
{
	const uint32_t *known;
	uint32_t pid = tid;

	if (!s->procs.follow || !tid)
		return 0;
	if ((known = hashmap_get(&s->procs.tid_pid, tid, 0)))
		return *known;
	bpf_map__lookup_elem(s->skel->maps.thread_process, &tid, sizeof(tid), &pid, sizeof(pid), 0);
	*(uint32_t *)hashmap_put(&s->procs.tid_pid, tid, 0, NULL) = pid;
	return pid;
}

/*
 * A traced process exec'ed and waits, stopped: attach its program, let it go. Its links follow
 * the task through the exec; when another thread than the first exec'ed, they name a task gone,
 * and are made again.
 */
static void on_exec(struct session *s, const struct ct_proc_event *e)
{
	char exe[4096];

	if ((e->flags & CT_PROC_MOVED) && !s->closing) {
		session_release_process(s, (pid_t)e->pid);
		session_attach_process(s, (pid_t)e->pid);
	}
	if (proc_exe((pid_t)e->pid, exe, sizeof(exe)) && !s->closing)
		session_attach_program(s, exe);
	kill((pid_t)e->pid, SIGCONT);
}

/*
 * Per process: a traced process forked one, held before its first instruction: its links, then
 * let it go. A pid already known is a process that ended unannounced (its record lost).
 */
static void on_fork(struct session *s, const struct ct_proc_event *e)
{
	if (!s->closing) {
		session_release_process(s, (pid_t)e->pid);
		session_attach_process(s, (pid_t)e->pid);
	}
	if (e->flags & CT_PROC_STOPPED)
		kill((pid_t)e->pid, SIGCONT);
}

void procset_on_record(struct session *s, const struct ct_proc_event *e)
{
	if (e->kind == CT_EXEC)
		on_exec(s, e);
	else if (e->kind == CT_FORK)
		on_fork(s, e);
	else if (e->kind == CT_EXIT && !s->closing)
		session_release_process(s, (pid_t)e->pid);
}

void procset_continue(struct session *s)
{
	if (s->procs.pidfd >= 0)
		syscall(SYS_pidfd_send_signal, s->procs.pidfd, SIGCONT, NULL, 0);
}

size_t procset_list(struct session *s, pid_t *pids, size_t max)
{
	__u32 key, next, *prev = NULL;
	size_t n = 0;
	int fd;

	if (!s->procs.follow || !s->skel)
		return 0;
	fd = bpf_map__fd(s->skel->maps.traced);
	while (n < max && !bpf_map_get_next_key(fd, prev, &next)) {
		pids[n++] = (pid_t)next;
		key = next;
		prev = &key;
	}
	return n;
}

bool procset_alive(struct session *s)
{
	pid_t one;

	if (!s->procs.root_exited)
		return true;
	return procset_list(s, &one, 1) > 0;
}

void procset_signal(struct session *s, int sig)
{
	pid_t pids[1024];
	size_t n = s->procs.init_pidns ? procset_list(s, pids, sizeof(pids) / sizeof(pids[0])) : 0;

	if (!s->procs.root_exited && s->procs.pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, s->procs.pidfd, sig, NULL, 0);
		procset_continue(s);
	}
	for (size_t i = 0; i < n; i++) {
		if (pids[i] == s->pid)
			continue;
		kill(pids[i], sig);
		kill(pids[i], SIGCONT); /* one held at an exec gets sig once it runs */
	}
}
