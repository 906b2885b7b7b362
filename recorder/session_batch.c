/* The batched transport in a session: see session_batch.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "closuretrace.skel.h"

#include "elf_probes.h"
#include "batch_decode.h"
#include "batch_proc.h"
#include "proc_mem.h"
#include "event.h"
#include "session.h"
#include "drain.h"
#include "ring_pos.h"
#include "session_batch.h"
#include "trace_text.h"

/*
 * From the ring buffer, the process of a thread as the per-operation path finds it; from the
 * in-process sink (no BPF), the process that wrote the batch.
 */
static void emit(void *ctx, const struct ct_event *e, uint32_t pid)
{
	struct session *s = ctx;

	if (s->skel)
		session_emit(s, e);
	else
		session_emit_pid(s, e, pid);
}

static void gap_given_up(void *ctx, uint32_t pid, uint64_t n);

int session_batch_init(struct session *s, uint64_t not_before_ns)
{
	hashmap_init(&s->batches.tids, 0);
	s->batches.decoder = batch_decoder_new(not_before_ns, emit, s);
	if (s->batches.decoder)
		batch_decoder_on_gap(s->batches.decoder, gap_given_up);
	return s->batches.decoder ? 0 : -ENOMEM;
}

void session_batch_setup(struct session *s)
{
	bool btf = !access("/sys/kernel/btf/vmlinux", R_OK);

	bpf_program__set_autoload(s->skel->progs.on_thread_exit, btf);
	bpf_program__set_autoload(s->skel->progs.on_prepare_exec, btf && !s->batches.exec_syscalls);
	bpf_program__set_autoload(s->skel->progs.on_execve, btf && s->batches.exec_syscalls);
	bpf_program__set_autoload(s->skel->progs.on_execveat, btf && s->batches.exec_syscalls);
}

void session_batch_attach(struct session *s)
{
	struct bpf_program *progs[] = {s->skel->progs.on_thread_exit,
				       s->skel->progs.on_prepare_exec, s->skel->progs.on_execve,
				       s->skel->progs.on_execveat};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_link *link;
		bool attached;

		if (!bpf_program__autoload(progs[i]))
			continue;
		link = bpf_program__attach(progs[i]);
		attached = link && !session_add_link(s, link); /* add_link frees it */
		if (s->opts->verbose)
			fprintf(stderr, "closuretrace: %s %s%s\n", bpf_program__name(progs[i]),
				attached ? "attached" : "not attached: ",
				attached ? "" : strerror(errno));
	}
}

/* BPF's struct thread_buf (bpf/closuretrace.bpf.c): a thread's buffer, drained at its exit. */
struct bpf_thread_buf {
	uint64_t registry;
	uint64_t records;
	uint32_t tid;
	uint32_t tgid;
};

#define PROC_PID_INIT_INO 0xeffffffcu /* linux/proc_ns.h: the first pid namespace */

/*
 * A thread of a recorded process owns a buffer (as a poll finds it): BPF learns it, unless it
 * knows it from the thread's batches already, so that what the thread holds when it is killed
 * or execs is drained, as for a thread that handed a batch over (docs/probes.md).
 */
static void seed_thread(void *ctx, pid_t pid, uint64_t registry, uint32_t tid, uint64_t records)
{
	struct session *s = ctx;
	struct bpf_thread_buf tb = {
		.registry = registry, .records = records, .tid = tid, .tgid = (uint32_t)pid};
	struct bpf_map *map = s->skel->maps.thread_bufs;
	char task[64];

	/*
	 * The buffer's head, in the process's memory, names the thread: believed only for a thread
	 * of that process (BPF also drains a buffer only in a thread of the process that named it).
	 */
	snprintf(task, sizeof(task), "/proc/%d/task/%u", (int)pid, tid);
	if (access(task, F_OK))
		return;
	if (bpf_map__value_size(map) == sizeof(tb))
		bpf_map__update_elem(map, &tid, sizeof(tid), &tb, sizeof(tb), BPF_NOEXIST);
}

/*
 * Whether pid is still a process this session traces, so that a value is written into its
 * memory (an ack, a wait limit, polled_until): the first process while its pidfd says it lives;
 * another of a launched command's while BPF's set has it (a process leaves it as it exits, before
 * its pid can be reused). Never a process that only took a traced one's pid.
 */
static bool still_traced(struct session *s, uint32_t pid)
{
	__u8 yes;

	if (pid == (uint32_t)s->pid)
		return !s->procs.root_exited && s->procs.pidfd >= 0 &&
		       !syscall(SYS_pidfd_send_signal, s->procs.pidfd, 0, NULL, 0);
	return s->procs.follow && s->skel && s->procs.init_pidns &&
	       !bpf_map__lookup_elem(s->skel->maps.traced, &pid, sizeof(pid), &yes, sizeof(yes), 0);
}

/* Whether pid numbers its threads as BPF's map does: it lives in the first pid namespace. */
static bool in_first_pidns(uint32_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/ns/pid", pid);
	return !stat(path, &st) && st.st_ino == PROC_PID_INIT_INO;
}

/*
 * A new entry. Its stream number is that of the entries of the same image (one number per
 * image: lost batches name the image, not the registry); for a first registry found at attach,
 * a number of its own, unlike any exec count (0x8000 and up, 16 bits kept in a key).
 */
static struct batch_process *add_process(struct session *s, uint32_t pid, uint32_t image,
					 uint64_t registry)
{
	struct batch_process *v;
	uint32_t stream = image, same_pid = 0;
	bool found = false;

	for (size_t i = 0; i < s->batches.n_procs; i++) {
		if (s->batches.procs[i].pid != pid)
			continue;
		same_pid++;
		if (s->batches.procs[i].image == image && !found) {
			stream = s->batches.procs[i].stream;
			found = true;
		}
	}
	if (!found && image == BATCH_IMAGE_UNKNOWN)
		stream = 0x8000 | (same_pid & 0x7fff);
	v = realloc(s->batches.procs, (s->batches.n_procs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->batches.procs = v;
	v = &v[s->batches.n_procs++];
	*v = (struct batch_process){
		.pid = pid, .image = image, .stream = stream, .registry = registry};
	/* record -p: threads idle since before the recording are known to BPF from no batch. */
	if (!s->procs.launched && s->skel && in_first_pidns(pid)) {
		v->poll.on_owner = seed_thread;
		v->poll.ctx = s;
	}
	return v;
}

static struct batch_process *process_for(struct session *s, uint32_t pid, uint32_t image,
					 uint64_t registry)
{
	struct batch_process *v;

	/*
	 * Registries found at attach learn their image from the process's first batch (an exec
	 * between the attach and that batch is taken for the same image: see docs/probes.md).
	 */
	for (size_t i = 0; i < s->batches.n_procs; i++)
		if (s->batches.procs[i].pid == pid &&
		    s->batches.procs[i].image == BATCH_IMAGE_UNKNOWN)
			s->batches.procs[i].image = image;
	for (size_t i = 0; i < s->batches.n_procs; i++)
		if (s->batches.procs[i].pid == pid && s->batches.procs[i].image == image &&
		    s->batches.procs[i].registry == registry)
			return &s->batches.procs[i];
	for (size_t i = 0; i < s->batches.n_procs; i++)
		if (s->batches.procs[i].pid == pid && s->batches.procs[i].image != image)
			s->batches.procs[i].gone = true;
	v = add_process(s, pid, image, registry);
	/*
	 * Lossless: the library may have half the ring buffer in flight, then waits. A ring that
	 * cannot hold two full batches in half of it would make every handover wait in vain.
	 */
	if (v && s->procs.launched && !s->drain &&
	    s->opts->buffer_size / 2 >= 2 * BATCH_BYTES_MAX && still_traced(s, pid))
		batch_set_wait_limit((pid_t)pid, registry,
				     s->opts->buffer_size / 2 / CT_BATCH_RECORD_SIZE);
	return v;
}

/*
 * The image number in the stream keys of (pid, image). A registry found at attach whose process
 * never had a batch received (all lost in the ring buffer) never learnt its image: its streams'
 * keys are its own number, which the lost batches of that process must use too, else the records
 * its polls took would be counted lost as well (issue 25 item 11).
 */
static uint32_t stream_of(const struct session *s, uint32_t pid, uint32_t image)
{
	for (size_t i = 0; i < s->batches.n_procs; i++)
		if (s->batches.procs[i].pid == pid && s->batches.procs[i].image == image)
			return s->batches.procs[i].stream;
	for (size_t i = 0; i < s->batches.n_procs; i++)
		if (s->batches.procs[i].pid == pid &&
		    s->batches.procs[i].image == BATCH_IMAGE_UNKNOWN)
			return s->batches.procs[i].stream;
	return image;
}

/*
 * What a poll at now writes into the registries it reads (batch_poll): under -p, that the recorder
 * reads the buffers in place until now + BATCH_POLLED_AHEAD_NS. A launched command's handovers
 * stay as they are: they are what its lossless waits count.
 */
static uint64_t polled_until(const struct session *s, uint64_t now)
{
	return s->procs.launched ? 0 : now + BATCH_POLLED_AHEAD_NS;
}

/* A new session in the registry (-p), counting trees from now: this recording's sampling. */
static void start_sampling(struct session *s, struct batch_process *p)
{
	struct batch_sampling now;
	uint64_t handed;

	if (p->session_set || batch_sampling_read((pid_t)p->pid, p->registry, &now))
		return; /* older than version 3: no sampling, every tree recorded */
	p->trees = p->trees_base = now.trees;
	p->trees_left_out = p->left_out_base = now.trees_left_out;
	/* What a killed recorder left in consumed would make its behind_limit leave trees out. */
	if (!batch_handed((pid_t)p->pid, p->registry, &handed))
		batch_ack((pid_t)p->pid, p->registry, handed);
	/* Another session than any the closures alive may carry from an earlier recording. */
	if (!batch_sampling_write((pid_t)p->pid, p->registry, s->opts->sample_every,
				  (uint8_t)(now.session + 1) ? (uint8_t)(now.session + 1) : 1))
		p->sampling = p->session_set = true;
}

/* At the stop: the counters of the processes still there, and this recording's session ended
 * (-p: the process runs on unsampled); then the totals. */
static void stop_sampling(struct session *s)
{
	for (size_t i = 0; i < s->batches.n_procs; i++) {
		struct batch_process *p = &s->batches.procs[i];
		struct batch_sampling now;

		/* -p: counted from this recording's start; launched: from the process's. */
		if (!p->gone && (p->session_set || s->procs.launched) &&
		    !batch_sampling_read((pid_t)p->pid, p->registry, &now) && now.session &&
		    now.trees >= p->trees) {
			p->sampling = true;
			p->trees = now.trees;
			p->trees_left_out = now.trees_left_out;
			batch_sampling_write((pid_t)p->pid, p->registry, 0, 0);
		}
		if (!p->sampling)
			continue;
		s->out.trees_counted = true;
		s->out.trees += p->trees - p->trees_base;
		s->out.trees_left_out += p->trees_left_out - p->left_out_base;
	}
}

/*
 * record -p: the registry of each libclosure of the process, from its exported symbol, so that
 * records already buffered by threads that claimed their buffers before this recording (and
 * hand nothing over during it) are polled and drained too. A launched command's threads all
 * claim their buffers while it is recorded: each says where its registry is.
 */
static void learn_registries(struct session *s)
{
	if (s->procs.launched || !s->batches.on || !s->skel)
		return;
	for (size_t i = 0; i < s->addr.objects.n; i++) {
		struct object *o = &s->addr.objects.v[i];
		struct batch_process *p;
		uint32_t image = BATCH_IMAGE_UNKNOWN;
		uint64_t at;
		bool known = false;

		if (o->registry_sought || !o->elf || !o->has_probes)
			continue;
		o->registry_sought = true;
		at = elf_data_symbol(o->file, BATCH_REGISTRY_SYMBOL);
		if (!at || batch_registry_check(s->pid, at + o->bias))
			continue;
		at += o->bias;
		/* The image of the process's batches so far, if any (one loaded by dlopen). */
		for (size_t k = 0; k < s->batches.n_procs; k++) {
			p = &s->batches.procs[k];
			if (p->pid != (uint32_t)s->pid || p->gone)
				continue;
			known |= p->registry == at;
			image = p->image;
		}
		if (known) {
			for (size_t k = 0; k < s->batches.n_procs; k++)
				if (s->batches.procs[k].registry == at && !s->batches.procs[k].gone)
					start_sampling(s, &s->batches.procs[k]);
			continue;
		}
		if (!(p = add_process(s, (uint32_t)s->pid, image, at)))
			continue;
		start_sampling(s, p);
		/* At once: its threads are known to BPF from now on (the message says so). */
		batch_poll(&p->poll, s->batches.decoder, s->pid, at, p->stream,
			   recorder_now_ns() - BATCH_IDLE_NS, polled_until(s, recorder_now_ns()));
		if (s->opts->verbose) {
			char shown[PATH_MAX * TEXT_ESCAPE_MAX]; /* a path the process chose */

			fprintf(stderr, "closuretrace: batch registry of %s at 0x%llx\n",
				text_visible(shown, sizeof(shown), o->path),
				(unsigned long long)at);
		}
	}
}

/*
 * Counts of records a process never handed over are its own word (docs/probes.md, "Trust
 * boundary"): those its library says it dropped, and the gaps in its sequence numbers given up.
 * Each is believed only as far as the process could have made them, one record per nanosecond of
 * its CPU time at most (read again at most every 10 ms); beyond that it is refused and counted
 * apart (s->batches.claims_refused), never as lost. Returns whether n is believed (then p->claimed
 * holds it).
 */
#define CLAIM_REREAD_NS (10 * 1000 * 1000ull)
/* And read at every poll at most this often while it runs: gaps are mostly given up at the end,
 * when the process may be gone (its last reading then stands). */
#define CPU_POLL_NS (100 * 1000 * 1000ull)

/* p's CPU time read again, with the time since then that the kernel may not have counted yet. */
static void read_cpu(struct batch_process *p, uint64_t now, uint64_t slack)
{
	uint64_t cpu;

	if (proc_cpu_ns((pid_t)p->pid, &cpu) && cpu + slack > p->cpu_ns) {
		p->cpu_ns = cpu + slack;
		p->cpu_read_ns = now;
	}
}

static bool believe(struct session *s, struct batch_process *p, uint64_t n)
{
	uint64_t now = recorder_now_ns();

	if (p && p->claimed + n > p->cpu_ns && now - p->cpu_read_ns >= CLAIM_REREAD_NS)
		read_cpu(p, now, CLAIM_REREAD_NS); /* a tick the kernel has not counted yet */
	if (!p || p->claimed + n > p->cpu_ns) {
		s->batches.claims_refused += n;
		return false;
	}
	p->claimed += n;
	return true;
}

static void claim_dropped(struct session *s, struct batch_process *p, uint32_t dropped)
{
	if (believe(s, p, dropped))
		s->batches.dropped += dropped;
}

/* The latest entry of process pid (any image: its CPU time is the process's). */
static struct batch_process *process_of(struct session *s, uint32_t pid)
{
	for (size_t i = s->batches.n_procs; i-- > 0;)
		if (s->batches.procs[i].pid == pid)
			return &s->batches.procs[i];
	return NULL;
}

static void gap_given_up(void *ctx, uint32_t pid, uint64_t n)
{
	struct session *s = ctx;

	if (believe(s, process_of(s, pid), n))
		s->batches.gaps_lost += n;
}

/* Threads remembered as their process's (seen handing their own buffers over) at most. */
#define BATCH_TIDS_MAX 65536

/*
 * Whether tid is a thread of process pid, for a batch that names a thread other than the one
 * that handed it over (docs/probes.md, "Trust boundary"): a thread seen handing over its own
 * buffer (BPF knew it was that thread), or one /proc lists in the process now. A tid that is
 * neither is a lie: its records would be written as another thread's, perhaps another
 * process's.
 */
static bool thread_of(struct session *s, uint32_t pid, uint32_t tid, bool foreign)
{
	char path[64];

	if (!foreign) {
		if (hashmap_count(&s->batches.tids) < BATCH_TIDS_MAX)
			hashmap_put(&s->batches.tids, pid, tid, NULL);
		return true;
	}
	if (hashmap_get(&s->batches.tids, pid, tid))
		return true;
	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return tid && !access(path, F_OK);
}

bool session_batch_record(struct session *s, const void *data, size_t size)
{
	const struct ct_batch_event *h = data;
	struct batch_process *p;

	if (size < sizeof(*h) || h->kind != CT_BATCH)
		return false;
	if (s->closing || !s->batches.decoder ||
	    size != sizeof(*h) + (size_t)h->n * CT_BATCH_RECORD_SIZE)
		return true;
	p = process_for(s, h->pid, h->image, h->registry);
	if (h->dropped)
		claim_dropped(s, p, h->dropped);
	if (p && h->handed > p->handed)
		p->handed = h->handed;
	/* The sampling counters only grow within an image: the latest read is the largest. */
	if (p && h->trees > p->trees) {
		p->sampling = p->session_set || s->procs.launched;
		p->trees = h->trees;
		p->trees_left_out = h->trees_left_out;
	}
	/*
	 * After an exec the next image has its own registry, perhaps at this address: never write
	 * there. A batch handed over afterwards by this image means the exec failed.
	 */
	if (p && h->why != CT_BATCH_THREAD_EXIT)
		p->gone = h->why == CT_BATCH_EXEC;
	if (!thread_of(s, h->pid, h->tid, h->foreign)) {
		if (!s->batches.tid_refused)
			fprintf(stderr,
				"closuretrace: warning: records refused: a batch named thread %u, "
				"which is not a thread of process %u\n",
				h->tid, h->pid);
		s->batches.tid_refused += h->n;
		return true;
	}
	batch_decoder_feed(s->batches.decoder, h->pid, h->tid,
			   batch_stream_key(h->records, p ? p->stream : h->image),
			   (const struct closure_batch_record *)(h + 1), h->n);
	return true;
}

/* The ring buffer's positions (ring_pos.h), mapped at the first call. False when it cannot be. */
static bool ring_positions(struct session *s, uint64_t *consumer, uint64_t *producer)
{
	if (!s->batches.ring_pos && s->skel)
		s->batches.ring_pos = ring_pos_map(bpf_map__fd(s->skel->maps.events));
	if (!s->batches.ring_pos)
		return false;
	ring_pos_read(s->batches.ring_pos, consumer, producer);
	return true;
}

/* Every BATCH_POLL_NS: the buffers of every process read (a sweep, unless one is under way). */
static void poll_all(struct session *s, uint64_t now)
{
	bool sweep = !batch_decoder_sweeping(s->batches.decoder);
	uint64_t consumer;

	if (sweep)
		batch_decoder_sweep(s->batches.decoder, now);
	for (size_t i = 0; i < s->batches.n_procs; i++) {
		struct batch_process *p = &s->batches.procs[i];
		long got = 0;

		if (!p->gone && now - p->cpu_read_ns >= CPU_POLL_NS)
			read_cpu(p, now, CPU_POLL_NS);
		if (!p->gone && (!still_traced(s, p->pid) ||
				 (got = batch_poll(&p->poll, s->batches.decoder, (pid_t)p->pid,
						   p->registry, p->stream, now - BATCH_IDLE_NS,
						   polled_until(s, now))) == -ESRCH))
			p->gone = true;
		/* A registry that cannot be read (made up): its streams are not waited for. */
		else if (got < 0 && sweep)
			batch_decoder_gone(s->batches.decoder, p->pid, p->stream);
		/* Gone before the poll: what it handed over is in the ring buffer already. */
		if (p->gone && sweep && !p->gone_told) {
			batch_decoder_gone(s->batches.decoder, p->pid, p->stream);
			p->gone_told = true;
		}
	}
	if (sweep && !ring_positions(s, &consumer, &s->batches.sweep_until))
		s->batches.sweep_until = 0; /* no positions: the next complete read commits */
}

/*
 * The sweep under way holds once every batch handed over before its poll is decoded: the ring
 * buffer's consumer has passed where its producer was then (a batch still being written there
 * holds the consumer back), and, with a drain thread, what that thread read by then has left its
 * queue too: the ring's consumer is the drain thread's, ahead of the decoder (committing on the
 * ring alone wrote a thread's late records after a newer life's init: cli_record_snapshot_busy).
 */
static bool sweep_read(struct session *s)
{
	uint64_t consumer, producer;

	if (!ring_positions(s, &consumer, &producer))
		return !s->loop.read_behind;
	if (consumer < s->batches.sweep_until)
		return false;
	if (!s->drain)
		return true;
	if (s->loop.read_behind) /* its queue is not empty: a later tick */
		return false;
	drain_sync(s->drain); /* a whole round of the drain thread: consumed is queued */
	s->loop.read_behind = drain_take(s);
	return !s->loop.read_behind;
}

void session_batch_tick(struct session *s)
{
	uint64_t now;

	if (!s->batches.decoder)
		return;
	learn_registries(s);
	now = recorder_now_ns();
	/* With a drain thread, it acknowledges handovers as it reads them (drain.h). */
	for (size_t i = 0; s->procs.launched && !s->drain && i < s->batches.n_procs; i++) {
		struct batch_process *p = &s->batches.procs[i];

		if (p->gone || p->handed == p->acked)
			continue;
		/* Gone (ESRCH): never again, a reused pid could receive the write. */
		if (!still_traced(s, p->pid) || batch_ack((pid_t)p->pid, p->registry, p->handed))
			p->gone = true;
		else
			p->acked = p->handed;
	}
	/*
	 * Polls read the newest records, which wait in the reorder window behind those queued:
	 * while the loop is behind, the handed-over batches bring them in their turn.
	 */
	if (now - s->batches.polled >= BATCH_POLL_NS && !s->loop.read_behind) {
		s->batches.polled = now;
		poll_all(s, now);
	}
	if (batch_decoder_sweeping(s->batches.decoder) && sweep_read(s))
		batch_decoder_commit(s->batches.decoder);
}

void session_batch_stop(struct session *s)
{
	if (!s->batches.decoder)
		return;
	/* s->out.cut_ns is the stop's (session_finish), set before the first buffer is read. */
	learn_registries(s);
	for (size_t i = 0; i < s->batches.n_procs; i++) {
		struct batch_process *p = &s->batches.procs[i];

		if (p->gone || !still_traced(s, p->pid))
			continue;
		if (s->procs.launched) { /* never wait for us again */
			batch_set_wait_limit((pid_t)p->pid, p->registry, 0);
		} else { /* hand over by age again, start every tree: for whoever traces it next */
			batch_stop_polling((pid_t)p->pid, p->registry);
			batch_set_behind_limit((pid_t)p->pid, p->registry, 0);
		}
		batch_drain(s->batches.decoder, (pid_t)p->pid, p->registry, p->stream);
	}
	/* A thread may have handed a full buffer over (into the ring) while the others were read:
	 * its records before the cut are the trace's too. */
	ring_buffer__consume(s->rb);
	stop_sampling(s);
	batch_decoder_flush(s->batches.decoder);
	if (s->opts->verbose && s->out.after_cut)
		fprintf(stderr,
			"closuretrace: %llu records made after the stop left out (the process "
			"ran on while the recorder finished)\n",
			(unsigned long long)s->out.after_cut);
	if (s->opts->verbose && batch_decoder_stale(s->batches.decoder))
		fprintf(stderr,
			"closuretrace: %llu buffered records older than the recording left out\n",
			(unsigned long long)batch_decoder_stale(s->batches.decoder));
	if (batch_decoder_refused(s->batches.decoder))
		fprintf(stderr,
			"closuretrace: warning: %llu batched records refused (counted as lost): "
			"their buffers were past the %u that a process's threads may have "
			"(docs/probes.md, \"Trust boundary\")\n",
			(unsigned long long)batch_decoder_refused(s->batches.decoder),
			BATCH_STREAMS_MAX);
}

/* The records of batches lost in the ring buffer that no poll or drain got either. */
static uint64_t lost_in_ring(struct session *s)
{
	struct ct_lost_key key, next;
	uint64_t lost = 0;
	int fd;
	__u32 n;

	if (!s->skel)
		return 0;
	fd = bpf_map__fd(s->skel->maps.lost_batches);
	for (int err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &n))
			continue;
		lost += n - batch_decoder_received(
				    s->batches.decoder, key.pid,
				    batch_stream_key(key.records, stream_of(s, key.pid, key.image)),
				    key.seq0, n);
	}
	return lost;
}

uint64_t session_batch_lost(struct session *s)
{
	uint64_t ring, forgotten, refused, late;

	if (!s->batches.decoder)
		return s->batches.dropped + session_read_stat(s, CT_STAT_LOST_BATCHED);
	/* With those BPF could not list (its map full, or the library's drops in them). */
	ring = lost_in_ring(s) + session_read_stat(s, CT_STAT_LOST_BATCHED);
	forgotten = s->batches.gaps_lost;
	refused = batch_decoder_refused(s->batches.decoder) + s->batches.tid_refused;
	late = batch_decoder_late(s->batches.decoder);
	/* Where they went, for whoever must make it lose nothing next time. */
	if (s->opts->verbose && s->batches.dropped + ring + forgotten + refused + late)
		fprintf(stderr,
			"closuretrace: batched records lost: %llu dropped by the library (the "
			"process's own count: a buffer full under a nested call), %llu in batches "
			"the ring buffer could not take, %llu in sequence gaps given up, %llu "
			"refused, %llu read after later ones had left the full reorder queue\n",
			(unsigned long long)s->batches.dropped, (unsigned long long)ring,
			(unsigned long long)forgotten, (unsigned long long)refused,
			(unsigned long long)late);
	if (s->batches.claims_refused)
		fprintf(stderr,
			"closuretrace: warning: refused the traced process's word for %llu more "
			"records it never handed over (dropped by its library, or skipped in its "
			"sequence numbers) than its CPU time could have made (not counted as "
			"lost)\n",
			(unsigned long long)s->batches.claims_refused);
	return s->batches.dropped + ring + forgotten + refused + late;
}

void session_batch_free(struct session *s)
{
	hashmap_free(&s->batches.tids);
	batch_decoder_free(s->batches.decoder);
	s->batches.decoder = NULL;
	ring_pos_unmap(s->batches.ring_pos);
	s->batches.ring_pos = NULL;
	for (size_t i = 0; i < s->batches.n_procs; i++)
		batch_poll_free(&s->batches.procs[i].poll);
	free(s->batches.procs);
	s->batches.procs = NULL;
}
