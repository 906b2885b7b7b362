/* The recorder's verbs: see recorder.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "closure_batch.h"
#include "proc_mem.h"
#include "check_guard.h"
#include "exit_status.h"
#include "launch.h"
#include "recorder.h"
#include "session.h"
#include "snapshot.h"
#include "snapshot_late.h"
#include "trace_writer.h"

#define UPROBE_SYSFS "/sys/bus/event_source/devices/uprobe"
#define GRACE_NS     (2000000000ull)

struct recorder {
	struct recorder_opts o;
	struct session s;
	struct launch child;
	char *exe;
	int guard;
	uint64_t start_ns;
	bool not_started; /* the command was gone when it was to be let run */
};

/* The process's executable, as an absolute path (NULL when it cannot be read). */
static char *process_exe(pid_t pid)
{
	char buf[4096];

	return proc_exe(pid, buf, sizeof(buf)) ? strdup(buf) : NULL;
}

static bool has_probes(const struct objects *o)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].has_probes)
			return true;
	return false;
}

static int no_process(pid_t pid)
{
	fprintf(stderr, "closuretrace: no process with pid %d; check the pid (ps -p %d)\n",
		(int)pid, (int)pid);
	return EXIT_ENVIRONMENT;
}

/* A process whose executable or maps cannot be read: say why, as it is. */
static int no_user_code(pid_t pid)
{
	int err = errno; /* why the read failed, before /proc/PID/stat is read */
	unsigned long flags;
	char state = proc_state(pid, &flags);

	if (state == 'Z')
		fprintf(stderr,
			"closuretrace: process %d has exited (a zombie its parent has not reaped): "
			"nothing to record\n",
			(int)pid);
	else if (flags & PROC_PF_KTHREAD)
		fprintf(stderr,
			"closuretrace: process %d is a kernel thread: it runs no user code to "
			"record\n",
			(int)pid);
	else if (geteuid() && err != ENOENT)
		return permission_error();
	else if (err == EACCES || err == EPERM)
		/* Root, refused by the kernel's ptrace access check: pid 1 of a container, say. */
		fprintf(stderr,
			"closuretrace: process %d cannot be read even by root here: it holds "
			"capabilities this closuretrace lacks, or belongs to another user "
			"namespace; run closuretrace where that process was started\n",
			(int)pid);
	else
		fprintf(stderr, "closuretrace: cannot read process %d's executable or maps: %s\n",
			(int)pid, strerror(err));
	return EXIT_ENVIRONMENT;
}

static int exited_early(pid_t pid)
{
	fprintf(stderr, "closuretrace: process %d exited before recording began; nothing written\n",
		(int)pid);
	return EXIT_ENVIRONMENT;
}

/* Checks that a -p target exists and has probes, before anything is loaded: -1 or a status. */
static int check_pid(pid_t pid, char **exe)
{
	struct objects objs = {0};
	int scanned;

	if (kill(pid, 0) && errno == ESRCH)
		return no_process(pid);
	*exe = process_exe(pid);
	scanned = objects_scan_maps(&objs, pid);
	if (scanned < 0 || !*exe) {
		objects_free(&objs);
		if (kill(pid, 0) && errno == ESRCH) /* it exited meanwhile */
			return exited_early(pid);
		return no_user_code(pid);
	}
	scanned = has_probes(&objs);
	objects_free(&objs);
	if (session_process_gone(pid)) /* while its objects were read: they may look probe-less */
		return exited_early(pid);
	if (!scanned)
		return no_probes_in_process(pid);
	return -1;
}

/* The command to run, checked and started held: -1, or an exit status after saying why. */
static int launch(struct recorder *r)
{
	int ret;

	r->exe = launch_resolve(r->o.argv[0]);
	if (!r->exe) {
		fprintf(stderr, "closuretrace: cannot run %s: %s\n", r->o.argv[0], strerror(errno));
		return EXIT_USAGE;
	}
	/* Before the command starts: whatever it forks is then in the guard's process group. */
	r->guard = check_guard_start();
	r->child.stdout_to_stderr = r->o.stdout_to_stderr;
	r->child.stderr_fd = r->o.command_stderr;
	/* --sample: the library samples from its first closure (docs/probes.md). */
	if (r->o.sample_every >= 2) {
		char every[16] = "none";

		if (r->o.sample_every != CLOSURE_SAMPLE_NONE)
			snprintf(every, sizeof(every), "%u", r->o.sample_every);
		setenv(CLOSURE_SAMPLE_ENV, every, 1);
	}
	ret = launch_start(&r->child, r->exe, r->o.argv);
	unsetenv(CLOSURE_SAMPLE_ENV);
	if (ret) {
		fprintf(stderr, "closuretrace: cannot start %s: %s\n", r->exe, strerror(errno));
		return EXIT_ENVIRONMENT;
	}
	return -1;
}

/* Loads the programs and attaches what can be attached before the process runs on. */
static int load_and_attach(struct recorder *r)
{
	struct session *s = &r->s;
	int err = session_load(s);

	if (err)
		return load_error(err);
	if (s->procs.launched) {
		/* Attached now, the command's own probes fire from its first instruction. */
		err = session_attach_program(s, r->exe);
		if (err == -EPERM || err == -EACCES)
			return permission_error();
	}
	err = session_watch_loader(s, r->exe);
	/* A -p target that exits now is said so once recording would begin (recorder_start). */
	if (err && err != -ESRCH && (s->procs.launched || !session_process_gone(s->pid)))
		fprintf(stderr,
			"closuretrace: warning: libraries loaded later (dlopen) may miss "
			"their first events: cannot watch the dynamic loader: %s\n",
			strerror(-err));
	return -1;
}

/*
 * Whether pid writes to our terminal (its standard output or error is the character device of
 * ours): a launched command always does, unless redirected. The live status line, redrawn with
 * \r on one line, would then share that line with the program's own output, so it is left out.
 */
static bool shares_terminal(pid_t pid)
{
	struct stat ours, theirs;
	char path[64];

	if (fstat(STDERR_FILENO, &ours) || !S_ISCHR(ours.st_mode))
		return false;
	for (int fd = 1; fd <= 2; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		if (!stat(path, &theirs) && S_ISCHR(theirs.st_mode) &&
		    theirs.st_rdev == ours.st_rdev)
			return true;
	}
	return false;
}

struct recorder *recorder_new(const struct recorder_opts *o, int *status)
{
	sigset_t stop;
	struct recorder *r = calloc(1, sizeof(*r));
	const char *attach = getenv("CLOSURETRACE_ATTACH");
	int ret = -1;

	if (!r) {
		*status = EXIT_ENVIRONMENT;
		return NULL;
	}
	r->o = *o;
	r->child.gate = r->guard = -1;
	launch_block_stop_signals(&stop); /* from now on a SIGINT or SIGTERM is a stop */
	r->s.procs.pidfd = r->s.loop.sigfd = r->s.loop.epfd = -1;
	if (!r->o.grace_ns)
		r->o.grace_ns = GRACE_NS;
	if (access(UPROBE_SYSFS, F_OK)) {
		fprintf(stderr,
			"closuretrace: this kernel has no uprobes (%s is missing); use a "
			"kernel built with CONFIG_UPROBE_EVENTS=y\n",
			UPROBE_SYSFS);
		ret = EXIT_ENVIRONMENT;
	} else {
		ret = o->pid ? check_pid(o->pid, &r->exe) : launch(r);
	}
	if (ret < 0 && session_init(&r->s, o->pid ? o->pid : r->child.pid, &r->o))
		ret = EXIT_ENVIRONMENT;
	if (ret < 0) {
		struct session *s = &r->s;

		s->loop.quiet = o->quiet || !isatty(STDERR_FILENO) ||
				shares_terminal(o->pid ? o->pid : r->child.pid);
		s->procs.launched = s->procs.follow = s->procs.stop_on_load = !o->pid;
		s->procs.guard = r->guard;
		s->exe = r->exe;
		/* To test the fallbacks: libbpf's per-site perf events even where uprobe_multi
		 * works; links for every process even where they can name each; the exec drain at
		 * the syscalls even where sched_prepare_exec is. */
		s->attach.use_libbpf = attach && !strcmp(attach, "perf");
		s->attach.every_process = attach && !strcmp(attach, "every-process");
		s->batches.exec_syscalls = attach && !strcmp(attach, "exec-syscalls");
		ret = load_and_attach(r);
	}
	if (ret >= 0) {
		*status = ret;
		recorder_free(r);
		return NULL;
	}
	return r;
}

int recorder_start(struct recorder *r, FILE *out, const char *temp_path)
{
	struct session *s = &r->s;
	int err;

	check_guard_unlink(r->guard, temp_path);
	r->start_ns = recorder_now_ns();
	s->out.file = out;
	if (s->out.file) { /* flushed at once: a recorder killed from now on leaves a trace */
		trace_write_header(s->out.file, s->pid, r->exe, (char *const *)r->o.argv,
				   r->start_ns);
		if (fflush(s->out.file))
			s->loop.write_errno =
				errno; /* the loop ends the recording (RECORDER_WRITE) */
	}
	if (s->opts->consumer && s->opts->consumer->start)
		s->opts->consumer->start(s->opts->consumer_ctx, s->pid, r->exe, r->start_ns);
	if (!s->procs.launched) {
		session_scan(s);
		if (!s->attach.n_links && !s->attach.n_link_fds)
			return session_process_gone(s->pid) ? exited_early(s->pid)
							    : no_probes_error(r->exe);
	}
	err = session_start(s, r->start_ns);
	/* Gone while it was attached to: a zombie's pidfd would make an empty recording. */
	if (err == -ESRCH || (!err && !s->procs.launched && session_process_gone(s->pid)))
		return exited_early(s->pid);
	if (err) {
		fprintf(stderr, "closuretrace: cannot watch process %d: %s\n", (int)s->pid,
			strerror(-err));
		return EXIT_ENVIRONMENT;
	}
	/* Killed while we attached: its status is reaped and said as any other end's. */
	if (s->procs.launched && launch_release(&r->child)) {
		r->not_started = true;
		fprintf(stderr,
			"closuretrace: the command ended before it could start (process %d)\n",
			(int)s->pid);
	}
	/* record -p and top: every closure alive now, from before the probes, as a synthetic init
	 * (snapshot.h), to the trace or to the consumer (top's view) alike. */
	if (!s->procs.launched && (s->out.file || s->opts->consumer)) {
		uint64_t read_at = recorder_now_ns();
		size_t n = snapshot_write(s, read_at);

		if (r->o.verbose && n)
			fprintf(stderr, "closuretrace: %zu closures alive at attach, read in %.3f s\n",
				n, (double)(recorder_now_ns() - read_at) / 1e9);
	}
	if (r->o.verbose)
		fprintf(stderr, "closuretrace: recording process %d\n", (int)s->pid);
	return 0;
}

int recorder_poll(struct recorder *r, int timeout_ms)
{
	return session_poll(&r->s, timeout_ms);
}

void recorder_request_stop(struct recorder *r)
{
	session_request_stop(&r->s);
}

void recorder_abandon(struct recorder *r)
{
	r->s.abandoned = true;
}

/* The launched command's exit status or killing signal, once it has exited. */
static void child_status(pid_t pid, struct recorder_result *res, bool block)
{
	int status;
	pid_t got;

	while ((got = waitpid(pid, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR)
		;
	if (got != pid)
		return;
	launch_exit_of(status, &res->exit_code, &res->signal);
}

/* The processes of the command still running: the first one, then its descendants. */
static void still_running(struct session *s, struct recorder_result *res)
{
	pid_t v[RECORDER_MAX_RUNNING];
	size_t n = s->procs.init_pidns ? procset_list(s, v, RECORDER_MAX_RUNNING) : 0;

	if (!s->procs.root_exited && !s->procs.follow)
		return;
	if (!s->procs.root_exited)
		res->running[res->n_running++] = s->pid;
	for (size_t i = 0; i < n && res->n_running < RECORDER_MAX_RUNNING; i++)
		if (v[i] != s->pid)
			res->running[res->n_running++] = v[i];
}

/* -p: what the trailer says of the closures first seen mid-life (snapshot_late.h); -v says it. */
static void midlife_end(struct session *s, struct trace_end *end, bool verbose)
{
	const struct late_counts *c = s->snap.late ? late_counts(s->snap.late) : NULL;

	end->unread_why = s->snap.unread_why;
	if (!c)
		return;
	end->midlife_read = c->read;
	end->midlife_unread = c->unread;
	end->midlife_limited = c->limited;
	if (verbose)
		fprintf(stderr,
			"closuretrace: %" PRIu64 " closures first seen mid-life read from the "
			"process; %" PRIu64 " gone when read (left out), %" PRIu64
			" past %d reads a second (left out until read)\n",
			c->read, c->unread, c->limited, LATE_READS_PER_S);
}

void recorder_stop(struct recorder *r, struct recorder_result *res)
{
	struct session *s = &r->s;
	struct trace_end end;

	*res = (struct recorder_result){.exit_code = -1, .pid = s->pid};
	res->lost = session_finish(s);
	/* Events of closures met mid-life and left out are not in the trace: lost, exactly. */
	if (s->snap.late)
		res->lost += late_counts(s->snap.late)->events;
	res->events = s->out.events;
	/* Until the stop; the records queued by then were written after it (complete_ns). */
	res->duration_ns =
		(s->loop.stopped_ns ? s->loop.stopped_ns : recorder_now_ns()) - r->start_ns;
	res->end = s->loop.end;
	res->stop_signal = s->loop.stop_signal;
	res->write_errno = s->loop.write_errno;
	res->probes = s->attach.probes > 0;
	res->not_started = r->not_started;
	if (s->procs.launched) {
		child_status(r->child.pid, res, s->procs.root_exited);
		still_running(s, res);
		r->child.pid = 0; /* reaped, or left running after a stop */
	}
	end = (struct trace_end){.events = res->events,
				 .lost = res->lost,
				 .duration_ns = res->duration_ns,
				 .reason = trace_end_name((enum trace_end_reason)res->end),
				 .exit_code = res->exit_code,
				 .signal = res->signal,
				 .cut_short = s->procs.launched && res->end != RECORDER_EXIT,
				 .sample_every = s->opts->sample_every,
				 .trees_counted = s->out.trees_counted,
				 .trees = s->out.trees,
				 .trees_left_out = s->out.trees_left_out,
				 .snapshot_missed = s->snap.missed,
				 .lost_claimed = s->batches.dropped,
				 .claims_refused = s->batches.claims_refused};
	end.complete_ns = recorder_now_ns() - r->start_ns;
	midlife_end(s, &end, r->o.verbose);
	if (s->out.file)
		trace_write_end(s->out.file, &end);
	if (s->opts->consumer && s->opts->consumer->end)
		s->opts->consumer->end(s->opts->consumer_ctx, &end);
}

void recorder_free(struct recorder *r)
{
	if (!r)
		return;
	if (r->s.addr.syms)
		session_close(&r->s);
	if (r->child.pid > 0)
		launch_abort(&r->child);
	check_guard_release(r->guard); /* every process of the command was let go */
	free(r->exe);
	free(r);
}
