/*
 * Rebuilding closure lives from events. Memory: one entry per address ever used (for the ADDR#N
 * numbering), the lives still unfinished (all of them with keep_finished), the kinds, the symbols,
 * and a fixed reorder window.
 */
#include "model_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT_MASK 0x00ffffffu

/* ---- addresses ---- */

/* The slot of an address in a process, made on first use; good until the next slot is made. */
static struct addr_slot *slot_of(struct model *m, int64_t pid, uint64_t addr)
{
	return hashmap_put(&m->slots, addr, (uint64_t)pid, NULL);
}

static struct addr_slot *slot_find(struct model *m, int64_t pid, uint64_t addr)
{
	return hashmap_get(&m->slots, addr, (uint64_t)pid);
}

/* ---- lives ---- */

static struct model_site *site_of(struct model_life *l, uint64_t ip)
{
	return model_site_in(&l->sites, &l->nsites, &l->capsites, ip);
}

/* What the event being applied did to l's open gets, for the observer (model.h). */
static void moved(struct model *m, struct model_life *l, enum model_refs_move move, uint32_t pos,
		  uint32_t n)
{
	m->moved.life = l;
	m->moved.move = move;
	m->moved.pos = pos;
	m->moved.n = n;
}

/* A plain get: the newest open one (the oldest kept is forgotten when all are taken). */
static void open_push(struct model *m, struct model_life *l, uint64_t ip)
{
	if (l->nkept == MODEL_OPEN_GETS)
		memmove(l->open_get, l->open_get + 1, (MODEL_OPEN_GETS - 1) * sizeof(*l->open_get));
	else
		l->nkept++;
	l->open_get[l->nkept - 1] = ip;
	l->nopen++;
	moved(m, l, MODEL_REFS_TAKEN, l->nopen - 1, 1);
}

/*
 * n plain puts: each puts back the newest get still open. Which get a put gives back is not
 * known when the gets still open were taken at different sites (I/O completions come back in
 * any order): the pairing is then marked a guess.
 */
static void open_pop(struct model *m, struct model_life *l, uint64_t n)
{
	uint32_t before = l->nopen;

	if (n && l->nopen > l->nkept)
		l->open_guessed = true; /* some open gets were forgotten: their sites unknown */
	for (uint32_t i = 1; n && i < l->nkept && !l->open_guessed; i++)
		if (l->open_get[i] != l->open_get[0])
			l->open_guessed = true;
	for (; n && l->nopen; n--) {
		l->nopen--;
		if (l->nkept)
			l->nkept--;
	}
	if (l->nopen < before)
		moved(m, l, MODEL_REFS_GIVEN, l->nopen, before - l->nopen);
}

/* A child's init at ip: the get it took on its parent just before is the child's, not plain. */
static void open_forget_child(struct model *m, struct model_life *p, uint64_t ip)
{
	for (uint32_t i = p->nkept; i-- > 0;)
		if (p->open_get[i] == ip) {
			moved(m, p, MODEL_REFS_CHILD, p->nopen - p->nkept + i, 1);
			memmove(p->open_get + i, p->open_get + i + 1,
				(p->nkept - i - 1) * sizeof(*p->open_get));
			p->nkept--;
			p->nopen--;
			return;
		}
}

static struct model_life *life_new(struct model *m, struct addr_slot *slot, int64_t pid,
				   uint64_t addr, int64_t ts)
{
	struct model_life *l = xcalloc(1, sizeof(*l));

	l->pid = pid;
	l->addr = addr;
	l->nth = ++slot->lives;
	l->seq = m->n.lives++;
	l->start_ts = l->last_ts = ts;
	l->prev = m->last;
	*(m->last ? &m->last->next : &m->first) = l;
	m->last = l;
	slot->life = l;
	return l;
}

static void unlink_child(struct model_life *c)
{
	struct model_life *p = c->parent;

	if (!p)
		return;
	if (!c->done)
		p->open_children--;
	*(c->prev_sibling ? &c->prev_sibling->next_sibling : &p->first_child) = c->next_sibling;
	*(c->next_sibling ? &c->next_sibling->prev_sibling : &p->last_child) = c->prev_sibling;
	c->parent = c->next_sibling = c->prev_sibling = NULL;
}

static void link_child(struct model_life *p, struct model_life *c)
{
	p->open_children++;
	c->parent = p;
	c->prev_sibling = p->last_child;
	*(p->last_child ? &p->last_child->next_sibling : &p->first_child) = c;
	p->last_child = c;
}

/* Report mode: a finished life is folded into its kind and forgotten. */
void model_life_free(struct model *m, struct model_life *l)
{
	struct addr_slot *slot = slot_find(m, l->pid, l->addr);

	if (slot && slot->life == l)
		slot->life = NULL;
	unlink_child(l);
	while (l->first_child) {
		struct model_life *c = l->first_child;

		unlink_child(c);
	}
	*(l->prev ? &l->prev->next : &m->first) = l->next;
	*(l->next ? &l->next->prev : &m->last) = l->prev;
	model_folds_free(l->folds);
	free(l->sites);
	free(l->blames);
	free(l);
}

static void life_finished(struct model *m, struct model_life *l, int64_t ts)
{
	l->finished = true;
	l->end_ts = ts;
	if (l->state != MODEL_DESTROYED)
		l->state = MODEL_FINISHED;
	m->n.finished++;
	model_kind_add_finished(m, l);
	if (m->obs && m->obs->finished)
		m->obs->finished(m->obs_ctx, l);
}

static bool watched_life(const struct model *m, int64_t pid, uint64_t addr)
{
	/* pid 0: the trace names no process per event (viz_find_closure matches the header's). */
	return m->watching && addr == m->watch_id.addr &&
	       (!m->watch_id.pid || !pid || pid == m->watch_id.pid);
}

/* A life is over for the model: freed now unless kept or a destructor event is still due. */
static void maybe_free(struct model *m, struct model_life *l)
{
	/* The watched address keeps its lives: explain tells finished ones too. */
	if (!l->finished || watched_life(m, l->pid, l->addr) ||
	    (l->flags & TRACE_FLAG_DESTRUCTOR && !l->destructor_fn))
		return;
	if (!m->keep_finished)
		model_life_free(m, l);
	else if (m->fold_keep && !m->ending)
		model_fold_done(m, l, model_life_free);
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
	slot->life = life_new(m, slot, pid, addr, ts);
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

/* An init: a new life at the address; the one before it there is over, finished or not. */
static struct model_life *life_init(struct model *m, struct addr_slot **slot,
				    const struct trace_event *ev)
{
	struct model_life *l = (*slot)->life;

	if (l) {
		settle_stack(m, l);
		leave_frame(m, l);
		if (!l->finished)
			l->reused = true;
		(*slot)->life = NULL;
		maybe_free(m, l);
	}
	l = life_new(m, *slot, ev->pid, ev->cl, ev->ts);
	l->init_ip = l->running_from = ev->ip;
	l->stack = ev->stack;
	l->snapshot = ev->snapshot;
	l->parent_addr = ev->parent;
	/* A closure that is its own parent could never finish: named, never linked (a cycle
	 * would send every walk over parents round forever). */
	if (ev->parent && ev->parent != ev->cl) {
		struct model_life *p = life_for_parent(m, ev->pid, ev->parent, ev->ts);

		link_child(p, l);
		site_of(p, ev->ip)->child_taken++;
		open_forget_child(m, p, ev->ip);
		/* a new parent's slot may have grown the table */
		*slot = slot_of(m, ev->pid, ev->cl);
	}
	return l;
}

/* The observer sees each event once the model has it, before a finished life is forgotten. */
static void observe(struct model *m, const struct trace_event *ev, struct model_life *l)
{
	if (m->obs && m->obs->event)
		m->obs->event(m->obs_ctx, ev, l);
	if (m->obs && m->obs->refs && m->moved.life)
		m->obs->refs(m->obs_ctx, ev, m->moved.life, m->moved.move, m->moved.pos,
			     m->moved.n);
}

/*
 * The lookup step: the life an event belongs to, made when the event starts one; NULL when the
 * event is set aside (late, or of a life already over).
 */
static struct model_life *life_of_event(struct model *m, struct addr_slot **slot,
					const struct trace_event *ev)
{
	struct model_life *l = (*slot)->life;
	bool again;

	if (ev->op == TRACE_INIT)
		return life_init(m, slot, ev);
	if (ev->op == TRACE_DESTROY && (!l || l->finished))
		return NULL; /* the library's own finish lets the memory go too: nothing new */
	if (l && l->destroyed)
		return NULL; /* the finish of a closure destroyed while it ran: its life is over */
	/*
	 * Stamped before this life's init: an earlier life's at the address, reaching the model
	 * after it (top applied finishes from 2 s before the attach to closures the snapshot had
	 * begun since at those addresses: lifetimes below 0, shown "0ns"). Set aside as late.
	 */
	if (l && !l->before_recording && ev->ts < l->start_ts) {
		m->n.late++;
		return NULL;
	}
	if (l && (!l->finished || ev->op == TRACE_DESTRUCTOR))
		return l;
	if (!l && ev->op == TRACE_DESTRUCTOR && (*slot)->lives)
		return NULL; /* the destructor of a life already folded into its kind */
	/* First seen without its init: created before recording began, or used again after it
	 * finished (a bug, or its init was lost). */
	again = (*slot)->lives > 0;
	/* Or reported late: a thread preempted between an operation and its probe reports it
	 * after the put that finished the closure, time stamp and all. */
	if (again && reported_late(*slot, ev)) {
		m->n.late++;
		return NULL;
	}
	if (l)
		(*slot)->life = NULL;
	l = life_new(m, *slot, ev->pid, ev->cl, ev->ts);
	l->before_recording = true;
	l->no_init = again;
	l->first_ip = ev->ip;
	l->state = ev->flags & TRACE_FLAG_RUNNING ? MODEL_RUNNING : MODEL_UNKNOWN;
	return l;
}

/*
 * An event that says a sleeper waits (SLEEPING in its flags after) while its life has no sleeping
 * sync under way: a put or wake that belongs before the sync_end that its sleeper already passed
 * (a per-operation probe fires after its operation: the sleeper may return, and even initialise
 * its stack closure again, first), or a batched record stamped before its compare-and-swap and so
 * before the sync_begin it found. Its counts are the life's; its state is older than the life's.
 */
static bool sleeper_gone(const struct model_life *l, const struct trace_event *ev)
{
	return (ev->flags & TRACE_FLAG_SLEEPING) && !l->sleeping && ev->op != TRACE_SYNC_BEGIN &&
	       ev->op != TRACE_CONTINUE_AT;
}

/* A sleeping sync begins with the event that sets SLEEPING and ends at sync_end or the finish. */
static void track_sleeper(struct model_life *l, const struct trace_event *ev)
{
	if ((ev->op == TRACE_SYNC_BEGIN || ev->op == TRACE_CONTINUE_AT) &&
	    (ev->flags & TRACE_FLAG_SLEEPING))
		l->sleeping = true;
	else if (ev->op == TRACE_SYNC_END || ev->op == TRACE_FINISH)
		l->sleeping = false;
}

/* continue_at and its kin: what runs next, and where. */
static void apply_continue_at(struct model_life *l, const struct trace_event *ev, bool latest)
{
	if (ev->how == TRACE_HOW_DESTRUCTOR) {
		l->destructor_fn = 0;
		l->fn = ev->fn; /* the destructor: what runs when it finishes */
	} else {
		l->fn = ev->fn;
		l->wq = ev->wq;
		if (!l->first_fn && !l->snapshot)
			l->first_fn = ev->fn;
	}
	l->how = ev->how;
	if (latest && ev->how != TRACE_HOW_NOBARRIER)
		l->state = MODEL_CONTINUING;
}

/* The count reached zero: the life ends, and its parent is put by it. */
static void apply_finish(struct model *m, struct model_life *l, const struct trace_event *ev)
{
	l->release_ip = ev->ip;
	if (l->parent) {
		site_of(l->parent, ev->ip)->child_put++;
		l->parent->child_puts_due++;
	}
	l->flags = ev->flags;
	life_finished(m, l, ev->ts);
}

/* closure_debug_destroy before its memory is freed (bcache's search_free): its end. */
static void apply_destroy(struct model *m, struct model_life *l, const struct trace_event *ev)
{
	if (l->finished)
		return;
	l->destroyed = true;
	l->release_ip = ev->ip;
	l->state = MODEL_DESTROYED;
	life_finished(m, l, ev->ts);
}

/* closure_sync entered (asleep: where) or returned. */
static void apply_sync(struct model_life *l, const struct trace_event *ev, bool latest)
{
	if (ev->op == TRACE_SYNC_BEGIN) {
		if (ev->flags & TRACE_FLAG_SLEEPING) {
			l->sync_ip = ev->ip;
			if (latest)
				l->state = MODEL_SYNCING;
		}
		return;
	}
	if (latest) {
		l->state = MODEL_RUNNING;
		l->sync_timed_out = ev->ret != 0;
		l->sync_ip = ev->ip;
	}
	/*
	 * First seen without an init and synced back to its running reference: a stack closure the
	 * library saw only from its first use (a CLASS(closure_stack) one whose first references
	 * were taken inline, traced per operation: lib/stack.h).
	 */
	if (l->before_recording && !l->init_ip && !l->snapshot && ev->remaining == 1 &&
	    (ev->flags & TRACE_FLAG_RUNNING))
		l->stack = true;
	if (l->stack && ev->remaining == 1) {
		l->synced = true;
		l->end_ts = ev->ts;
	}
}

/* The per-operation step: what the event changes in its life. One case per operation, the whole
 * state machine in one switch (as the kernel's funnel); the longer cases are the helpers above. */
static void apply_op(struct model *m, struct model_life *l, const struct trace_event *ev,
		     bool older)
{
	/* Counts are commutative; the state comes from the latest event in time. */
	bool latest = !older && ev->ts >= l->last_ts;

	if (ev->op != TRACE_SYNC_END && ev->op != TRACE_FINISH && ev->op != TRACE_DESTRUCTOR &&
	    !older)
		l->synced = false;
	if (latest && (ev->op == TRACE_RUN || ev->op == TRACE_SYNC_BEGIN))
		l->sync_timed_out = false;
	switch (ev->op) {
	case TRACE_INIT:
		/* A snapshot's init (a closure alive at attach) says what it was doing then. */
		l->state = !ev->snapshot || (ev->flags & TRACE_FLAG_RUNNING) ? MODEL_RUNNING
									     : MODEL_UNKNOWN;
		break;
	case TRACE_GET:
		site_of(l, ev->ip)->taken++;
		open_push(m, l, ev->ip);
		break;
	case TRACE_PUT:
		site_of(l, ev->ip)->put++;
		if (l->child_puts_due)
			l->child_puts_due--; /* a finished child's, right after its finish */
		else
			open_pop(m, l, 1);
		break;
	case TRACE_SUB:
		site_of(l, ev->ip)->put += (uint32_t)(ev->v & COUNT_MASK);
		open_pop(m, l, ev->v & COUNT_MASK);
		break;
	case TRACE_CONTINUE_AT:
		apply_continue_at(l, ev, latest);
		break;
	case TRACE_RUN:
		l->fn = ev->fn;
		l->wq = ev->wq;
		l->running_from = ev->fn;
		if (!l->first_fn && !l->snapshot)
			l->first_fn = ev->fn;
		if (latest)
			l->state = MODEL_RUNNING;
		break;
	case TRACE_FINISH:
		apply_finish(m, l, ev);
		break;
	case TRACE_DESTRUCTOR:
		l->destructor_fn = ev->fn ? ev->fn : 1;
		l->state = MODEL_DESTROYED;
		break;
	case TRACE_WAIT:
		l->pinned = true; /* the picture draws what it waited on: never folded */
		l->on_waitlist = true;
		l->waitlist = ev->waitlist;
		l->wake_ip = 0;
		l->wait_ip = ev->ip;
		break;
	case TRACE_WAKE:
		l->pinned = true;
		l->on_waitlist = false;
		l->wake_ip = ev->ip;
		model_note_wake(m, l->pid, ev);
		break;
	case TRACE_SYNC_BEGIN:
	case TRACE_SYNC_END:
		apply_sync(l, ev, latest);
		break;
	case TRACE_BUG:
		break; /* shown from the event itself (explain watches it) */
	case TRACE_DESTROY:
		apply_destroy(m, l, ev);
		break;
	case TRACE_NR_OPS:
		break;
	}
	if (latest) {
		l->last_ts = ev->ts;
		l->remaining = ev->remaining;
		l->flags = ev->flags;
	}
}

/* One event, in time order (the reorder window below applies them). */
static void model_apply(struct model *m, const struct trace_event *ev)
{
	struct addr_slot *slot = slot_of(m, ev->pid, ev->cl);
	struct model_life *l;
	bool older;

	m->n.events++;
	m->moved.life = NULL;
	l = life_of_event(m, &slot, ev);
	if (!l) {
		observe(m, ev, NULL); /* set aside */
		return;
	}
	if (ev->op == TRACE_INIT)
		slot->peak = 0;
	if (ev->remaining > slot->peak)
		slot->peak = ev->remaining;
	if (watched_life(m, ev->pid, ev->cl))
		watch(m, l, ev);
	older = sleeper_gone(l, ev);
	track_sleeper(l, ev);
	apply_op(m, l, ev, older);
	observe(m, ev, l);
	if (ev->op == TRACE_FINISH || ev->op == TRACE_DESTRUCTOR || ev->op == TRACE_DESTROY)
		maybe_free(m, l);
}

/*
 * ---- the reorder window ----
 * A trace's lines are nearly in time order (per-operation records from different CPUs leave the
 * ring buffer slightly out of it), so the model holds the latest REORDER_WINDOW events and applies
 * the earliest of them when one more comes. The ordering itself is trace/time_order.c's, the
 * recorder's too: one source, the file, whose late lines wait in its heap of late items.
 */
#define REORDER_WINDOW 4096

struct held_line {
	struct time_key key; /* the event's time, its place in the file */
	struct trace_event ev;
};

static void window_init(struct model *m)
{
	time_order_init(&m->window, sizeof(struct held_line));
	if (time_order_source(&m->window) < 0)
		xalloc_oom();
}

static void window_free(struct model *m)
{
	time_order_free(&m->window);
}

static const struct trace_event *earliest(const struct model *m)
{
	const struct held_line *h = time_order_first(&m->window);

	return h ? &h->ev : NULL;
}

/* The earliest event is applied where it waits, then leaves (applying adds no event). */
static void window_pop(struct model *m)
{
	model_apply(m, earliest(m));
	time_order_pop(&m->window);
}

static void model_on_event(void *ctx, const struct trace_event *ev)
{
	struct model *m = ctx;
	struct held_line h = {.key = {.ts = time_key_signed(ev->ts), .order = ev->seq}, .ev = *ev};

	if (!h.ev.pid) /* a trace of one process: every life is named PID:ADDR#N all the same */
		h.ev.pid = m->header_pid;

	/* A synthetic init stands at its closure's init time, older than the events around it. */
	if (ev->ts < m->max_seen_ts && !ev->snapshot)
		m->n.reordered++;
	else
		m->max_seen_ts = ev->ts;
	if (m->window.held == REORDER_WINDOW)
		window_pop(m);
	if (!time_order_push(&m->window, 0, &h))
		xalloc_oom();
}

void model_flush(struct model *m, int64_t before_ts)
{
	const struct trace_event *ev;

	while ((ev = earliest(m)) && ev->ts < before_ts)
		window_pop(m);
}

static void window_drain(struct model *m)
{
	while (earliest(m))
		window_pop(m);
}

const struct trace_sink model_sink = {.event = model_on_event,
				      .frames = model_on_frames,
				      .sym = model_on_sym,
				      .name = model_on_name,
				      .header = model_on_header};

bool model_exited(const struct model *m)
{
	return m->exited;
}

void model_end(struct model *m, bool exited)
{
	window_drain(m);
	m->ending = true; /* the walks below go over every life: none is folded under them */
	m->n.last_ts = m->n.events ? m->max_seen_ts : 0;
	m->exited = exited;
	for (struct model_life *l = m->first; exited && l; l = l->next) {
		settle_stack(m, l);
		leave_frame(m, l);
	}
	for (struct model_life *l = m->first, *next; l; l = next) {
		next = l->next;
		settle_stack(m, l);
		if (!l->finished) {
			l->kind = model_kind_of(m, l->init_ip, l->first_fn);
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
	hashmap_init(&m->slots, sizeof(struct addr_slot));
	hashmap_init(&m->syms, sizeof(struct model_sym));
	for (int k = 0; k < 2; k++)
		hashmap_init(&m->names[k], TRACE_NAME_MAX * 4 + 1);
	hashmap_init(&m->kind_index, sizeof(struct model_kind *));
	hashmap_init(&m->stacks, sizeof(void *));
	hashmap_init(&m->wakes, sizeof(struct model_wakes));
	m->max_seen_ts = INT64_MIN;
	window_init(m);
	return m;
}

void model_observe(struct model *m, const struct model_observer *obs, void *ctx)
{
	m->obs = obs;
	m->obs_ctx = ctx;
}

void model_watch(struct model *m, const struct model_id *id)
{
	m->watching = true;
	m->watch_id = *id;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (struct model_life *l = m->first, *next; l; l = next) {
		next = l->next;
		model_folds_free(l->folds);
		free(l->sites);
		free(l->blames);
		free(l);
	}
	model_folds_free(m->top_folds);
	for (struct model_kind *k = m->kinds, *next; k; k = next) {
		next = k->next;
		free(k->hist);
		free(k->sites);
		free(k);
	}
	model_syms_free(m);
	for (int k = 0; k < 2; k++)
		hashmap_free(&m->names[k]);
	hashmap_free(&m->slots);
	hashmap_free(&m->kind_index);
	model_stacks_free(m);
	hashmap_free(&m->wakes);
	window_free(m);
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

const struct model_counts *model_counts(const struct model *m)
{
	return &m->n;
}

struct model_life *model_find(struct model *m, const struct model_id *id)
{
	struct model_life *found = NULL;

	for (struct model_life *l = m->first; l; l = l->next)
		if (l->addr == id->addr && (!id->pid || l->pid == id->pid) &&
		    (!id->nth || l->nth == id->nth))
			found = l;
	return found;
}

unsigned model_lives_at(struct model *m, int64_t pid, uint64_t addr)
{
	const struct addr_slot *slot = slot_find(m, pid, addr);

	return slot ? slot->lives : 0;
}

size_t model_processes_at(struct model *m, uint64_t addr, int64_t *pids, size_t max)
{
	const struct addr_slot *slot;
	size_t n = 0, pos = 0;
	uint64_t a, pid;

	while ((slot = hashmap_next(&m->slots, &pos, &a, &pid))) {
		if (a != addr || !slot->lives)
			continue;
		if (n < max)
			pids[n] = (int64_t)pid;
		n++;
	}
	/* Slots lie in hash order: sort the ones returned, for stable messages. */
	for (size_t i = 1; i < n && i < max; i++)
		for (size_t j = i; j > 0 && pids[j - 1] > pids[j]; j--) {
			int64_t t = pids[j];

			pids[j] = pids[j - 1];
			pids[j - 1] = t;
		}
	return n;
}

const struct trace_event *model_watched(struct model *m, const struct model_life *l, size_t *n)
{
	size_t k = 0;

	free(m->watch_out);
	m->watch_out = xcalloc(m->nwatched + 1, sizeof(*m->watch_out));
	for (size_t i = 0; i < m->nwatched; i++)
		if (m->watched[i].ev.cl == l->addr && m->watched[i].ev.pid == l->pid &&
		    m->watched[i].nth == l->nth)
			m->watch_out[k++] = m->watched[i].ev;
	*n = k;
	return m->watch_out;
}
