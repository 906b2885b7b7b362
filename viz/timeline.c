/*
 * The timeline, streamed. The model (report mode: finished lives are forgotten) tells us each event
 * in time order with its life, and each life as it finishes; we write as we go. What is held: a
 * small record per live closure (hung on its life's node), one per thread, nothing per event.
 *
 * Flow arrows are written whole (start and end together) once their end is seen, so that an arrow
 * never dangles: the start's time and thread are kept until then. The start binds to the
 * operation's instant event written earlier at the same time on that thread; the end ("bp":"e")
 * to the instant just written.
 */
#include "timeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "leaks.h"
#include "model.h"
#include "timeline_out.h"
#include "trace_args.h"
#include "trace_text.h"
#include "viz.h"

/* Arrow starts held per closure: its open gets, its children's finishes until its next step.
 * Past it, the arrows are not drawn but counted (timeline.h, flows_dropped). */
#define HELD_MAX      4096
#define MAX_ANCESTORS 256 /* --closure: ancestors kept */
#define TXT	      512

/* A point on a thread. */
struct tl_point {
	int64_t tid, ts;
};

/* Points held for arrows still to draw, as many as there are, up to HELD_MAX. */
struct tl_held {
	struct tl_point *v;
	uint32_t n, cap;
	uint32_t first; /* children's finishes past HELD_MAX: a ring, v[first] the oldest */
};

/* What the timeline keeps per live closure (its life's node). */
struct tl_life {
	uint64_t id; /* the async slice's id */
	int64_t first_tid;
	bool init_seen, ran, releasing, syncing;
	bool selected, desc; /* desc: the --closure target or below it */
	struct tl_point init, release, sync;
	uint64_t sync_ip;
	struct tl_held child;
	/* continue_at until its continuation runs; closure_wait until its wake-up */
	bool continuing, waiting;
	struct tl_point cont, wait;
	/* Its open gets by the model's position (model.h, model_refs_move): the first gets.n of
	 * them; those past HELD_MAX are given back with no arrow. */
	struct tl_held gets;
};

struct tl {
	const struct timeline_opts *o;
	struct model *m;
	struct trace_info info;
	struct tl_out out;
	struct tl_tracks *tracks;
	struct timeline_result *st;
	uint64_t next_flow;
	/* --closure: found by a first pass */
	bool found;
	struct model_id target, anc[MAX_ANCESTORS];
	unsigned nanc;
};

static int64_t out_pid(const struct tl *t, int64_t pid)
{
	return pid ? pid : (int64_t)t->info.pid;
}

static bool in_window(const struct tl *t, int64_t ts)
{
	return ts >= t->o->from_ns && ts <= t->o->to_ns;
}

static bool same(const struct model_id *a, const struct model_life *l)
{
	return a->pid == l->pid && a->addr == l->addr && a->nth == l->nth;
}

/* ---- selection (--closure) ---- */

static bool is_target(const struct tl *t, const struct model_life *l)
{
	return t->found && same(&t->target, l);
}

/* The target or below it: walk up to the first life that knows. */
static bool below_target(const struct tl *t, const struct model_life *l)
{
	for (; l; l = l->parent) {
		if (is_target(t, l))
			return true;
		if (l->node)
			return ((const struct tl_life *)l->node)->desc;
	}
	return false;
}

static bool is_ancestor(const struct tl *t, const struct model_life *l)
{
	for (unsigned i = 0; i < t->nanc; i++)
		if (same(&t->anc[i], l))
			return true;
	return false;
}

static struct tl_life *state(struct tl *t, struct model_life *l)
{
	struct tl_life *s = l->node;

	if (s)
		return s;
	s = xcalloc(1, sizeof(*s));
	s->id = l->seq + 1;
	s->first_tid = -1;
	s->desc = !t->o->select || below_target(t, l);
	s->selected = s->desc || is_ancestor(t, l);
	l->node = s;
	return s;
}

static void forget(struct model_life *l)
{
	struct tl_life *s = l->node;

	if (s) {
		free(s->child.v);
		free(s->gets.v);
	}
	free(s);
	l->node = NULL;
}

/* Room for one more point: false when HELD_MAX are held. */
static bool held_room(struct tl_held *h)
{
	if (h->n < h->cap)
		return true;
	if (h->cap == HELD_MAX)
		return false;
	h->cap = h->cap ? h->cap * 2 : 4;
	h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	return true;
}

/* ---- text ---- */

/* A kind's name: model_life_function(), the same in every presentation. */
static const char *kind_name(struct tl *t, const struct model_life *l, char *buf, size_t len)
{
	return model_life_function(t->m, l, buf, len);
}

/* ---- writing ---- */

static void flow(struct tl *t, const char *name, int64_t pid, struct tl_point from,
		 struct tl_point to)
{
	uint64_t id;

	if (!in_window(t, from.ts) || !in_window(t, to.ts))
		return;
	id = ++t->next_flow;
	tlo_open(&t->out, 's', "closure.op", name, pid, from.tid, from.ts);
	tlo_id(&t->out, id);
	tlo_close(&t->out);
	tlo_open(&t->out, 'f', "closure.op", name, pid, to.tid, to.ts);
	tlo_id(&t->out, id);
	tlo_raw(&t->out, ",\"bp\":\"e\"");
	tlo_close(&t->out);
	t->st->flows++;
}

/* The children that finished since this closure's last step point at this step. */
static void child_flows(struct tl *t, const struct model_life *l, struct tl_life *s,
			struct tl_point step)
{
	for (uint32_t i = 0; i < s->child.n; i++)
		flow(t, "child finished", out_pid(t, l->pid),
		     s->child.v[(s->child.first + i) % HELD_MAX], step);
	s->child.n = s->child.first = 0;
}

static void add_child_flow(struct tl *t, struct model_life *parent, struct tl_point at)
{
	struct tl_life *p;

	if (!parent || parent->finished)
		return;
	p = state(t, parent);
	if (held_room(&p->child)) {
		p->child.v[p->child.n++] = at;
		return;
	}
	/* Keep the latest: they are the ones it waited for. */
	p->child.v[p->child.first] = at;
	p->child.first = (p->child.first + 1) % HELD_MAX;
	if (p->selected)
		t->st->flows_dropped++;
}

/* Arguments an operation's instant event leaves out: parent and stack are its closure slice's;
 * a thread track is named by the workqueue (wq) it runs for; how a closure goes on (how), get's
 * not_zero and a sync's timeout change nothing in the picture. Any other argument is shown. */
static bool shown_elsewhere(const char *arg)
{
	static const char *const elsewhere[] = {"parent", "stack", "not_zero",
						"wq",	  "how",   "timeout_ms"};

	for (size_t i = 0; i < sizeof(elsewhere) / sizeof(elsewhere[0]); i++)
		if (!strcmp(arg, elsewhere[i]))
			return true;
	return false;
}

static void op_args(struct tl *t, const struct trace_event *ev, const struct model_life *l)
{
	char buf[TXT], id[TXT];

	if (l)
		tlo_arg_str(&t->out, "closure", model_life_name(l, id, sizeof(id)));
	else
		tlo_arg_str(&t->out, "closure", "(set aside: its closure had ended)");
	tlo_arg_str(&t->out, "site", model_site_text(t->m, ev->ip, buf, sizeof(buf)));
	tlo_arg_int(&t->out, "remaining", ev->remaining);
	if ((unsigned)ev->op >= TRACE_NR_OPS)
		return;
	/* The operation's own arguments as the contract types them (trace_args.h), code addresses
	 * by their function; an address that is 0 is left out, and so is what another part of the
	 * picture shows. */
	for (size_t i = 0; i < 3; i++) {
		const struct trace_arg *a = &trace_op_args[ev->op][i];

		if (!a->name || shown_elsewhere(a->name) ||
		    ((a->type == TRACE_ARG_ADDR || a->type == TRACE_ARG_FN) &&
		     trace_arg_is_zero(ev, a)))
			continue;
		if (a->type == TRACE_ARG_INT)
			tlo_arg_int(&t->out, a->name, (long long)trace_arg_value(ev, a));
		else if (a->type == TRACE_ARG_FN)
			tlo_arg_str(
				&t->out, a->name,
				model_func_text(t->m, trace_arg_value(ev, a), buf, sizeof(buf)));
		else
			tlo_arg_str(&t->out, a->name, trace_arg_text(ev, a, buf, sizeof(buf)));
	}
}

static void write_sync(struct tl *t, const struct model_life *l, const struct tl_life *s,
		       int64_t end, bool unfinished)
{
	char buf[TXT];
	int64_t from = s->sync.ts > t->o->from_ns ? s->sync.ts : t->o->from_ns;
	int64_t to = end < t->o->to_ns ? end : t->o->to_ns;

	if (from > to)
		return;
	tlt_thread_used(t->tracks, out_pid(t, l->pid), s->sync.tid);
	tlo_open(&t->out, 'X', "closure.sync",
		 unfinished ? "closure_sync (still waiting)" : "closure_sync", out_pid(t, l->pid),
		 s->sync.tid, from);
	tlo_dur(&t->out, to - from);
	tlo_arg_str(&t->out, "closure", model_life_name(l, buf, sizeof(buf)));
	tlo_arg_str(&t->out, "site", model_site_text(t->m, s->sync_ip, buf, sizeof(buf)));
	tlo_arg_int(&t->out, "waited_ns", end - s->sync.ts);
	tlo_close(&t->out);
	t->st->syncs++;
}

static void life_args(struct tl *t, const struct model_life *l, int64_t end)
{
	char buf[TXT], fn[TXT];
	uint64_t life = end > l->start_ts ? (uint64_t)(end - l->start_ts) : 0;

	tlo_arg_str(&t->out, "closure", model_life_name(l, buf, sizeof(buf)));
	tlo_arg_str(&t->out, "init",
		    l->init_ip ? model_site_text(t->m, l->init_ip, buf, sizeof(buf))
			       : model_origin_text(l, buf, sizeof(buf)));
	if (l->parent)
		tlo_arg_str(&t->out, "parent", model_life_name(l->parent, buf, sizeof(buf)));
	else if (l->parent_addr)
		snprintf(buf, sizeof(buf), "0x%" PRIx64, l->parent_addr),
			tlo_arg_str(&t->out, "parent", buf);
	else
		tlo_arg_str(&t->out, "parent", "none");
	snprintf(fn, sizeof(fn), "%s%s", model_duration_text(life, buf, sizeof(buf)),
		 l->finished ? "" : " so far");
	tlo_arg_str(&t->out, "lifetime", fn);
	tlo_arg_int(&t->out, "lifetime_ns", (long long)life);
	tlo_arg_str(&t->out, "state", model_state_text(t->m, l, buf, sizeof(buf)));
	if (!l->finished)
		tlo_arg_str(&t->out, "verdict", leaks_verdict_word(l));
	if (leaks_is_root_cause(l) && l->nblames) { /* "file:line: why", as explain says it */
		char why[TXT], text[2 * TXT];

		text_snprintf(text, sizeof(text), "%s: %s",
			      model_site_text(t->m, l->blames[0].site, buf, sizeof(buf)),
			      leaks_blame_text(t->m, &l->blames[0], why, sizeof(why)));
		tlo_arg_str(&t->out, "blame", text);
	}
	if (!l->finished && (l->verdict == VERDICT_SUSPECT || l->verdict == VERDICT_IN_FLIGHT))
		tlo_arg_str(&t->out, "age", leaks_age_text(l, buf, sizeof(buf)));
	if (l->stack)
		tlo_arg_str(&t->out, "stack", "closure_init_stack");
}

/* A life as an async slice on the track of its kind: begin and end written together. */
static void write_life(struct tl *t, const struct model_life *l, const struct tl_life *s,
		       int64_t end)
{
	char name[TXT], kind[TXT];
	enum leaks_word w = leaks_word(l); /* its category and name: its word, as everywhere */
	char cat[32];
	int64_t from = l->start_ts > t->o->from_ns ? l->start_ts : t->o->from_ns;
	int64_t to = end < t->o->to_ns ? end : t->o->to_ns;
	int64_t pid = out_pid(t, l->pid), tid = s->init_seen ? s->init.tid : s->first_tid;

	/* A life made of events that reached the trace late is no closure: set aside. */
	if (!s->selected || from > to || (!l->finished && l->verdict == VERDICT_LATE))
		return;
	if (tid < 0)
		tid = 0;
	snprintf(cat, sizeof(cat), w == LEAKS_WORD_FINISHED ? "closure" : "closure.%s",
		 leaks_word_key(w));
	snprintf(name, sizeof(name), "%s%s%s", w == LEAKS_WORD_FINISHED ? "" : leaks_word_caps(w),
		 w == LEAKS_WORD_FINISHED ? "" : " ", kind_name(t, l, kind, sizeof(kind)));
	tlt_thread_used(t->tracks, pid, tid);
	tlo_open(&t->out, 'b', cat, name, pid, tid, from);
	tlo_id(&t->out, s->id);
	life_args(t, l, end);
	tlo_close(&t->out);
	tlo_open(&t->out, 'e', cat, name, pid, tid, to);
	tlo_id(&t->out, s->id);
	tlo_close(&t->out);
	t->st->slices++;
}

/* ---- the model's observer ---- */

static void on_finished(void *ctx, struct model_life *l)
{
	struct tl *t = ctx;
	struct tl_life *s = state(t, l);

	write_life(t, l, s, l->end_ts);
	/* A stack closure settled by its closure_sync, or whose frame was left, has no finish
	 * event to wait for. */
	if ((l->stack && l->synced) || l->frame_left)
		forget(l);
}

static bool same_point(struct tl_point a, struct tl_point b)
{
	return a.tid == b.tid && a.ts == b.ts;
}

/* It goes on after a release (it runs, or its sync returns): an arrow from the put that let it go,
 * when another thread did. woken: the release is what it waited for. A continue_at that was its
 * own release has its "continued" arrow instead. */
static void end_release(struct tl *t, struct tl_life *s, int64_t pid, struct tl_point here,
			bool woken)
{
	if (woken && s->releasing && s->release.tid != here.tid && s->selected &&
	    !(s->continuing && same_point(s->cont, s->release)))
		flow(t, "released", pid, s->release, here);
	s->releasing = false;
}

/* Its continuation runs: an arrow from the continue_at that queued it, on another thread. */
static void end_continue(struct tl *t, struct tl_life *s, int64_t pid, struct tl_point here)
{
	if (s->continuing && s->cont.tid != here.tid && s->selected)
		flow(t, "continued", pid, s->cont, here);
	s->continuing = false;
}

/* The operation that let the count reach zero: the next run is its doing. A continue_at queues
 * its continuation. */
static void release_step(struct tl_life *s, const struct trace_event *ev, struct tl_point here)
{
	switch (ev->op) {
	case TRACE_CONTINUE_AT:
		s->continuing = ev->how == TRACE_HOW_CONTINUE_AT || ev->how == TRACE_HOW_NOBARRIER;
		s->cont = here;
		break;
	default:
		break;
	}
	switch (ev->op) {
	case TRACE_INIT:
	case TRACE_RUN:
	case TRACE_SYNC_BEGIN:
	case TRACE_SYNC_END:
	case TRACE_FINISH:
	case TRACE_DESTROY:
	case TRACE_DESTRUCTOR:
		break;
	default:
		/* The operation that let the count reach zero: the next run is its doing. */
		if (ev->remaining == 0 && ev->op != TRACE_DESTRUCTOR) {
			s->releasing = true;
			s->release = here;
		}
		break;
	}
}

/* The steps of a closure that end an arrow: its continuation runs, its sync returns, it ends, its
 * wait is woken, a reference comes back. */
static void step(struct tl *t, const struct trace_event *ev, struct model_life *l,
		 struct tl_life *s)
{
	struct tl_point here = {ev->tid, ev->ts};
	int64_t pid = out_pid(t, l->pid);

	switch (ev->op) {
	case TRACE_INIT:
		s->init_seen = true;
		s->init = here;
		break;
	case TRACE_RUN:
		end_release(t, s, pid, here, true);
		end_continue(t, s, pid, here);
		if (!s->ran && s->init_seen && s->init.tid != ev->tid && s->selected)
			flow(t, "first run", pid, s->init, here);
		s->ran = true;
		if (s->selected)
			child_flows(t, l, s, here);
		break;
	case TRACE_SYNC_BEGIN:
		if (ev->flags & TRACE_FLAG_SLEEPING) {
			s->syncing = true;
			s->sync = here;
			s->sync_ip = ev->ip;
		}
		break;
	case TRACE_SYNC_END:
		if (s->syncing && s->selected)
			write_sync(t, l, s, ev->ts, false);
		end_release(t, s, pid, here, s->syncing); /* the put that woke the sleeper */
		s->syncing = false;
		if (s->selected)
			child_flows(t, l, s, here);
		break;
	case TRACE_FINISH:
	case TRACE_DESTROY: /* closure_debug_destroy: the end of its life too */
		if (s->selected)
			child_flows(t, l, s, here);
		if (s->selected && l->parent && ev->op == TRACE_FINISH)
			add_child_flow(t, l->parent, here);
		if (l->finished)
			forget(l);
		break;
	case TRACE_WAIT:
		s->waiting = true;
		s->wait = here;
		break;
	case TRACE_WAKE: /* closure_wake_up released its closure_wait */
		if (s->waiting && s->wait.tid != here.tid && s->selected)
			flow(t, "woken", pid, s->wait, here);
		s->waiting = false;
		break;
	default:
		break;
	}
	release_step(s, ev, here);
}

static void on_event(void *ctx, const struct trace_event *ev, struct model_life *l)
{
	struct tl *t = ctx;
	struct tl_life *s = NULL;
	bool shown;

	/* A finished life has steps left only in the event that finished it. */
	if (l && (!l->finished || ev->op == TRACE_FINISH || ev->op == TRACE_DESTROY)) {
		s = state(t, l);
		if (s->first_tid < 0)
			s->first_tid = ev->tid;
	}
	if (ev->op == TRACE_RUN)
		tlt_thread_ran(t->tracks, out_pid(t, ev->pid), ev->tid, ev->fn, ev->wq);
	shown = (s ? s->selected : !t->o->select) && in_window(t, ev->ts);
	if (shown) {
		tlo_open(&t->out, 'i', "closure.op", trace_op_name(ev->op), out_pid(t, ev->pid),
			 ev->tid, ev->ts);
		tlo_raw(&t->out, ",\"s\":\"t\"");
		op_args(t, ev, l);
		tlo_close(&t->out);
		tlt_thread_used(t->tracks, out_pid(t, ev->pid), ev->tid);
		t->st->instants++;
	}
	if (s)
		step(t, ev, l, s);
}

/*
 * References, as the model pairs them (model.h, model_refs_move): a get is held until the put or
 * sub that gives it back, an arrow when another thread did. Called after on_event(): the arrow
 * ends at the put's instant, just written.
 */
static void on_refs(void *ctx, const struct trace_event *ev, struct model_life *l,
		    enum model_refs_move move, uint32_t pos, uint32_t n)
{
	struct tl *t = ctx;
	struct tl_life *s = state(t, l);
	struct tl_held *g = &s->gets;
	struct tl_point here = {ev->tid, ev->ts};

	switch (move) {
	case MODEL_REFS_TAKEN:
		if (pos == g->n && held_room(g))
			g->v[g->n++] = here;
		break;
	case MODEL_REFS_CHILD:
		if (pos < g->n)
			memmove(g->v + pos, g->v + pos + 1, sizeof(*g->v) * (--g->n - pos));
		break;
	case MODEL_REFS_GIVEN:
		for (uint32_t i = pos; i < pos + n && s->selected; i++) {
			if (i >= g->n) /* past what is held: whichever thread took it */
				t->st->flows_dropped += in_window(t, here.ts);
			else if (g->v[i].tid != here.tid)
				flow(t, "reference", out_pid(t, l->pid), g->v[i], here);
		}
		if (g->n > pos)
			g->n = pos;
		break;
	}
}

static const struct model_observer observer = {
	.event = on_event, .refs = on_refs, .finished = on_finished};

/* After the last event: the closures that never finished end at the end of the trace. */
static void write_unfinished(struct tl *t)
{
	int64_t end = model_counts(t->m)->last_ts;

	if (t->info.has_end && t->info.duration_ns > end)
		end = t->info.duration_ns;
	for (struct model_life *l = model_lives(t->m); l; l = l->next) {
		if (!l->finished) {
			struct tl_life *s = state(t, l);

			write_life(t, l, s, end);
			if (s->syncing && s->selected)
				write_sync(t, l, s, end, true);
		}
		forget(l);
	}
}

/* ---- --closure: a first pass finds the closure and its ancestors ---- */

static bool wanted(const struct tl *t, const struct model_life *l)
{
	const struct model_id *id = &t->o->sel;

	return l->addr == id->addr && (!id->nth || l->nth == id->nth) &&
	       (!id->pid || out_pid(t, l->pid) == id->pid);
}

static void find_event(void *ctx, const struct trace_event *ev, struct model_life *l)
{
	struct tl *t = ctx;

	(void)ev;
	/* The last matching life wins (ADDR without #N: the last one); its parents are fixed at
	 * its init, so its first event is enough. */
	if (!l || !wanted(t, l) || (t->found && same(&t->target, l)))
		return;
	t->found = true;
	t->target = (struct model_id){l->pid, l->addr, l->nth};
	t->nanc = 0;
	for (const struct model_life *p = l->parent; p && t->nanc < MAX_ANCESTORS; p = p->parent)
		t->anc[t->nanc++] = (struct model_id){p->pid, p->addr, p->nth};
}

static const struct model_observer finder = {.event = find_event};

/*
 * Returns 0 when the closure is found; else -1 with err saying why: bad input, or the name fits
 * no closure, or (without a pid) closures of several processes, as every command says it.
 */
static int find_closure(struct tl *t, struct trace_error *err)
{
	struct viz_input in = {.path = t->o->path, .m = model_new(false)};
	const struct model_id *id = &t->o->sel;
	struct model_life *l;
	int64_t pids[2];
	int rc = 0;

	model_observe(in.m, &finder, t);
	if (trace_read(t->o->path, &model_sink, in.m, &t->info, err)) {
		rc = -1;
	} else {
		model_end(in.m, viz_end(&t->info) == LEAKS_EXITED);
		/* A life only ever named as a parent has no event: the finder did not see it. */
		if (!t->found && (l = viz_find_closure(&in, id, err)))
			find_event(t, NULL, l);
		if (!id->pid && model_processes_at(in.m, id->addr, pids, 2) > 1)
			t->found = false; /* ambiguous: viz_find_closure says so */
		if (!t->found) {
			viz_find_closure(&in, id, err);
			rc = -1;
		}
	}
	model_free(in.m);
	trace_info_clear(&t->info);
	return rc;
}

/* ---- the whole ---- */

#define DROPPED_WHY                                                                                \
	"more gets open, or children finished before their parent's next step, on one closure "    \
	"than the timeline holds (%d)"

/* What makes the timeline incomplete, into t->st's warnings. */
static void warn_incomplete(const struct tl *t)
{
	struct timeline_result *res = t->st;
	char path[4096]; /* a file's name may be anyone's: shown as every name is */

	text_visible(path, sizeof(path), t->o->path);
	if (!t->info.has_end)
		text_snprintf(
			res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
			"%s: warning: no end record: the trace was cut short; read up to line "
			"%" PRIu64 "; unfinished closures are shown unfinished",
			path, t->info.lines);
	if (t->info.lost > 0)
		text_snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
			      "%s: warning: %lld event%s lost: the timeline has holes", path,
			      t->info.lost, t->info.lost == 1 ? " was" : "s were");
	if (res->flows_dropped)
		text_snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
			      "%s: warning: %" PRIu64 " arrow%s not drawn: " DROPPED_WHY, path,
			      res->flows_dropped, res->flows_dropped == 1 ? "" : "s", HELD_MAX);
}

/* The arrows not drawn, for the output's "otherData" (NULL: none). */
static const char *other_data(const struct tl *t, char *buf, size_t len)
{
	if (!t->st->flows_dropped)
		return NULL;
	snprintf(buf, len, "\"arrows_not_drawn\":%" PRIu64 ",\"why\":\"" DROPPED_WHY "\"",
		 t->st->flows_dropped, HELD_MAX);
	return buf;
}

int render_timeline(const struct timeline_opts *o, FILE *out, struct timeline_result *res,
		    struct trace_error *err)
{
	struct tl t = {.o = o, .st = res};
	struct leaks_summary leaks;
	char other[256];
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (o->select) {
		if (!strcmp(o->path, "-"))
			return trace_error_set(err, "--closure reads the trace twice: give it a "
						    "file, not standard input");
		if (find_closure(&t, err))
			return -1;
	}
	t.m = model_new(false);
	t.tracks = tlt_new();
	model_observe(t.m, &observer, &t);
	tlo_begin(&t.out, out);
	if (trace_read(o->path, &model_sink, t.m, &t.info, err)) {
		rc = -1;
	} else {
		viz_judge(t.m, &t.info, &leaks);
		write_unfinished(&t);
		tlt_write_names(t.tracks, &t.out, (int64_t)t.info.pid, t.info.exe, t.m);
		tlo_end(&t.out, other_data(&t, other, sizeof(other)));
		warn_incomplete(&t);
	}
	res->events = t.out.events;
	if (rc)
		for (struct model_life *l = model_lives(t.m); l; l = l->next)
			forget(l);
	model_free(t.m);
	tlt_free(t.tracks);
	trace_info_clear(&t.info);
	return rc;
}
