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

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int session_start(struct session *s, uint64_t start_ns)
{
	sigset_t stop;
	int err;

	s->start_ns = start_ns;
	s->begin_ns = s->last_scan = s->last_status = recorder_now_ns();
	s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (s->pidfd < 0)
		return -errno;
	launch_block_stop_signals(&stop);
	s->sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->sigfd < 0 || s->epfd < 0)
		return -errno;
	err = watch(s, s->pidfd);
	if (!err)
		err = watch(s, s->sigfd);
	if (!err)
		err = drain_start(s, session_take_record);
	if (!err)
		err = watch(s, drain_fd(s->drain));
	return err;
}

static void show_status(struct session *s, uint64_t now)
{
	double secs = (now - s->last_status) / 1e9;

	fprintf(stderr, "\rclosuretrace: %.0f events/s, %llu events, %llu lost, %lld live\033[K",
		(s->events - s->last_events) / (secs > 0 ? secs : 1), (unsigned long long)s->events,
		(unsigned long long)session_read_stat(s, CT_STAT_LOST), (long long)s->live);
	s->last_status = now;
	s->last_events = s->events;
}

static void enter(struct session *s, enum session_phase phase)
{
	s->phase = phase;
	s->phase_ns = recorder_now_ns();
	if (phase == PHASE_DONE && !s->stopped_ns)
		s->stopped_ns = s->phase_ns;
}

/* The first stop: a launched command gets SIGTERM (or the signal we got) and a moment. */
static void begin_stop(struct session *s, enum recorder_end why, int sig)
{
	s->end = why;
	if (!s->launched) {
		enter(s, PHASE_DONE);
		return;
	}
	procset_signal(s, sig);
	enter(s, PHASE_TERM);
}

void session_request_stop(struct session *s)
{
	if (s->phase == PHASE_RUN)
		begin_stop(s, RECORDER_SIGNAL, SIGTERM);
}

static void on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	if (read(s->sigfd, &si, sizeof(si)) != sizeof(si))
		return;
	if (s->phase == PHASE_RUN) {
		s->stop_signal = (int)si.ssi_signo;
		begin_stop(s, RECORDER_SIGNAL, s->stop_signal);
	} else if (s->launched) {
		procset_signal(s, SIGKILL); /* asked twice: end now */
		enter(s, PHASE_KILL);
	} else {
		enter(s, PHASE_DONE);
	}
}

/* The clocks: --duration, --timeout, and how long a stop waits for the command. */
static void check_clocks(struct session *s, uint64_t now)
{
	uint64_t in_phase = now - s->phase_ns;

	switch (s->phase) {
	case PHASE_RUN:
		if (s->timeout_ns && now - s->begin_ns >= s->timeout_ns)
			begin_stop(s, RECORDER_TIMEOUT, SIGTERM);
		else if (s->duration_ns && now - s->begin_ns >= s->duration_ns)
			begin_stop(s, RECORDER_DURATION, SIGTERM);
		break;
	case PHASE_TERM:
		if (s->end == RECORDER_TIMEOUT && in_phase >= s->grace_ns) {
			procset_signal(s, SIGKILL);
			enter(s, PHASE_KILL);
		} else if (s->stop_wait_ns && in_phase >= s->stop_wait_ns) {
			enter(s, PHASE_DONE); /* record: the command is left running */
		}
		break;
	case PHASE_KILL:
		if (in_phase >= s->grace_ns)
			enter(s, PHASE_DONE); /* unkillable for now (a D state): stop waiting */
		break;
	case PHASE_DONE:
		break;
	}
}

int session_poll(struct session *s, int timeout_ms)
{
	struct epoll_event ev[3];
	int n = s->phase == PHASE_DONE ? 0 : epoll_wait(s->epfd, ev, 3, timeout_ms);
	uint64_t now;

	/* At most READ_BUDGET_NS of reading per call: a process that writes faster than we read
	 * must not starve the frames of top, the signals and the clocks (the rest stays buffered).
	 */
	s->read_until_ns = recorder_now_ns() + READ_BUDGET_NS;
	s->read_behind = drain_take(s);
	s->read_until_ns = 0;
	session_batch_tick(s);
	for (int i = 0; i < n; i++) {
		if (ev[i].data.fd == s->pidfd && !s->root_exited) {
			s->root_exited = true; /* readable from now on: watch it no more */
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->pidfd, NULL);
		} else if (ev[i].data.fd == s->sigfd) {
			on_signal(s);
		}
	}
	if (drain_error(s->drain) && !s->write_errno)
		s->write_errno =
			drain_error(s->drain); /* the spool's file: ended as a full trace */
	if (((s->out && ferror(s->out)) || s->write_errno) && s->phase != PHASE_DONE) {
		if (!s->write_errno) /* else the failed flush's, kept */
			s->write_errno = errno ? errno : EIO;
		if (s->launched)
			procset_signal(s, SIGTERM);
		s->end = RECORDER_WRITE;
		enter(s, PHASE_DONE);
	}
	if (s->phase != PHASE_DONE && !procset_alive(s)) {
		/* Nothing is left to fire the probes: nobody need wait for their detach. */
		session_detach_behind(s);
		drain_sync(s->drain); /* what the last process wrote before it went */
		enter(s, PHASE_DONE);
	}
	now = recorder_now_ns();
	check_clocks(s, now);
	if (now - s->last_scan >= RESCAN_NS && s->phase != PHASE_DONE) {
		session_scan(s);
		s->last_scan = now;
	}
	if (!s->quiet && now - s->last_status >= STATUS_NS && s->phase != PHASE_DONE)
		show_status(s, now);
	if (s->out && now - s->last_flush >= FLUSH_NS) {
		if (fflush(s->out) && !s->write_errno)
			s->write_errno = errno; /* the next poll ends the recording */
		s->last_flush = now;
	}
	if (s->phase != PHASE_DONE)
		return RECORDER_RUNNING;
	if (!s->quiet)
		fputs("\r\033[K", stderr);
	return 0;
}
