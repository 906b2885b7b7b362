/*
 * Rebuilding closure lives from events. Memory: one entry per address ever used (for the ADDR#N
 * numbering), the lives still unfinished (all of them with keep_finished), the kinds, the symbols,
 * and a fixed reorder window.
 */
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Events from different CPUs arrive slightly out of time order; this many are held back. */
#define REORDER_WINDOW 4096
#define HIST_SUB       32
#define HIST_BUCKETS   (HIST_SUB * 60)
#define COUNT_MASK     0x00ffffffu

/*
 * One slot per address of one process: its current life and how many lives it had. A trace of
 * several processes (check follows forks) sees the same addresses in each, so pid is in the key.
 */
struct addr_slot {
	int64_t pid; /* 0: the trace names no process per event */
	uint64_t addr;
	struct model_life *life;
	unsigned lives;
	uint32_t peak; /* the highest count its latest life reached: tells late events apart */
	bool used;
};

struct pending {
	int64_t ts;
	uint64_t seq;
	uint32_t slot;
};

struct watched {
	unsigned nth;
	struct trace_event ev;
};

struct model {
	bool keep_finished;
	size_t strip; /* leading bytes of absolute file names that site texts leave out */
	struct addr_slot *slots;
	size_t nslots, used_slots;
	struct model_sym *syms;
	size_t nsyms_slots, nsyms;
	struct model_kind *kinds;
	struct model_kind **kind_slots;
	size_t nkind_slots, nkinds;
	struct model_life *first, *last;
	uint64_t nr_lives, nr_finished, nr_events, nr_reordered, nr_late;
	int64_t last_ts, max_seen_ts;
	/* The reorder window: events in slots, their keys in a ring sorted by (ts, seq). */
	struct trace_event *held;
	uint32_t *free_slots, nfree;
	struct pending *ring;
	size_t head, pending;
	bool watching;
	uint64_t watch_addr;
	struct watched *watched;
	size_t nwatched, capwatched;
	struct trace_event *watch_out;
	bool exited;
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "closuretrace: out of memory\n");
		exit(2);
	}
	return p;
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		fprintf(stderr, "closuretrace: out of memory\n");
		exit(2);
	}
	return p;
}

static inline size_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

/* ---- addresses ---- */

static uint64_t slot_hash(int64_t pid, uint64_t addr)
{
	return hash64(addr ^ ((uint64_t)pid * 0x9e3779b97f4a7c15ull));
}

static struct addr_slot *slot_of(struct model *m, int64_t pid, uint64_t addr)
{
	size_t mask, i;

	if ((m->used_slots + 1) * 2 > m->nslots) {
		struct addr_slot *old = m->slots;
		size_t n = m->nslots;

		m->nslots = n ? n * 2 : 1024;
		m->slots = xcalloc(m->nslots, sizeof(*m->slots));
		m->used_slots = 0;
		for (size_t j = 0; j < n; j++) {
			if (!old[j].used)
				continue;
			*slot_of(m, old[j].pid, old[j].addr) = old[j];
			m->used_slots++;
		}
		free(old);
	}
	mask = m->nslots - 1;
	for (i = slot_hash(pid, addr) & mask; m->slots[i].used; i = (i + 1) & mask)
		if (m->slots[i].addr == addr && m->slots[i].pid == pid)
			return &m->slots[i];
	m->slots[i].used = true;
	m->slots[i].pid = pid;
	m->slots[i].addr = addr;
	m->used_slots++;
	return &m->slots[i];
}

static struct addr_slot *slot_find(struct model *m, int64_t pid, uint64_t addr)
{
	size_t mask = m->nslots - 1;

	if (!m->nslots)
		return NULL;
	for (size_t i = slot_hash(pid, addr) & mask; m->slots[i].used; i = (i + 1) & mask)
		if (m->slots[i].addr == addr && m->slots[i].pid == pid)
			return &m->slots[i];
	return NULL;
}

/* ---- symbols ---- */

static struct model_sym *sym_slot(struct model *m, uint64_t addr, bool create)
{
	size_t mask, i;

	if (create && (m->nsyms + 1) * 2 > m->nsyms_slots) {
		struct model_sym *old = m->syms;
		size_t n = m->nsyms_slots;

		m->nsyms_slots = n ? n * 2 : 256;
		m->syms = xcalloc(m->nsyms_slots, sizeof(*m->syms));
		m->nsyms = 0;
		for (size_t j = 0; j < n; j++) {
			if (!old[j].addr)
				continue;
			*sym_slot(m, old[j].addr, true) = old[j];
		}
		free(old);
	}
	if (!m->nsyms_slots || !addr)
		return NULL;
	mask = m->nsyms_slots - 1;
	for (i = hash64(addr) & mask; m->syms[i].addr; i = (i + 1) & mask)
		if (m->syms[i].addr == addr)
			return &m->syms[i];
	if (!create)
		return NULL;
	m->syms[i].addr = addr;
	m->nsyms++;
	return &m->syms[i];
}

/* A copy with control characters made visible, so that no output carries them raw. */
static char *clean_dup(const char *s)
{
	char *copy = s ? strdup(s) : NULL;

	for (char *p = copy; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return copy;
}

static void on_sym(void *ctx, const struct trace_sym *sym)
{
	struct model *m = ctx;
	struct model_sym *s = sym_slot(m, sym->addr, true);

	if (!s)
		return;
	free(s->func);
	free(s->file);
	s->func = clean_dup(sym->func);
	s->file = clean_dup(sym->file);
	s->line = sym->line;
}

const struct model_sym *model_sym(struct model *m, uint64_t addr)
{
	return sym_slot(m, addr, false);
}

/* ---- kinds ---- */

static struct model_kind *kind_of(struct model *m, uint64_t init_ip, uint64_t fn)
{
	size_t mask, i;
	struct model_kind *k;

	if ((m->nkinds + 1) * 2 > m->nkind_slots) {
		size_t n = m->nkind_slots ? m->nkind_slots * 2 : 64;

		free(m->kind_slots);
		m->kind_slots = xcalloc(n, sizeof(*m->kind_slots));
		m->nkind_slots = n;
		for (k = m->kinds; k; k = k->next) {
			for (i = hash64(k->init_ip * 31 + k->fn) & (n - 1); m->kind_slots[i];
			     i = (i + 1) & (n - 1))
				;
			m->kind_slots[i] = k;
		}
	}
	mask = m->nkind_slots - 1;
	for (i = hash64(init_ip * 31 + fn) & mask; (k = m->kind_slots[i]); i = (i + 1) & mask)
		if (k->init_ip == init_ip && k->fn == fn)
			return k;
	k = xcalloc(1, sizeof(*k));
	k->init_ip = init_ip;
	k->fn = fn;
	k->next = m->kinds;
	m->kinds = k;
	m->kind_slots[i] = k;
	m->nkinds++;
	return k;
}

static unsigned hist_index(uint64_t v)
{
	unsigned e, shift;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	shift = e - 5;
	return (shift + 1) * HIST_SUB + (unsigned)((v >> shift) - HIST_SUB);
}

/* The middle of a bucket. */
static uint64_t hist_value(unsigned idx)
{
	unsigned shift;

	if (idx < HIST_SUB)
		return idx;
	shift = idx / HIST_SUB - 1;
	return ((uint64_t)(idx % HIST_SUB + HIST_SUB) << shift) + ((1ULL << shift) >> 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t model_kind_percentile(const struct model_kind *k, double p)
{
	uint64_t n = k->finished, rank, seen = 0;

	if (!n)
		return 0;
	/* Nearest rank: the smallest value with at least p% of the values at or below it. */
	rank = (uint64_t)((p / 100.0) * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	if (n <= MODEL_EXACT_SAMPLES) {
		uint64_t sorted[MODEL_EXACT_SAMPLES];

		memcpy(sorted, k->samples, n * sizeof(sorted[0]));
		qsort(sorted, n, sizeof(sorted[0]), cmp_u64);
		return sorted[rank - 1];
	}
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += k->hist[i];
		/* A bucket's middle may lie above the largest value in it: never past the max. */
		if (seen >= rank)
			return rank == n || hist_value(i) > k->max_ns ? k->max_ns : hist_value(i);
	}
	return k->max_ns;
}

static struct model_site *site_in(struct model_site **sites, unsigned *n, unsigned *cap,
				  uint64_t ip)
{
	for (unsigned i = 0; i < *n; i++)
		if ((*sites)[i].ip == ip)
			return &(*sites)[i];
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 4;
		*sites = xrealloc(*sites, *cap * sizeof(**sites));
	}
	(*sites)[*n] = (struct model_site){.ip = ip};
	return &(*sites)[(*n)++];
}

static struct model_site *site_of(struct model_life *l, uint64_t ip)
{
	return site_in(&l->sites, &l->nsites, &l->capsites, ip);
}

static void kind_add_finished(struct model *m, struct model_life *l)
{
	struct model_kind *k = kind_of(m, l->init_ip, l->first_fn);
	uint64_t life = l->end_ts >= l->start_ts ? (uint64_t)l->end_ts - (uint64_t)l->start_ts : 0;

	l->kind = k;
	k->total++;
	if (k->finished < MODEL_EXACT_SAMPLES)
		k->samples[k->finished] = life;
	if (k->finished == MODEL_EXACT_SAMPLES) {
		k->hist = xcalloc(HIST_BUCKETS, sizeof(*k->hist));
		for (unsigned i = 0; i < MODEL_EXACT_SAMPLES; i++)
			k->hist[hist_index(k->samples[i])]++;
	}
	if (k->hist)
		k->hist[hist_index(life)]++;
	k->finished++;
	if (life > k->max_ns)
		k->max_ns = life;
	for (unsigned i = 0; i < l->nsites; i++) {
		struct model_site *s = site_in(&k->sites, &k->nsites, &k->capsites, l->sites[i].ip);

		s->taken += l->sites[i].taken;
		s->put += l->sites[i].put;
		s->child_taken += l->sites[i].child_taken;
		s->child_put += l->sites[i].child_put;
	}
}

/* ---- lives ---- */

static struct model_life *life_new(struct model *m, struct addr_slot *slot, int64_t ts)
{
	struct model_life *l = xcalloc(1, sizeof(*l));

	l->pid = slot->pid;
	l->addr = slot->addr;
	l->nth = ++slot->lives;
	l->seq = m->nr_lives++;
	l->start_ts = l->last_ts = ts;
	l->prev = m->last;
	if (m->last)
		m->last->next = l;
	else
		m->first = l;
	m->last = l;
	slot->life = l;
	return l;
}

static void unlink_child(struct model_life *c)
{
	struct model_life *p = c->parent;

	if (!p)
		return;
	if (c->prev_sibling)
		c->prev_sibling->next_sibling = c->next_sibling;
	else
		p->first_child = c->next_sibling;
	if (c->next_sibling)
		c->next_sibling->prev_sibling = c->prev_sibling;
	else
		p->last_child = c->prev_sibling;
	c->parent = c->next_sibling = c->prev_sibling = NULL;
}

static void link_child(struct model_life *p, struct model_life *c)
{
	c->parent = p;
	c->prev_sibling = p->last_child;
	if (p->last_child)
		p->last_child->next_sibling = c;
	else
		p->first_child = c;
	p->last_child = c;
}

/* Report mode: a finished life is folded into its kind and forgotten. */
static void life_free(struct model *m, struct model_life *l)
{
	struct addr_slot *slot = slot_find(m, l->pid, l->addr);

	if (slot && slot->life == l)
		slot->life = NULL;
	unlink_child(l);
	while (l->first_child) {
		struct model_life *c = l->first_child;

		unlink_child(c);
	}
	if (l->prev)
		l->prev->next = l->next;
	else
		m->first = l->next;
	if (l->next)
		l->next->prev = l->prev;
	else
		m->last = l->prev;
	free(l->sites);
	free(l);
}

static void life_finished(struct model *m, struct model_life *l, int64_t ts)
{
	l->finished = true;
	l->end_ts = ts;
	if (l->state != MODEL_DESTROYED)
		l->state = MODEL_FINISHED;
	m->nr_finished++;
	kind_add_finished(m, l);
}

/* A life is over for the model: freed now unless kept or a destructor event is still due. */
static void maybe_free(struct model *m, struct model_life *l)
{
	/* The watched address keeps its lives: explain tells finished ones too. */
	if (!m->keep_finished && l->finished && !(m->watching && l->addr == m->watch_addr) &&
	    !(l->flags & TRACE_FLAG_DESTRUCTOR && !l->destructor_fn))
		life_free(m, l);
}

/* A stack closure is finished once its closure_sync returned with nothing outstanding. */
static void settle_stack(struct model *m, struct model_life *l)
{
	if (l->stack && l->synced && !l->finished)
		life_finished(m, l, l->end_ts);
}

/* A stack closure that holds its running reference and nothing else: no child, no waitlist. */
static bool holds_only_running(const struct model_life *l)
{
	if (!l->stack || l->finished || l->remaining != 1 || l->flags != TRACE_FLAG_RUNNING ||
	    l->state != MODEL_RUNNING)
		return false;
	for (const struct model_life *c = l->first_child; c; c = c->next_sibling)
		if (!c->finished)
			return false;
	return true;
}

/*
 * Its frame was left (the address was initialised again, or the process exited): kernel code
 * returns on fast paths without closure_sync when nothing was taken, and that ends the closure.
 */
static void leave_frame(struct model *m, struct model_life *l)
{
	if (!holds_only_running(l))
		return;
	l->frame_left = true;
	l->release_ip = 0;
	life_finished(m, l, l->last_ts);
}

static struct model_life *life_for_parent(struct model *m, int64_t pid, uint64_t addr, int64_t ts)
{
	struct addr_slot *slot;

	if (!addr)
		return NULL;
	slot = slot_of(m, pid, addr);
	if (slot->life && !slot->life->finished)
		return slot->life;
	/* The parent was set up before recording began. */
	slot->life = life_new(m, slot, ts);
	slot->life->before_recording = true;
	slot->life->remaining = -1;
	return slot->life;
}

static void watch(struct model *m, const struct model_life *l, const struct trace_event *ev)
{
	if (m->nwatched == m->capwatched) {
		m->capwatched = m->capwatched ? m->capwatched * 2 : 64;
		m->watched = xrealloc(m->watched, m->capwatched * sizeof(*m->watched));
	}
	m->watched[m->nwatched].nth = l->nth;
	m->watched[m->nwatched++].ev = *ev;
}

/*
 * An event after its closure finished, with no init since, that fits the finished life: its
 * count is one the life went through on the way down (a get on a finished closure leaves 1, and
 * a put after the finish aborts in the library), so it happened before the finish.
 */
static bool reported_late(const struct addr_slot *slot, const struct trace_event *ev)
{
	if (ev->op == TRACE_GET)
		return ev->remaining >= 2 && ev->remaining <= slot->peak;
	return ev->remaining < slot->peak;
}

static void apply(struct model *m, const struct trace_event *ev)
{
	struct addr_slot *slot = slot_of(m, ev->pid, ev->cl);
	struct model_life *l = slot->life;
	bool latest;

	m->nr_events++;
	if (ev->op == TRACE_INIT) {
		if (l) {
			/* The address is used again: that life is over, finished or not. */
			settle_stack(m, l);
			leave_frame(m, l);
			if (!l->finished)
				l->reused = true;
			slot->life = NULL;
			maybe_free(m, l);
		}
		l = life_new(m, slot, ev->ts);
		l->init_ip = l->running_from = ev->ip;
		l->stack = ev->stack;
		l->parent_addr = ev->parent;
		if (ev->parent) {
			struct model_life *p = life_for_parent(m, ev->pid, ev->parent, ev->ts);

			link_child(p, l);
			site_of(p, ev->ip)->child_taken++;
			/* a new parent's slot may have grown the table */
			slot = slot_of(m, ev->pid, ev->cl);
		}
	} else if (ev->op == TRACE_DESTROY && (!l || l->finished)) {
		return; /* the library's own finish lets the memory go too: nothing new */
	} else if (l && l->destroyed) {
		return; /* the finish of a closure destroyed while it ran: its life is over */
	} else if (!l || (l->finished && ev->op != TRACE_DESTRUCTOR)) {
		if (!l && ev->op == TRACE_DESTRUCTOR && slot->lives)
			return; /* the destructor of a life already folded into its kind */
		/* First seen without its init: created before recording began, or used again
		 * after it finished (a bug, or its init was lost). */
		bool again = slot->lives > 0;

		/*
		 * Or reported late: a thread preempted between an operation and its probe reports
		 * it after the put that finished the closure, time stamp and all.
		 */
		if (again && reported_late(slot, ev)) {
			m->nr_late++;
			return;
		}

		if (l)
			slot->life = NULL;
		l = life_new(m, slot, ev->ts);
		l->before_recording = true;
		l->no_init = again;
		l->first_ip = ev->ip;
		l->state = ev->flags & TRACE_FLAG_RUNNING ? MODEL_RUNNING : MODEL_UNKNOWN;
	}
	if (ev->op == TRACE_INIT)
		slot->peak = 0;
	if (ev->remaining > slot->peak)
		slot->peak = ev->remaining;
	l->nevents++;
	if (m->watching && ev->cl == m->watch_addr)
		watch(m, l, ev);
	/* Counts are commutative; the state comes from the latest event in time. */
	latest = ev->ts >= l->last_ts;
	if (ev->op != TRACE_SYNC_END && ev->op != TRACE_FINISH && ev->op != TRACE_DESTRUCTOR)
		l->synced = false;
	if (latest && (ev->op == TRACE_RUN || ev->op == TRACE_SYNC_BEGIN))
		l->sync_timed_out = false;
	switch (ev->op) {
	case TRACE_INIT:
		l->state = MODEL_RUNNING;
		break;
	case TRACE_GET:
		site_of(l, ev->ip)->taken++;
		break;
	case TRACE_PUT:
		site_of(l, ev->ip)->put++;
		break;
	case TRACE_SUB:
		site_of(l, ev->ip)->put += (uint32_t)(ev->v & COUNT_MASK);
		break;
	case TRACE_CONTINUE_AT:
		if (ev->how == TRACE_HOW_DESTRUCTOR) {
			l->destructor_fn = 0;
		} else {
			l->fn = ev->fn;
			l->wq = ev->wq;
			if (!l->first_fn)
				l->first_fn = ev->fn;
		}
		l->how = ev->how;
		if (latest && ev->how != TRACE_HOW_NOBARRIER)
			l->state = MODEL_CONTINUING;
		break;
	case TRACE_RUN:
		l->fn = ev->fn;
		l->wq = ev->wq;
		l->running_from = ev->fn;
		if (!l->first_fn)
			l->first_fn = ev->fn;
		if (latest)
			l->state = MODEL_RUNNING;
		break;
	case TRACE_FINISH:
		l->release_ip = ev->ip;
		if (l->parent)
			site_of(l->parent, ev->ip)->child_put++;
		l->flags = ev->flags;
		life_finished(m, l, ev->ts);
		break;
	case TRACE_DESTRUCTOR:
		l->destructor_fn = ev->fn ? ev->fn : 1;
		l->state = MODEL_DESTROYED;
		break;
	case TRACE_WAIT:
		l->on_waitlist = true;
		l->waitlist = ev->waitlist;
		l->wait_ip = ev->ip;
		l->wait_ts = ev->ts;
		break;
	case TRACE_WAKE:
		l->on_waitlist = false;
		break;
	case TRACE_SYNC_BEGIN:
		if (ev->flags & TRACE_FLAG_SLEEPING) {
			l->sync_ip = ev->ip;
			l->sync_ts = ev->ts;
			if (latest)
				l->state = MODEL_SYNCING;
		}
		break;
	case TRACE_SYNC_END:
		if (latest) {
			l->state = MODEL_RUNNING;
			l->sync_timed_out = ev->ret != 0;
			l->sync_ip = ev->ip;
		}
		if (l->stack && ev->remaining == 1) {
			l->synced = true;
			l->end_ts = ev->ts;
		}
		break;
	case TRACE_BUG:
		snprintf(l->bug, sizeof(l->bug), "%s", ev->bug[0] ? ev->bug : "bug");
		break;
	case TRACE_DESTROY:
		/* closure_debug_destroy before its memory is freed (bcache's search_free): its end
		 */
		if (!l->finished) {
			l->destroyed = true;
			l->release_ip = ev->ip;
			l->state = MODEL_DESTROYED;
			life_finished(m, l, ev->ts);
		}
		break;
	case TRACE_NR_OPS:
		break;
	}
	if (latest) {
		l->last_ts = ev->ts;
		l->remaining = ev->remaining;
		l->flags = ev->flags;
	}
	if (ev->op == TRACE_FINISH || ev->op == TRACE_DESTRUCTOR || ev->op == TRACE_DESTROY)
		maybe_free(m, l);
}

/*
 * ---- the reorder window ----
 * Events arrive nearly in time order, so each key is inserted from the newest end of a sorted
 * ring: in order, that is one step; an event a few places late moves a few keys (24 bytes each).
 */

static bool before(const struct pending *a, const struct pending *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

#define RING(i) m->ring[(m->head + (i)) & (REORDER_WINDOW - 1)]

static void window_pop(struct model *m)
{
	struct pending oldest = RING(0);

	m->head = (m->head + 1) & (REORDER_WINDOW - 1);
	m->pending--;
	apply(m, &m->held[oldest.slot]);
	m->free_slots[m->nfree++] = oldest.slot;
}

static void on_event(void *ctx, const struct trace_event *ev)
{
	struct model *m = ctx;
	struct pending key = {.ts = ev->ts, .seq = ev->seq};
	size_t i;

	if (ev->ts < m->max_seen_ts)
		m->nr_reordered++;
	else
		m->max_seen_ts = ev->ts;
	if (m->pending == REORDER_WINDOW)
		window_pop(m);
	key.slot = m->free_slots[--m->nfree];
	m->held[key.slot] = *ev;
	for (i = m->pending; i > 0 && before(&key, &RING(i - 1)); i--)
		RING(i) = RING(i - 1);
	RING(i) = key;
	m->pending++;
}

const struct trace_sink model_sink = {.event = on_event, .sym = on_sym};

bool model_exited(const struct model *m)
{
	return m->exited;
}

void model_end(struct model *m, bool exited)
{
	while (m->pending)
		window_pop(m);
	m->last_ts = m->nr_events ? m->max_seen_ts : 0;
	m->exited = exited;
	for (struct model_life *l = m->first; exited && l; l = l->next) {
		settle_stack(m, l);
		leave_frame(m, l);
	}
	for (struct model_life *l = m->first, *next; l; l = next) {
		next = l->next;
		settle_stack(m, l);
		if (!l->finished) {
			l->kind = kind_of(m, l->init_ip, l->first_fn);
			l->kind->total++;
			l->kind->unfinished++;
		}
		maybe_free(m, l);
	}
}

struct model *model_new(bool keep_finished)
{
	struct model *m = xcalloc(1, sizeof(*m));

	m->keep_finished = keep_finished;
	m->max_seen_ts = INT64_MIN;
	m->held = xcalloc(REORDER_WINDOW, sizeof(*m->held));
	m->ring = xcalloc(REORDER_WINDOW, sizeof(*m->ring));
	m->free_slots = xcalloc(REORDER_WINDOW, sizeof(*m->free_slots));
	for (uint32_t i = 0; i < REORDER_WINDOW; i++)
		m->free_slots[m->nfree++] = REORDER_WINDOW - 1 - i;
	return m;
}

void model_watch(struct model *m, uint64_t addr)
{
	m->watching = true;
	m->watch_addr = addr;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (struct model_life *l = m->first, *next; l; l = next) {
		next = l->next;
		free(l->sites);
		free(l);
	}
	for (struct model_kind *k = m->kinds, *next; k; k = next) {
		next = k->next;
		free(k->hist);
		free(k->sites);
		free(k);
	}
	for (size_t i = 0; i < m->nsyms_slots; i++) {
		free(m->syms[i].func);
		free(m->syms[i].file);
	}
	free(m->syms);
	free(m->slots);
	free(m->kind_slots);
	free(m->held);
	free(m->ring);
	free(m->free_slots);
	free(m->watched);
	free(m->watch_out);
	free(m);
}

struct model_life *model_lives(struct model *m)
{
	return m->first;
}

struct model_kind *model_kinds(struct model *m)
{
	return m->kinds;
}

uint64_t model_nr_lives(struct model *m)
{
	return m->nr_lives;
}

uint64_t model_nr_finished(struct model *m)
{
	return m->nr_finished;
}

uint64_t model_nr_events(struct model *m)
{
	return m->nr_events;
}

uint64_t model_nr_reordered(struct model *m)
{
	return m->nr_reordered;
}

uint64_t model_nr_late(struct model *m)
{
	return m->nr_late;
}

int64_t model_last_ts(struct model *m)
{
	return m->last_ts;
}

struct model_life *model_find(struct model *m, uint64_t addr, unsigned nth)
{
	struct model_life *found = NULL;

	for (struct model_life *l = m->first; l; l = l->next)
		if (l->addr == addr && (!nth || l->nth == nth))
			found = l;
	return found;
}

/* The most lives the address had in any one process of the trace. */
unsigned model_lives_at(struct model *m, uint64_t addr)
{
	unsigned most = 0;

	for (size_t i = 0; i < m->nslots; i++)
		if (m->slots[i].used && m->slots[i].addr == addr && m->slots[i].lives > most)
			most = m->slots[i].lives;
	return most;
}

const struct trace_event *model_watched(struct model *m, uint64_t addr, unsigned nth, size_t *n)
{
	size_t k = 0;

	free(m->watch_out);
	m->watch_out = xcalloc(m->nwatched + 1, sizeof(*m->watch_out));
	for (size_t i = 0; i < m->nwatched; i++)
		if (m->watched[i].ev.cl == addr && m->watched[i].nth == nth)
			m->watch_out[k++] = m->watched[i].ev;
	*n = k;
	return m->watch_out;
}

/* ---- text ---- */

static const char *shown_file(struct model *m, const char *file)
{
	return file[0] == '/' && strlen(file) > m->strip ? file + m->strip : file;
}

const char *model_common_dir(struct model *m, size_t *len)
{
	const char *first = NULL;
	size_t common = 0;

	for (size_t i = 0; i < m->nsyms_slots; i++) {
		const char *f = m->syms[i].file;
		size_t n = 0;

		if (!m->syms[i].addr || !f || f[0] != '/')
			continue;
		if (!first) {
			first = f;
			common = strlen(f);
			continue;
		}
		while (n < common && f[n] && f[n] == first[n])
			n++;
		common = n;
	}
	while (common && first[common - 1] != '/')
		common--; /* whole directories only */
	*len = common;
	return common > 1 ? first : NULL;
}

void model_strip_files(struct model *m, size_t bytes)
{
	m->strip = bytes;
}

const char *model_site_text(struct model *m, uint64_t ip, char *buf, size_t len)
{
	const struct model_sym *s = model_sym(m, ip);

	if (!ip)
		snprintf(buf, len, "(unknown site)");
	else if (s && s->file && s->line > 0)
		snprintf(buf, len, "%s:%ld", shown_file(m, s->file), s->line);
	else if (s && s->file)
		snprintf(buf, len, "%s", shown_file(m, s->file));
	else if (s && s->func)
		snprintf(buf, len, "%s", s->func);
	else
		snprintf(buf, len, "0x%" PRIx64, ip);
	return buf;
}

const char *model_func_text(struct model *m, uint64_t addr, char *buf, size_t len)
{
	const struct model_sym *s = model_sym(m, addr);

	if (!addr)
		snprintf(buf, len, "-");
	else if (s && s->func)
		snprintf(buf, len, "%s", s->func);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

const char *model_life_key(const struct model_life *l, char *buf, size_t len)
{
	snprintf(buf, len, "0x%" PRIx64 "#%u", l->addr, l->nth);
	return buf;
}

const char *model_life_name(const struct model_life *l, char *buf, size_t len)
{
	size_t n = strlen(model_life_key(l, buf, len));

	/* Lives of several processes share addresses: name the process when the trace gives it. */
	if (l->pid && n + 1 < len)
		snprintf(buf + n, len - n, " (pid %lld)", (long long)l->pid);
	return buf;
}

const char *model_life_function(struct model *m, const struct model_life *l, char *buf, size_t len)
{
	if (l->fn)
		return model_func_text(m, l->fn, buf, len);
	if (l->first_fn)
		return model_func_text(m, l->first_fn, buf, len);
	if (l->init_ip)
		return model_func_text(m, l->init_ip, buf, len);
	if (l->first_ip && model_sym(m, l->first_ip) && model_sym(m, l->first_ip)->func)
		snprintf(buf, len, "? (first seen in %s)", model_sym(m, l->first_ip)->func);
	else
		snprintf(buf, len, "(unknown function)");
	return buf;
}

const char *model_origin_text(const struct model_life *l, char *buf, size_t len)
{
	if (l->no_init)
		snprintf(buf, len, "no init: used after #%u finished", l->nth - 1);
	else
		snprintf(buf, len, "created before recording");
	return buf;
}

const char *model_duration_text(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f µs", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	return buf;
}

const char *model_state_text(struct model *m, const struct model_life *l, char *buf, size_t len)
{
	char fn[256], site[512];

	switch (l->state) {
	case MODEL_FINISHED:
		snprintf(buf, len,
			 l->frame_left		      ? "finished (its frame was left)"
			 : l->stack && !l->release_ip ? "finished (closure_sync returned)"
						      : "finished");
		break;
	case MODEL_DESTROYED:
		snprintf(buf, len, "destroyed");
		break;
	case MODEL_SYNCING:
		snprintf(buf, len, "inside closure_sync at %s",
			 model_site_text(m, l->sync_ip, site, sizeof(site)));
		break;
	case MODEL_CONTINUING:
		if (l->how == TRACE_HOW_RETURN || (!l->fn && l->how != TRACE_HOW_DESTRUCTOR))
			snprintf(buf, len, "returning (waits for its references)");
		else if (l->how == TRACE_HOW_DESTRUCTOR)
			snprintf(buf, len, "returning with destructor %s",
				 model_func_text(m, l->fn, fn, sizeof(fn)));
		else if (l->wq)
			snprintf(buf, len, "continuing at %s on wq 0x%" PRIx64,
				 model_func_text(m, l->fn, fn, sizeof(fn)), l->wq);
		else
			snprintf(buf, len, "continuing at %s",
				 model_func_text(m, l->fn, fn, sizeof(fn)));
		break;
	case MODEL_RUNNING:
		if (l->sync_timed_out)
			snprintf(buf, len, "running: closure_sync at %s timed out",
				 model_site_text(m, l->sync_ip, site, sizeof(site)));
		else
			snprintf(buf, len, "running");
		break;
	case MODEL_UNKNOWN:
		snprintf(buf, len, "state unknown (first seen mid-life)");
		break;
	}
	if (l->on_waitlist && !l->finished) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, ", waiting on waitlist 0x%" PRIx64, l->waitlist);
	}
	return buf;
}
