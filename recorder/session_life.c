/*
 * A session from start to end: load the BPF programs, take each ring-buffer record (the dispatch),
 * finish and close. See session.h. The parts it drives (the drain thread, the batches, the
 * process set, addresses, the snapshot) each have their file; the session's state and clock are
 * session.c's, below them all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "closuretrace.skel.h"
#include "drain.h"
#include "event.h"
#include "session.h"
#include "session_batch.h"
#include "snapshot_keep.h"
#include "snapshot_late.h"
#include "symbols.h"

#define USDT_MAX_SPECS 4096 /* distinct (probe, argument registers) pairs */

int session_init(struct session *s, pid_t pid, const struct recorder_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->opts = o;
	hashmap_init(&s->addr.seen, 0);
	hashmap_init(&s->snap.window, 1);
	hashmap_init(&s->procs.tid_pid, sizeof(uint32_t));
	s->pid = pid;
	objects_set_process(&s->addr.objects, pid);
	s->procs.pidfd = s->loop.sigfd = s->loop.epfd = s->procs.guard = -1;
	s->addr.syms = symbols_new();
	return s->addr.syms && !session_batch_init(s, recorder_now_ns()) ? 0 : -1;
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

/* Opens and loads the skeleton; without the uprobe_multi programs when s->attach.use_libbpf. */
static int open_and_load(struct session *s, size_t buffer_size)
{
	struct closuretrace_bpf *skel = closuretrace_bpf__open();
	int err;

	if (!skel)
		return -errno;
	s->skel = skel;
	skel->rodata->wakeup_bytes = buffer_size / 8;
	skel->rodata->stop_on_load = s->procs.stop_on_load;
	skel->rodata->stack_bytes = s->opts->stacks * 8;
	err = procset_setup(s);
	session_batch_setup(s);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.events, buffer_size);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.__bpf_usdt_specs, USDT_MAX_SPECS);
	if (!err)
		err = s->attach.use_libbpf
			      ? bpf_program__set_autoload(skel->progs.on_probe_multi, false)
			      : bpf_program__set_expected_attach_type(skel->progs.on_probe_multi,
								      USDT_ATTACH_UPROBE_MULTI);
	/* touch_ring needs bpf_loop in a syscall program (Linux 5.17); without it, or asked for a
	 * cold ring, it is not loaded. */
	if (!err && (s->opts->cold_ring ||
		     libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_loop, NULL) != 1))
		err = bpf_program__set_autoload(skel->progs.touch_ring, false);
	if (!err && !s->attach.use_libbpf) /* on_loader: one uprobe, attached like the others */
		err = bpf_program__set_expected_attach_type(skel->progs.on_loader,
							    USDT_ATTACH_UPROBE_MULTI);
	if (!err)
		err = closuretrace_bpf__load(skel);
	return err < 0 ? err : -err;
}

static int on_record(void *ctx, void *data, size_t size);

/* One event a cache line with the ring buffer's 8-byte header; the kind first in every record. */
_Static_assert(sizeof(struct ct_event) == 56, "struct ct_event is 56 bytes");
_Static_assert(RECORDER_STACKS_MAX == CT_STACK_MAX, "--stacks' bound is the record's");
_Static_assert(offsetof(struct ct_event, kind) == 0 &&
		       offsetof(struct ct_module_event, kind) == 0 &&
		       offsetof(struct ct_loader_event, kind) == 0 &&
		       offsetof(struct ct_proc_event, kind) == 0,
	       "every ring-buffer record starts with its kind");

/*
 * Writes into every page of the ring buffer once, before anything is attached (touch_ring says
 * why): runs touch_ring until its records have covered the whole ring, reading them (they are
 * discarded: libbpf skips them) whenever it is full. Best effort.
 */
static void touch_ring(struct session *s)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int fd = bpf_program__fd(s->skel->progs.touch_ring);
	uint64_t covered = 0;

	for (int i = 0; fd >= 0 && covered < s->opts->buffer_size && i < 4; i++) {
		if (bpf_prog_test_run_opts(fd, &opts) || !opts.retval)
			break;
		covered += (uint64_t)opts.retval * (CT_TOUCH_RECORD_SIZE + 8);
		ring_buffer__consume(s->rb);
	}
	if (s->opts->verbose)
		fprintf(stderr,
			"closuretrace: %llu KiB of the ring buffer written before recording\n",
			(unsigned long long)(covered < s->opts->buffer_size
						     ? covered
						     : s->opts->buffer_size) >>
				10);
}

int session_load(struct session *s)
{
	int err;

	libbpf_set_print(s->opts->verbose ? verbose_print : silent_print);
	/* Older kernels, each refusal once: libbpf finds no sched_prepare_exec before 6.10
	 * (-ESRCH: the syscalls' drain); before 6.6 the uprobe_multi attach type may be refused
	 * (-EINVAL: libbpf's way); a kernel that refuses the per-process fork stop, every process
	 * (procset.c). */
	for (;;) {
		err = open_and_load(s, s->opts->buffer_size);
		if (err && s->procs.per_process)
			s->attach.every_process = true;
		else if (err == -ESRCH && !s->batches.exec_syscalls)
			s->batches.exec_syscalls = true;
		else if (err == -EINVAL && !s->attach.use_libbpf)
			s->attach.use_libbpf = true;
		else
			break;
		closuretrace_bpf__destroy(s->skel);
		s->skel = NULL;
	}
	if (!err)
		err = procset_attach(s);
	if (err)
		return err;
	session_batch_attach(s);
	if (bpf_map__value_size(s->skel->maps.__bpf_usdt_specs) != sizeof(struct usdt_spec))
		return -EPROTO; /* libbpf's usdt.bpf.h changed its layout */
	s->attach.multi.specs_fd = bpf_map__fd(s->skel->maps.__bpf_usdt_specs);
	s->attach.multi.max_specs = USDT_MAX_SPECS;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_record, s, NULL);
	if (!s->rb)
		return -errno;
	if (bpf_program__autoload(s->skel->progs.touch_ring))
		touch_ring(s);
	return 0;
}

/*
 * Every ring-buffer record, by its first byte. The seam for another transport: a record that
 * carries several operations is one more case, decoding each into session_emit.
 */
void session_take_record(struct session *s, const void *data, size_t size)
{
	__u8 kind = size ? *(const __u8 *)data : CT_NR_OPS;

	if ((kind == CT_EXEC || kind == CT_FORK || kind == CT_EXIT) &&
	    size >= sizeof(struct ct_proc_event)) {
		procset_on_record(s, data);
		return;
	}
	if (s->abandoned && kind != CT_LOADER)
		return; /* nobody wants it: only a process stopped at a loader change waits on us */
	if (kind == CT_BATCH) {
		session_batch_record(s, data, size);
		return;
	}
	if (s->closing)
		return; /* the trace is complete */
	if (kind < CT_NR_OPS && size >= sizeof(struct ct_event)) {
		session_emit_frames(s, data, (const char *)data + sizeof(struct ct_event),
				    size - sizeof(struct ct_event));
	} else if (kind == CT_MODULE && size >= sizeof(struct ct_module_event)) {
		const struct ct_module_event *m = data;
		char path[CT_PATH_MAX + 1];

		memcpy(path, m->path, CT_PATH_MAX);
		path[m->path_len < CT_PATH_MAX ? m->path_len : CT_PATH_MAX] = '\0';
		session_on_module(s, &(struct session_module){.path = path,
							      .base = m->base,
							      .ts = m->ts,
							      .tid = m->tid,
							      .uid = m->uid});
	} else if (kind == CT_LOADER) {
		session_scan(s);
		if (s->procs.stop_on_load)
			procset_continue(s); /* the BPF side stopped it for this */
	}
}

/*
 * One ring-buffer record. A negative return makes libbpf stop reading (this record is taken):
 * session_poll's time for reading is up and the rest waits for its next call.
 */
/* How much is read between two looks at the clock (about 1,000 events, or 4 batches). */
#define READ_CLOCK_BYTES (64 * 1024u)

static int on_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	if (drain_record(s->drain, data, size))
		return 0; /* on the drain thread: decoded behind it, by the loop */
	session_take_record(s, data, size);
	/* By bytes, not records: one batch record carries up to 256 events. */
	s->loop.read_since_clock += (uint32_t)size;
	if (s->loop.read_until_ns && s->loop.read_since_clock >= READ_CLOCK_BYTES) {
		s->loop.read_since_clock = 0;
		if (recorder_now_ns() >= s->loop.read_until_ns)
			return -EAGAIN;
	}
	return 0;
}

uint64_t session_finish(struct session *s)
{
	uint64_t lost_modules;

	/*
	 * The cut is the stop: a process left running (-p) is recorded no further than that, and
	 * the drain thread reads the ring buffer on while the loop writes the queue (dropping what
	 * came after), so that nothing before the stop overflows it meanwhile. Then what the
	 * thread queued last, and what came after it stopped.
	 */
	s->out.cut_ns = s->loop.stopped_ns ? s->loop.stopped_ns : recorder_now_ns();
	drain_cut(s->drain, s->out.cut_ns);
	s->loop.read_until_ns = 0;
	if (s->drain)
		drain_take(s);
	drain_stop(s->drain);
	if (s->drain)
		drain_take(s);
	ring_buffer__consume(s->rb);
	s->out.after_cut += drain_after_cut(s->drain);
	if (s->opts->verbose && s->drain)
		fprintf(stderr,
			"closuretrace: %.1f MiB of records queued at most behind the ring buffer, "
			"%.1f MiB of them through the spool's file, %llu operations lost there\n",
			drain_backlog_max(s->drain) / 1048576.0,
			drain_spooled(s->drain) / 1048576.0,
			(unsigned long long)drain_lost(s->drain));
	session_batch_stop(s); /* what the processes still hold, then every event held back */
	if (s->addr.n_pending)
		session_scan(s); /* still alive after a signal or --duration: maps are there */
	session_retry_pending(s);
	lost_modules = session_read_stat(s, CT_STAT_LOST_MODULES);
	if (lost_modules)
		fprintf(stderr,
			"closuretrace: warning: %llu module records lost (ring buffer full); some "
			"call sites may lack file:line: try a larger --buffer-size\n",
			(unsigned long long)lost_modules);
	if (s->addr.modules_refused)
		fprintf(stderr,
			"closuretrace: warning: %llu module records refused: they named no regular "
			"file that the process maps (docs/probes.md, \"Trust boundary\")\n",
			(unsigned long long)s->addr.modules_refused);
	return session_read_stat(s, CT_STAT_LOST) + session_batch_lost(s) +
	       (s->drain ? drain_lost(s->drain) : 0);
}

void session_close(struct session *s)
{
	session_detach_start(s); /* what is still attached */
	session_detach_wait(s);
	usdt_multi_free(&s->attach.multi);
	if (s->procs.stop_on_load)
		procset_continue(s); /* never leave it stopped at a loader change */
	snapshot_free(s);
	late_free(s->snap.late);
	s->snap.late = NULL;
	/*
	 * Follow mode: a process of the command that exec'ed since the last read (one that outlived
	 * it) waits, stopped, for a SIGCONT. The programs are detached now: let the last ones go.
	 */
	drain_stop(s->drain);
	if (s->procs.follow && s->rb) {
		s->closing = true;
		s->loop.read_until_ns = 0;
		if (s->drain)
			drain_take(s);
		ring_buffer__consume(s->rb);
	}
	drain_free(s->drain);
	s->drain = NULL;
	session_attach_free(s);
	ring_buffer__free(s->rb);
	closuretrace_bpf__destroy(s->skel);
	symbols_free(s->addr.syms);
	objects_free(&s->addr.objects);
	maps_snapshot_free(&s->addr.module_maps);
	hashmap_free(&s->addr.seen);
	free(s->addr.pending);
	hashmap_free(&s->procs.tid_pid);
	session_batch_free(s);
	if (s->procs.pidfd >= 0)
		close(s->procs.pidfd);
	if (s->loop.sigfd >= 0)
		close(s->loop.sigfd);
	if (s->loop.epfd >= 0)
		close(s->loop.epfd);
}
