/*
 * The recorder's loop: the ring buffer's operations into the trace, the process's end, stop
 * signals, --duration and --timeout, the live status line. See session.h.
 *
 * The end is a small state machine. A stop (a signal, --duration, --timeout) sends a launched
 * command SIGTERM (PHASE_TERM) and goes on reading events while it ends; --timeout sends SIGKILL
 * after the grace period, and so does a second stop signal (PHASE_KILL). Recording ends when
 * every process of the command has exited, or when the wait for them is over.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "drain.h"
#include "event.h"
#include "launch.h"
#include "session.h"
#include "session_batch.h"

#define RESCAN_NS      (100 * 1000 * 1000ull) /* how often the maps are read again (dlopen) */
#define STATUS_NS      (1000 * 1000 * 1000ull)
#define READ_BUDGET_NS (50 * 1000 * 1000ull) /* reading the ring buffer, per session_poll */
/* How often the trace is flushed: a killed recorder leaves it whole up to this long before. */
#define FLUSH_NS (100 * 1000 * 1000ull)

static int watch(struct session *s, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(s->loop.epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int session_start(struct session *s, uint64_t start_ns)
{
	sigset_t stop;
	int err;

	s->out.start_ns = start_ns;
	/* --duration and --timeout count from the trace's start: for -p, taken before the probes were
	 * attached and the live closures read, so that the trace spans the duration asked. */
	s->loop.begin_ns = start_ns;
	s->loop.last_scan = s->loop.last_status = recorder_now_ns();
	s->procs.pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (s->procs.pidfd < 0)
		return -errno;
	launch_block_stop_signals(&stop);
	s->loop.sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	s->loop.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->loop.sigfd < 0 || s->loop.epfd < 0)
		return -errno;
	err = watch(s, s->procs.pidfd);
	if (!err)
		err = watch(s, s->loop.sigfd);
	if (!err)
		err = drain_start(s, session_take_record);
	if (!err)
		err = watch(s, drain_fd(s->drain));
	return err;
}

static void show_status(struct session *s, uint64_t now)
{
	double secs = (now - s->loop.last_status) / 1e9;

	fprintf(stderr, "\rclosuretrace: %.0f events/s, %llu events, %llu lost, %lld live\033[K",
		(s->out.events - s->loop.last_events) / (secs > 0 ? secs : 1),
		(unsigned long long)s->out.events,
		(unsigned long long)session_read_stat(s, CT_STAT_LOST), (long long)s->out.live);
	s->loop.last_status = now;
	s->loop.last_events = s->out.events;
}

static void enter(struct session *s, enum session_phase phase)
{
	s->loop.phase = phase;
	s->loop.phase_ns = recorder_now_ns();
	if (phase == PHASE_DONE && !s->loop.stopped_ns)
		s->loop.stopped_ns = s->loop.phase_ns;
}

/* The first stop: a launched command gets SIGTERM (or the signal we got) and a moment. */
static void begin_stop(struct session *s, enum recorder_end why, int sig)
{
	s->loop.end = why;
	if (!s->procs.launched) {
		enter(s, PHASE_DONE);
		return;
	}
	procset_signal(s, sig);
	enter(s, PHASE_TERM);
}

void session_request_stop(struct session *s)
{
	if (s->loop.phase == PHASE_RUN)
		begin_stop(s, RECORDER_SIGNAL, SIGTERM);
}

static void on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	if (read(s->loop.sigfd, &si, sizeof(si)) != sizeof(si))
		return;
	if (s->loop.phase == PHASE_RUN) {
		s->loop.stop_signal = (int)si.ssi_signo;
		begin_stop(s, RECORDER_SIGNAL, s->loop.stop_signal);
	} else if (s->procs.launched) {
		procset_signal(s, SIGKILL); /* asked twice: end now */
		enter(s, PHASE_KILL);
	} else {
		enter(s, PHASE_DONE);
	}
}

/* The clocks: --duration, --timeout, and how long a stop waits for the command. */
static void check_clocks(struct session *s, uint64_t now)
{
	uint64_t in_phase = now - s->loop.phase_ns;

	switch (s->loop.phase) {
	case PHASE_RUN:
		if (s->opts->timeout_ns && now - s->loop.begin_ns >= s->opts->timeout_ns)
			begin_stop(s, RECORDER_TIMEOUT, SIGTERM);
		else if (s->opts->duration_ns && now - s->loop.begin_ns >= s->opts->duration_ns) {
			begin_stop(s, RECORDER_DURATION, SIGTERM);
			/* A process left running (-p) is recorded for the duration asked, to the
			 * nanosecond, however late this poll came: later events fall after the cut. */
			if (s->loop.phase == PHASE_DONE)
				s->loop.stopped_ns = s->loop.begin_ns + s->opts->duration_ns;
		}
		break;
	case PHASE_TERM:
		if (s->loop.end == RECORDER_TIMEOUT && in_phase >= s->opts->grace_ns) {
			procset_signal(s, SIGKILL);
			enter(s, PHASE_KILL);
		} else if (s->opts->stop_wait_ns && in_phase >= s->opts->stop_wait_ns) {
			enter(s, PHASE_DONE); /* record: the command is left running */
		}
		break;
	case PHASE_KILL:
		if (in_phase >= s->opts->grace_ns)
			enter(s, PHASE_DONE); /* unkillable for now (a D state): stop waiting */
		break;
	case PHASE_DONE:
		break;
	}
}

int session_poll(struct session *s, int timeout_ms)
{
	struct epoll_event ev[3];
	int n = s->loop.phase == PHASE_DONE ? 0 : epoll_wait(s->loop.epfd, ev, 3, timeout_ms);
	uint64_t now;

	/* At most READ_BUDGET_NS of reading per call: a process that writes faster than we read
	 * must not starve the frames of top, the signals and the clocks (the rest stays buffered).
	 */
	s->loop.read_until_ns = recorder_now_ns() + READ_BUDGET_NS;
	s->loop.read_behind = drain_take(s);
	s->loop.read_until_ns = 0;
	session_batch_tick(s);
	for (int i = 0; i < n; i++) {
		if (ev[i].data.fd == s->procs.pidfd && !s->procs.root_exited) {
			s->procs.root_exited = true; /* readable from now on: watch it no more */
			epoll_ctl(s->loop.epfd, EPOLL_CTL_DEL, s->procs.pidfd, NULL);
		} else if (ev[i].data.fd == s->loop.sigfd) {
			on_signal(s);
		}
	}
	if (drain_error(s->drain) && !s->loop.write_errno)
		s->loop.write_errno =
			drain_error(s->drain); /* the spool's file: ended as a full trace */
	if (((s->out.file && ferror(s->out.file)) || s->loop.write_errno) &&
	    s->loop.phase != PHASE_DONE) {
		if (!s->loop.write_errno) /* else the failed flush's, kept */
			s->loop.write_errno = errno ? errno : EIO;
		if (s->procs.launched)
			procset_signal(s, SIGTERM);
		s->loop.end = RECORDER_WRITE;
		enter(s, PHASE_DONE);
	}
	if (s->loop.phase != PHASE_DONE && !procset_alive(s)) {
		/* Nothing is left to fire the probes: nobody need wait for their detach. */
		session_detach_behind(s);
		drain_sync(s->drain); /* what the last process wrote before it went */
		enter(s, PHASE_DONE);
	}
	now = recorder_now_ns();
	check_clocks(s, now);
	if (now - s->loop.last_scan >= RESCAN_NS && s->loop.phase != PHASE_DONE) {
		session_scan(s);
		s->loop.last_scan = now;
	}
	if (!s->loop.quiet && now - s->loop.last_status >= STATUS_NS && s->loop.phase != PHASE_DONE)
		show_status(s, now);
	if (s->out.file && now - s->loop.last_flush >= FLUSH_NS) {
		if (fflush(s->out.file) && !s->loop.write_errno)
			s->loop.write_errno = errno; /* the next poll ends the recording */
		s->loop.last_flush = now;
	}
	if (s->loop.phase != PHASE_DONE)
		return RECORDER_RUNNING;
	if (!s->loop.quiet)
		fputs("\r\033[K", stderr);
	return 0;
}
