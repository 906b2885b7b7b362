/*
 * Batched events: per-thread buffers of fixed-size records, handed over one buffer per batch
 * probe hit (or written to the in-process sink). docs/probes.md ("Batched events") describes the
 * records and the probe; this file is the library's side.
 *
 * The hot path takes no lock: a thread owns its buffer and reserves a slot with one
 * signal-atomic add, so that a signal handler that appends in the middle of an append gets the
 * next slot instead of overwriting this one. Only the outermost append of a thread hands a full
 * buffer over (a nested one finding it full counts its record as dropped, reported exactly).
 */
#define _GNU_SOURCE
#include <errno.h> /* program_invocation_short_name */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "closure_config.h"

#if CLOSURE_PROBES
#define _SDT_HAS_SEMAPHORES 1
#ifndef STAP_SDT_ARG_CONSTRAINT
#define STAP_SDT_ARG_CONSTRAINT nr
#endif
#include <sys/sdt.h>
#endif

#include "batch.h"
#include "batch_sink.h"

/* Raised by the kernel while a tracer has closure:batch armed; by the sink at start-up. */
unsigned short closure_batch_semaphore __attribute__((section(".probes")));
unsigned short *const closure_batch_active = &closure_batch_semaphore;

/*
 * Hand over a buffer whose oldest record is older than this, at the next append (unless a
 * recorder reads the buffers in place: polled_by_recorder).
 */
#define BATCH_MAX_AGE_NS (2 * 1000 * 1000ull)
/* Lossless mode: the longest a handover waits for a recorder that consumes nothing. */
#define BATCH_MAX_WAIT_NS (1000 * 1000 * 1000ull)

struct closure_batch_registry closure_batch_registry = {
	.magic = CLOSURE_BATCH_MAGIC,
	.version = CLOSURE_BATCH_VERSION,
	.record_size = sizeof(struct closure_batch_record),
	.buffer_records = CLOSURE_BATCH_RECORDS,
};

/*
 * The registry under an exported name (.dynsym), for a recorder that attaches to threads whose
 * buffers an earlier recording made them claim: it finds the registry without waiting for a
 * batch. An alias: the library's own accesses stay hidden (no GOT, never interposed). Not in
 * any header: a program that referenced it would get a copy. docs/probes.md.
 */
extern struct closure_batch_registry closure_batch_registry_public
	__attribute__((alias("closure_batch_registry"), visibility("default")));

const unsigned char *const closure_batch_session = &closure_batch_registry.session;

/*
 * A recorder that never makes us wait (registry.behind_limit, version 4) is more than its limit
 * behind: records handed over and not consumed. Then new trees are left out, so that what it
 * still has to read is the end of the trees it records, not the start of new ones.
 */
static bool recorder_behind(const struct closure_batch_registry *g)
{
	uint64_t limit = __atomic_load_n(&g->behind_limit, __ATOMIC_RELAXED);

	return limit && __atomic_load_n(&g->handed, __ATOMIC_RELAXED) >
				__atomic_load_n(&g->consumed, __ATOMIC_RELAXED) + limit;
}

uint8_t closure_batch_left_out(bool root, uint8_t parent_left_out)
{
	struct closure_batch_registry *g = &closure_batch_registry;
	uint8_t session = __atomic_load_n(&g->session, __ATOMIC_RELAXED);
	uint32_t every;
	uint64_t n;

	if (!session)
		return 0;
	if (!root) /* the tree's decision, if it was taken in this session */
		return parent_left_out == session ? session : 0;
	every = __atomic_load_n(&g->sample_every, __ATOMIC_RELAXED);
	n = __atomic_fetch_add(&g->trees, 1, __ATOMIC_RELAXED);
	if ((every <= 1 || (every != CLOSURE_SAMPLE_NONE && n % every == 0)) && !recorder_behind(g))
		return 0;
	__atomic_add_fetch(&g->trees_left_out, 1, __ATOMIC_RELAXED);
	return session;
}

/* CLOSURETRACE_SAMPLE=N or "none" (a launched command): sampling from the first closure on. */
static void sample_from_env(void)
{
	const char *v = getenv(CLOSURE_SAMPLE_ENV);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return;
	if (!strcmp(v, "none")) {
		n = CLOSURE_SAMPLE_NONE;
	} else {
		n = strtoul(v, &end, 10);
		if (*end || n < 2 || n >= CLOSURE_SAMPLE_NONE)
			return;
	}
	closure_batch_registry.sample_every = (uint32_t)n;
	closure_batch_registry.session = 1;
}

static __thread struct closure_batch_buf *my_buf;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* Adds 1 to *p and returns the old value, atomically with respect to this thread's signals. */
static inline uint32_t reserve_slot(uint32_t *p)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t v = 1;

	/* One instruction without a lock prefix: only this thread (and its handlers) write *p. */
	__asm__ volatile("xaddl %0, %1" : "+r"(v), "+m"(*p) : : "memory");
	return v;
#else
	return __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
#endif
}

/*
 * Lossless mode: wait while the recorder is more than wait_limit records behind. A recorder that
 * consumes, however slowly (a loaded machine, a sanitizer build), is waited for; one that has
 * consumed nothing for BATCH_MAX_WAIT_NS is gone or stuck: hand over, it counts what it loses.
 */
static void wait_for_recorder(uint32_t n)
{
	struct closure_batch_registry *g = &closure_batch_registry;
	uint64_t limit = __atomic_load_n(&g->wait_limit, __ATOMIC_RELAXED), since = 0, seen = 0;
	struct timespec pause = {0, 100 * 1000};

	if (!limit)
		return;
	for (;;) {
		uint64_t consumed = __atomic_load_n(&g->consumed, __ATOMIC_RELAXED), t;

		if (__atomic_load_n(&g->handed, __ATOMIC_RELAXED) + n - consumed <= limit)
			return;
		t = closure_clock_ns();
		if (!since || consumed != seen)
			since = t, seen = consumed; /* progress: the wait starts again */
		else if (t - since > BATCH_MAX_WAIT_NS)
			return;
		nanosleep(&pause, NULL);
	}
}

/*
 * Whether a recorder reads the buffers in place at now (it renews registry.polled_until as it
 * polls): then the age of a buffer is no reason for a handover, which costs the thread a trap.
 * The promise lapses by itself when the recorder stops or dies.
 */
static inline bool polled_by_recorder(uint64_t now)
{
	return now < __atomic_load_n(&closure_batch_registry.polled_until, __ATOMIC_RELAXED);
}

/* One batch probe hit (and the sink) with records [0, n) of b; b is empty afterwards. */
static void hand_over(struct closure_batch_buf *b, uint32_t n)
{
	uint64_t handed;

	if (n > CLOSURE_BATCH_RECORDS)
		n = CLOSURE_BATCH_RECORDS;
	wait_for_recorder(n);
	handed = __atomic_add_fetch(&closure_batch_registry.handed, n, __ATOMIC_RELAXED);
	(void)handed;
#if CLOSURE_PROBES
	STAP_PROBE6(closure, batch, &closure_batch_registry, b->rec, n, b->tid, handed, b->dropped);
#endif
	closure_batch_sink_write(b, n);
	b->dropped =
		0; /* before base moves: the sink's reader (recorder/sink_read.c) relies on it */
	b->base += n;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	b->n = 0;
}

static void at_thread_exit(void *arg)
{
	struct closure_batch_buf *b = arg;

	if (b->n && !b->depth)
		hand_over(b, b->n);
	my_buf = NULL;
	__atomic_store_n(&b->owner, 0, __ATOMIC_RELEASE); /* free for the next thread */
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, at_thread_exit);
}

/* This thread's workqueue when it is one of libclosure's workers (closure_batch_worker). */
static __thread uint64_t my_wq;
static __thread const char *my_wq_name;
/* The recording (registry.session) this thread last gave its names in. */
static __thread uint8_t my_named_session;

/*
 * The names that go with a thread's records: its own (PR_GET_NAME: at most 15 bytes, what the
 * program or libclosure's workers set) and its workqueue's. Given at each claim of a buffer, so
 * that a recording that attaches later learns them from the thread's first record on.
 */
static void announce_thread(uint32_t tid)
{
	char name[17] = "";

	my_named_session = __atomic_load_n(&closure_batch_registry.session, __ATOMIC_RELAXED);
	/* A thread nobody named has the program's name (the kernel's comm, 15 bytes): it would
	 * say nothing the trace's header does not, for a record in each of its batches' counts. */
	if (!prctl(PR_GET_NAME, name, 0, 0, 0) &&
	    (my_wq || strncmp(name, program_invocation_short_name, 15)))
		closure_batch_name(CLOSURE_NAME_THREAD, tid, name);
	if (my_wq)
		closure_batch_name(CLOSURE_NAME_WORKQUEUE, my_wq, my_wq_name);
}

void closure_batch_worker(const void *wq, const char *name)
{
	my_wq = (uintptr_t)wq;
	my_wq_name = name;
	if (CLOSURE_BATCH_ON() && my_buf) /* named already: this thread's names come now */
		announce_thread(my_buf->tid);
}

/*
 * A buffer for this thread: a free one from the registry, or a new one (mmap: signal safe; in a
 * file of the in-process sink's when it is on).
 */
static struct closure_batch_buf *claim_buffer(void)
{
	struct closure_batch_registry *g = &closure_batch_registry;
	struct closure_batch_buf *b;

	for (b = __atomic_load_n(&g->head, __ATOMIC_ACQUIRE); b; b = b->next) {
		uint32_t free_ = 0;

		if (__atomic_compare_exchange_n(&b->owner, &free_, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
	}
	if (!b) {
		if (closure_batch_sink_on)
			b = closure_batch_sink_buffer();
		else if ((b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			b = NULL;
		if (!b)
			return NULL;
		b->owner = 1;
		b->next = __atomic_load_n(&g->head, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&g->head, &b->next, b, true, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
	}
	b->tid = (uint32_t)syscall(SYS_gettid);
	b->n = 0;
	b->dropped = 0;
	my_buf = b;
	pthread_once(&exit_once, make_exit_key);
	pthread_setspecific(exit_key, b);
	/* An empty hit: the recorder learns the buffer's thread and the registry. */
	hand_over(b, 0);
	announce_thread(b->tid);
	return b;
}

/* A slot of b, whose depth the caller raised: NULL when a handler found it full (dropped). */
static struct closure_batch_record *slot_reserve(struct closure_batch_buf *b, bool outer,
						 uint32_t *slot)
{
	uint32_t i;

	for (;;) {
		i = reserve_slot(&b->n);
		if (i < CLOSURE_BATCH_RECORDS)
			break;
		if (!outer) {
			b->dropped++; /* a handler found the buffer full under its thread */
			return NULL;
		}
		hand_over(b, CLOSURE_BATCH_RECORDS);
	}
	*slot = i;
	return &b->rec[i];
}

/* A new recording (record -p again) learns the names of threads that claimed earlier. */
static inline void name_again(struct closure_batch_buf *b)
{
	if (__builtin_expect(__atomic_load_n(&closure_batch_registry.session, __ATOMIC_RELAXED) !=
				     my_named_session,
			     0))
		announce_thread(b->tid);
}

/*
 * A slot of this thread's buffer for one record: NULL when none (no buffer: counted as lost;
 * a handler found it full: counted as dropped). Every slot_begin is followed by slot_end, which
 * publishes the record (its seq) and may hand the buffer over. The depth is raised before the
 * caller reads the clock: a recorder's poll that reads depth 0 in the head knows that any record
 * still to come is stamped after it read (its frontier, recorder/batch_decode.h).
 */
static struct closure_batch_record *slot_begin(struct closure_batch_buf **bp, uint32_t *slot,
					       bool *outer)
{
	struct closure_batch_buf *b = my_buf;

	if (!b && !(b = claim_buffer())) {
		closure_batch_sink_lost(1); /* counted when the sink is on */
		return NULL;
	}
	name_again(b);
	*bp = b;
	*outer = !b->depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return slot_reserve(b, *outer, slot);
}

/*
 * aged: an operation, whose age makes the buffer due (a name record does not: a thread that
 * claimed a buffer and then slept would hand it over at its first operation). first_ts 0: the
 * buffer holds no operation yet.
 */
static void slot_end(struct closure_batch_buf *b, struct closure_batch_record *e, uint32_t i,
		     bool outer, bool aged)
{
	uint64_t ts;

	if (e) {
		ts = e->ts;
		/*
		 * The sequence number last: a reader of a running or dying thread's buffer (the
		 * recorder's poll and drain, BPF at thread exit) trusts a record only once its seq
		 * is base + slot; so does the tool reading a dead process's sink buffer file.
		 */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		e->seq = (uint32_t)(b->base + i);
		if (!i || (aged && !b->first_ts))
			b->first_ts = aged ? ts : 0;
		else if (aged && outer && ts - b->first_ts > BATCH_MAX_AGE_NS &&
			 !polled_by_recorder(ts))
			hand_over(b, b->n);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	b->depth--;
}

static void fill(struct closure_batch_record *e, uint64_t ts, unsigned op, uintptr_t cl, uint32_t r,
		 uintptr_t ip, uint64_t x4, uint64_t x5, uint64_t x6)
{
	e->ts = ts;
	e->cl = cl;
	e->ip = ip;
	e->x4 = x4;
	e->x5 = x5;
	e->count = r & CLOSURE_BATCH_COUNT_MASK;
	e->flags = r & ~CLOSURE_BATCH_COUNT_MASK;
	e->op = (uint8_t)op;
	e->x6 = (uint8_t)x6;
	e->pad = 0;
}

void closure_batch_append(unsigned op, uintptr_t cl, uint32_t r, uintptr_t ip, uint64_t x4,
			  uint64_t x5, uint64_t x6)
{
	struct closure_batch_buf *b = NULL;
	struct closure_batch_record *e;
	uint32_t i = 0;
	bool outer = false;

	e = slot_begin(&b, &i, &outer);
	if (!b)
		return;
	if (e)
		fill(e, closure_clock_ns(), op, cl, r, ip, x4, x5, x6);
	slot_end(b, e, i, outer, true);
}

uint64_t closure_batch_clock_in(void)
{
	struct closure_batch_buf *b = my_buf;

	if (!b && !(b = claim_buffer()))
		return 1; /* a record is still due: closure_batch_append_at counts it lost */
	name_again(b);
	b->depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return closure_clock_ns();
}

void closure_batch_append_at(uint64_t ts, unsigned op, uintptr_t cl, uint32_t r, uintptr_t ip,
			     uint64_t x4, uint64_t x5, uint64_t x6)
{
	struct closure_batch_buf *b = my_buf;
	struct closure_batch_record *e;
	uint32_t i = 0;
	bool outer;

	if (!b || !b->depth) {
		closure_batch_sink_lost(1); /* no buffer could be claimed */
		return;
	}
	outer = b->depth == 1; /* closure_batch_clock_in raised it */
	e = slot_reserve(b, outer, &i);
	if (e)
		fill(e, ts, op, cl, r, ip, x4, x5, x6);
	slot_end(b, e, i, outer, true);
}

void closure_batch_unclock_in(void)
{
	struct closure_batch_buf *b = my_buf;

	if (b && b->depth) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		b->depth--;
	}
}

/* The name record's layout over an operation's (closure_batch.h). */
_Static_assert(sizeof(struct closure_batch_name) == sizeof(struct closure_batch_record) &&
		       offsetof(struct closure_batch_name, seq) ==
			       offsetof(struct closure_batch_record, seq) &&
		       offsetof(struct closure_batch_name, op) ==
			       offsetof(struct closure_batch_record, op) &&
		       offsetof(struct closure_batch_name, kind) ==
			       offsetof(struct closure_batch_record, x6),
	       "name record layout");

void closure_batch_name(unsigned kind, uint64_t id, const char *name)
{
	struct closure_batch_name rec = {
		.id = id, .op = CLOSURE_BATCH_OP_NAME, .kind = (uint8_t)kind};
	struct closure_batch_buf *b = NULL;
	struct closure_batch_record *e;
	uint32_t i = 0;
	bool outer = false;

	strncpy(rec.name, name ? name : "", sizeof(rec.name)); /* NUL-padded, capped */
	e = slot_begin(&b, &i, &outer);
	if (!b)
		return;
	rec.ts = closure_clock_ns(); /* after the depth is raised: see slot_begin */
	if (e) {		     /* all but seq: slot_end publishes it */
		memcpy(e, &rec, offsetof(struct closure_batch_name, seq));
		memcpy(&e->op, &rec.op, sizeof(rec) - offsetof(struct closure_batch_name, op));
	}
	slot_end(b, e, i, outer, false);
}

void closure_batch_flush(void)
{
	struct closure_batch_buf *b = my_buf;

	if (b && b->n && !b->depth)
		hand_over(b, b->n);
}

uint64_t closure_batch_due(void)
{
	struct closure_batch_buf *b = my_buf;

	if (!b || !b->n || !b->first_ts || b->depth || polled_by_recorder(closure_clock_ns()))
		return 0;
	return b->first_ts + BATCH_MAX_AGE_NS;
}

/* A forked child starts with empty buffers: the parent hands over its own records. */
static void in_child(void)
{
	struct closure_batch_registry *g = &closure_batch_registry;
	struct closure_batch_buf *was = my_buf;

	/* The sink's buffers are shared with the parent: it gives the child its own first. */
	switch (closure_batch_sink_forked(g->head, &my_buf)) {
	case CLOSURE_SINK_FORK_OFF:
		for (struct closure_batch_buf *b = g->head; b; b = b->next) {
			b->n = 0;
			b->dropped = 0;
			if (b != my_buf)
				b->owner = 0; /* its thread is not in this process */
		}
		break;
	case CLOSURE_SINK_FORK_ENDED: /* its raise at start-up undone */
		__atomic_sub_fetch(&closure_batch_semaphore, 1, __ATOMIC_RELAXED);
		break;
	case CLOSURE_SINK_FORK_BROKEN: /* stops before a write to the parent's file */
		__atomic_store_n(&closure_batch_semaphore, 0, __ATOMIC_RELAXED);
		break;
	case CLOSURE_SINK_FORK_ON:
		break;
	}
	if (was && !my_buf)
		pthread_setspecific(exit_key, NULL);
	if (my_buf)
		my_buf->tid = (uint32_t)syscall(SYS_gettid);
	g->handed = g->consumed = 0;
	g->behind_limit = 0; /* the parent's recorder does not read this process's batches */
	g->trees = g->trees_left_out = 0; /* the parent's were counted in the parent */
}

__attribute__((constructor)) static void batch_init(void)
{
	pthread_atfork(NULL, NULL, in_child);
	sample_from_env();
	if (closure_batch_sink_start()) /* batching on for the life of the image, as if traced */
		__atomic_add_fetch(&closure_batch_semaphore, 1, __ATOMIC_RELAXED);
}

/*
 * At exit: this thread's records, and those of threads still running (best effort: a thread
 * appending at this very moment races with exit anyway).
 */
__attribute__((destructor)) static void batch_exit(void)
{
	struct closure_batch_buf *b;

	if (!CLOSURE_BATCH_ON())
		return;
	closure_batch_flush();
	for (b = closure_batch_registry.head; b; b = b->next)
		if (b != my_buf && b->owner && b->n && !b->depth)
			hand_over(b, b->n);
	closure_batch_sink_stop();
}
