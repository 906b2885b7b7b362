/* Decoding batches: see batch_decode.h. */
#include <stdlib.h>
#include <string.h>

#include "batch_decode.h"
#include "hashmap.h"
#include "time_order.h"

_Static_assert(sizeof(struct closure_batch_record) == CT_BATCH_RECORD_SIZE, "record layout");
_Static_assert(CLOSURE_BATCH_RECORDS == CT_BATCH_MAX, "buffer size");

/* An event waiting for its turn in the time order. */
struct held_event {
	struct time_key key; /* the event's time, its arrival */
	uint32_t pid;
	struct ct_event e;
};

/* Sequence numbers received, [lo, hi), unwrapped to 64 bits. */
struct span {
	uint64_t lo, hi;
};

/*
 * A stream's received sequence numbers, keyed by (pid, stream key): a few spans, since records
 * arrive by other paths (a poll, a drain) ahead of batches still in the ring buffer, and a batch
 * lost in the ring leaves a gap for good.
 */
struct thread_seq {
	uint32_t src;	   /* its events' queue in the merge */
	uint32_t pid;	   /* its process, for batch_decoder_on_gap */
	bool done;	   /* its process (image) ended: nothing more to come */
	bool cand_set;	   /* the sweep under way has a frontier for it */
	bool cand_done;	   /* ... or found its process gone */
	uint64_t frontier; /* no record still to come is older */
	uint64_t cand;
	uint32_t n, cap;
	struct span *spans; /* sorted, disjoint, not adjacent */
};

struct batch_decoder {
	uint64_t not_before;
	batch_emit_fn *emit;
	void *ctx;
	struct time_order merge;
	uint64_t order;
	struct hashmap threads; /* (pid, stream key) -> struct thread_seq */
	uint64_t dups, forgotten, stale, refused, early, late;
	uint64_t early_until; /* the newest time an event left early at (0: none did) */
	batch_gap_fn *on_gap; /* told of each gap given up (NULL: none) */
	size_t spans;	  /* the spans' room over every stream (BATCH_SPANS_TOTAL_MAX) */
	int64_t injected; /* the source of batch_decoder_inject, -1 until its first event */
	bool sweeping;
	uint64_t sweep_at;  /* the clock of the sweep under way */
	uint64_t committed; /* the clock of the last committed sweep: a new stream's frontier */
};

struct batch_decoder *batch_decoder_new(uint64_t not_before_ns, batch_emit_fn *emit, void *ctx)
{
	struct batch_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	hashmap_init(&d->threads, sizeof(struct thread_seq));
	time_order_init(&d->merge, sizeof(struct held_event));
	d->injected = -1;
	d->not_before = not_before_ns;
	d->emit = emit;
	d->ctx = ctx;
	return d;
}

/* The earliest event held leaves. */
static void pop(struct batch_decoder *d)
{
	const struct held_event *it = time_order_first(&d->merge);

	d->emit(d->ctx, &it->e, it->pid);
	time_order_pop(&d->merge);
}

/*
 * Past the room, the oldest events leave before their frontiers say; one that comes later and
 * is older than them is lost (counted) rather than written out of time order.
 */
static bool push(struct batch_decoder *d, uint32_t src, struct held_event *it)
{
	if (it->e.ts < d->early_until) {
		d->late++;
		return true;
	}
	while (d->merge.held && d->merge.bytes >= BATCH_HELD_BYTES) {
		const struct held_event *first = time_order_first(&d->merge);

		if (first->e.ts > d->early_until)
			d->early_until = first->e.ts;
		d->early++;
		pop(d);
	}
	it->key.ts = it->e.ts;
	return time_order_push(&d->merge, src, it);
}

/* The sequence slot of (pid, buf), added when new; NULL past the cap. The pointer holds until
 * the next call that may add one (the map may move its entries). */
static struct thread_seq *thread_of(struct batch_decoder *d, uint32_t pid, uint64_t buf)
{
	struct thread_seq *t = hashmap_get(&d->threads, pid, buf);
	int64_t src;

	if (t)
		return t;
	if (hashmap_count(&d->threads) >= BATCH_STREAMS_MAX)
		return NULL; /* made up: more buffers than any process's threads have */
	src = time_order_source(&d->merge);
	if (src < 0)
		return NULL;
	t = hashmap_put(&d->threads, pid, buf, NULL);
	t->src = (uint32_t)src;
	t->pid = pid;
	t->frontier = d->committed;
	return t;
}

static void decode(const struct closure_batch_record *r, uint32_t tid, struct ct_event *e)
{
	memset(e, 0, sizeof(*e));
	e->ts = r->ts;
	e->ip = r->ip ? r->ip - 1 : 0; /* a return address: the call is the byte before */
	e->cl = r->cl;
	e->x4 = r->x4;
	e->x5 = r->x5;
	e->count = r->count;
	e->flags = r->flags;
	e->tid = tid;
	e->kind = r->op;
	e->x6 = r->x6;
}

static void decode_name(const struct closure_batch_record *r, uint32_t tid, struct ct_event *e)
{
	struct closure_batch_name n;

	memcpy(&n, r, sizeof(n));
	memset(e, 0, sizeof(*e));
	e->kind = CT_NAME;
	e->x6 = n.kind;
	e->tid = tid;
	e->ts = n.ts;
	e->count = (uint32_t)n.id;
	e->flags = (uint32_t)(n.id >> 32);
	memcpy(CT_NAME_BYTES(e), n.name, CLOSURE_BATCH_NAME_MAX);
}

/* seq as a 64-bit number, next to the stream's newest (numbers wrap at 2^32). */
static uint64_t unwrap(const struct thread_seq *t, uint32_t seq)
{
	uint64_t ref = t->n ? t->spans[t->n - 1].hi : 1ull << 32;

	return ref + (uint64_t)(int64_t)(int32_t)(seq - (uint32_t)ref);
}

/* The first span whose hi is above v (t->n when none). */
static uint32_t span_after(const struct thread_seq *t, uint64_t v)
{
	uint32_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (t->spans[mid].hi <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Marks v received: false when it was already (a duplicate), or when out of memory. Past
 * BATCH_SPANS_MAX gaps in one stream, the oldest gap is given up as lost (d->forgotten).
 */
static bool take(struct batch_decoder *d, struct thread_seq *t, uint64_t v)
{
	uint32_t i = span_after(t, v);

	if (i < t->n && t->spans[i].lo <= v)
		return false;
	if (i > 0 && t->spans[i - 1].hi == v) {
		t->spans[i - 1].hi++;
		if (i < t->n && t->spans[i].lo == v + 1) { /* the gap is closed */
			t->spans[i - 1].hi = t->spans[i].hi;
			memmove(&t->spans[i], &t->spans[i + 1], (t->n - i - 1) * sizeof(*t->spans));
			t->n--;
		}
		return true;
	}
	if (i < t->n && t->spans[i].lo == v + 1) {
		t->spans[i].lo--;
		return true;
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 4;
		struct span *v2;

		if (cap > BATCH_SPANS_MAX ||
		    (t->n >= 2 && d->spans + cap - t->cap > BATCH_SPANS_TOTAL_MAX)) {
			d->forgotten += t->spans[1].lo - t->spans[0].hi;
			if (d->on_gap)
				d->on_gap(d->ctx, t->pid, t->spans[1].lo - t->spans[0].hi);
			t->spans[1].lo = t->spans[0].lo;
			memmove(&t->spans[0], &t->spans[1], (t->n - 1) * sizeof(*t->spans));
			t->n--;
			i = span_after(t, v);
		} else if (!(v2 = realloc(t->spans, cap * sizeof(*v2)))) {
			return false;
		} else {
			d->spans += cap - t->cap;
			t->spans = v2;
			t->cap = cap;
		}
	}
	memmove(&t->spans[i + 1], &t->spans[i], (t->n - i) * sizeof(*t->spans));
	t->spans[i] = (struct span){v, v + 1};
	t->n++;
	return true;
}

size_t batch_decoder_feed(struct batch_decoder *d, uint32_t pid, uint32_t tid, uint64_t buf,
			  const struct closure_batch_record *recs, uint32_t n)
{
	struct thread_seq *t = thread_of(d, pid, buf);
	size_t added = 0;

	if (!t)
		d->refused += n;

	for (uint32_t i = 0; t && i < n; i++) {
		const struct closure_batch_record *r = &recs[i];
		struct held_event h = {.key.order = d->order++, .pid = pid};

		if (!take(d, t, unwrap(t, r->seq))) {
			d->dups++; /* seen already: handed over and also read by a poll or drain */
			continue;
		}
		if (r->ts < d->not_before) {
			d->stale++; /* left in its buffer by an earlier recording */
			continue;
		}
		if (r->op == CLOSURE_BATCH_OP_NAME)
			decode_name(r, tid, &h.e);
		else if (r->op < CT_NR_OPS)
			decode(r, tid, &h.e);
		else
			continue; /* a later library's record */
		added += push(d, t->src, &h);
	}
	return added;
}

bool batch_decoder_inject(struct batch_decoder *d, const struct ct_event *e, uint32_t pid)
{
	struct held_event h = {.key.order = d->order++, .pid = pid, .e = *e};

	if (e->ts < d->not_before)
		return false;
	if (d->injected < 0 && (d->injected = time_order_source(&d->merge)) < 0)
		return false;
	return push(d, (uint32_t)d->injected, &h);
}

uint64_t batch_decoder_refused(const struct batch_decoder *d)
{
	return d->refused;
}

uint32_t batch_decoder_received(struct batch_decoder *d, uint32_t pid, uint64_t buf, uint32_t seq0,
				uint32_t n)
{
	struct thread_seq *t = thread_of(d, pid, buf);
	uint64_t lo, hi;
	uint32_t got = 0;

	if (!t || !t->n)
		return 0;
	lo = unwrap(t, seq0);
	hi = lo + n;
	for (uint32_t i = span_after(t, lo); i < t->n && t->spans[i].lo < hi; i++) {
		uint64_t a = t->spans[i].lo > lo ? t->spans[i].lo : lo;
		uint64_t b = t->spans[i].hi < hi ? t->spans[i].hi : hi;

		got += (uint32_t)(b - a);
	}
	return got;
}

void batch_decoder_on_gap(struct batch_decoder *d, batch_gap_fn *fn)
{
	d->on_gap = fn;
}

uint64_t batch_decoder_forgotten(const struct batch_decoder *d)
{
	return d->forgotten;
}

uint64_t batch_decoder_duplicates(const struct batch_decoder *d)
{
	return d->dups;
}

uint64_t batch_decoder_stale(const struct batch_decoder *d)
{
	return d->stale;
}

void batch_decoder_sweep(struct batch_decoder *d, uint64_t now_ns)
{
	struct thread_seq *t;

	for (size_t pos = 0; (t = hashmap_next(&d->threads, &pos, NULL, NULL));)
		t->cand_set = t->cand_done = false;
	d->sweeping = true;
	d->sweep_at = now_ns;
}

bool batch_decoder_sweeping(const struct batch_decoder *d)
{
	return d->sweeping;
}

void batch_decoder_frontier(struct batch_decoder *d, uint32_t pid, uint64_t buf, uint64_t ts)
{
	struct thread_seq *t = d->sweeping ? thread_of(d, pid, buf) : NULL;

	if (ts > d->sweep_at)
		ts = d->sweep_at; /* nothing held back: what comes is stamped after the sweep began
				   */
	if (t && (!t->cand_set || ts < t->cand)) {
		t->cand = ts;
		t->cand_set = true;
	}
}

void batch_decoder_gone(struct batch_decoder *d, uint32_t pid, uint32_t image)
{
	struct thread_seq *t;
	uint64_t p, buf;

	for (size_t pos = 0; d->sweeping && (t = hashmap_next(&d->threads, &pos, &p, &buf));)
		if (p == pid && (buf >> 48) == (image & 0xffff))
			t->cand_done = true;
}

void batch_decoder_commit(struct batch_decoder *d)
{
	uint64_t horizon = d->sweep_at;
	const struct held_event *it;
	struct thread_seq *t;

	if (!d->sweeping)
		return;
	d->sweeping = false;
	for (size_t pos = 0; (t = hashmap_next(&d->threads, &pos, NULL, NULL));) {
		if (t->done)
			continue;
		t->done = t->cand_done;
		if (t->cand_set && t->cand > t->frontier)
			t->frontier = t->cand;
		if (!t->done && t->frontier < horizon)
			horizon = t->frontier;
	}
	d->committed = d->sweep_at;
	horizon = horizon > BATCH_CLOCK_SLACK_NS ? horizon - BATCH_CLOCK_SLACK_NS : 0;
	while ((it = time_order_first(&d->merge)) && it->e.ts < horizon)
		pop(d);
}

uint64_t batch_decoder_early(const struct batch_decoder *d)
{
	return d->early;
}

uint64_t batch_decoder_late(const struct batch_decoder *d)
{
	return d->late;
}

void batch_decoder_flush(struct batch_decoder *d)
{
	while (time_order_first(&d->merge))
		pop(d);
}

void batch_decoder_free(struct batch_decoder *d)
{
	struct thread_seq *t;

	if (!d)
		return;
	time_order_free(&d->merge);
	for (size_t pos = 0; (t = hashmap_next(&d->threads, &pos, NULL, NULL));)
		free(t->spans);
	hashmap_free(&d->threads);
	free(d);
}
