/*
 * The analysis (leaks_analyze): every unfinished closure judged (leaks.c), then the roots of a
 * hang (leaks.h, "The root of a hang"): what the stuck closures wait behind.
 */
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "leaks.h"
#include "leaks_internal.h"
#include "wakers.h"
#include "xalloc.h"

/* Whether nothing will finish l: a closure a hang may wait behind (leaks.h, "The root of a
 * hang"). wakes: it would wake the waitlist a stuck closure sleeps on (wakers.h). */
static bool blocks(const struct model_life *l, int64_t end, bool wakes)
{
	const struct model_blame *b = l->nblames ? &l->blames[0] : NULL;
	int64_t quiet = end - l->last_ts;

	if (l->finished || l->stuck ||
	    (l->verdict != VERDICT_IN_FLIGHT && l->verdict != VERDICT_SUSPECT) || !b ||
	    quiet < LEAKS_QUIET_NS)
		return false;
	if (!l->peer) {
		const struct model_blame *g = leaks_get_blame(l);

		return wakes || (g && g->kind == BLAME_UNMATCHED);
	}
	return b->consistent && (b->kind == BLAME_MISSING_PUT || b->kind == BLAME_EXCESS_TAKE) &&
	       (uint64_t)quiet > LEAKS_QUIET_MAX * l->peer->max_ns;
}

/* l is a root of the hang; waiter (NULL: none) waits behind it. */
static void make_root(struct model_life *l, struct model_life *waiter, struct leaks_summary *out)
{
	if (waiter) {
		l->waiting_behind++;
		if (!waiter->behind)
			waiter->behind = l;
	}
	if (l->hang_root)
		return;
	l->hang_root = true;
	l->hang_quiet_ns = (uint64_t)(out->end_ts - l->last_ts);
	if (l->verdict == VERDICT_SUSPECT)
		out->suspects--;
	else
		out->in_flight--;
	l->verdict = VERDICT_LEAKED;
	out->hang_roots++; /* its word: root of a hang, not leaked (leaks_word) */
}

/* The unfinished descendants of s that block: roots, waiter waiting behind each. Iterative, each
 * life visited once per walk (mark), bounded: a corrupt trace's cycle ends. How many were found. */
/* The roots one waiter was found to wait behind: every later waiter on the same waitlist waits
 * behind the same ones. */
struct roots_got {
	struct model_life **v;
	size_t n;
	bool done; /* worked out (for the first waiter) */
};

/* l is a root waiter waits behind (make_root), kept in got (NULL: not kept). */
static void take_root(struct model_life *l, struct model_life *waiter, struct roots_got *got,
		      struct leaks_summary *out)
{
	make_root(l, waiter, out);
	if (got) {
		got->v = xrealloc(got->v, (got->n + 1) * sizeof(*got->v));
		got->v[got->n++] = l;
	}
}

static unsigned roots_below(struct model_life *s, struct model_life *waiter, unsigned walk,
			    struct roots_got *got, struct leaks_summary *out)
{
	struct model_life *l = s->first_child;
	unsigned long steps = 0;
	unsigned found = 0;

	while (l && l != s && steps++ < LEAKS_MAX_DEPTH * 10UL) {
		bool down = !l->finished && l->mark != walk && l->first_child;

		if (l->mark != walk && blocks(l, out->end_ts, false)) {
			take_root(l, waiter, got, out);
			found++;
		}
		l->mark = walk;
		if (down) {
			l = l->first_child;
			continue;
		}
		while (l && l != s && !l->next_sibling)
			l = l->parent;
		if (!l || l == s)
			break;
		l = l->next_sibling;
	}
	return found;
}

/*
 * A closure on a waitlist waits behind what would wake it, or what that waits for below it; when
 * none is found, behind the closures of its process that nothing will finish (leaks.h). Each
 * waitlist is worked out once, for its first waiter (got, empty until then); the others wait
 * behind the same roots: with 100,000 waiters a walk over every closure for each took minutes.
 */
static void roots_of_waiter(struct model *m, struct model_life *s, unsigned *walk,
			    struct roots_got *got, struct leaks_summary *out)
{
	struct wakers w;
	unsigned found = 0;

	if (got->done) {
		for (size_t i = 0; i < got->n; i++)
			make_root(got->v[i], s, out);
		return;
	}
	got->done = true;
	wakers_collect(m, &w, s->pid, s->waitlist);
	for (struct model_life *l = model_lives(m); w.n && l; l = l->next) {
		if (l->finished || l == s || !wakers_would_wake(m, &w, l))
			continue;
		if (blocks(l, out->end_ts, true)) {
			take_root(l, s, got, out);
			found++;
		} else {
			found += roots_below(l, s, ++*walk, got, out);
		}
	}
	for (struct model_life *l = model_lives(m); !found && l; l = l->next)
		if (l->pid == s->pid && blocks(l, out->end_ts, false))
			take_root(l, s, got, out);
}

static void find_hang_roots(struct model *m, struct leaks_summary *out)
{
	unsigned walk = 0x4a4e4700; /* marks of this pass: not a presentation's */
	struct hashmap waitlists;   /* (waitlist, pid) -> struct roots_got */
	struct roots_got *got;
	size_t pos = 0;

	hashmap_init(&waitlists, sizeof(struct roots_got));
	for (struct model_life *l = model_lives(m); l; l = l->next)
		l->mark = 0;
	for (struct model_life *l = model_lives(m); l; l = l->next) {
		if (l->finished || !l->stuck)
			continue;
		if (l->state == MODEL_SYNCING)
			roots_below(l, l, ++walk, NULL, out);
		/* nothing puts in the table while roots_of_waiter works: its entry stays put */
		if (l->on_waitlist)
			roots_of_waiter(
				m, l, &walk,
				hashmap_put(&waitlists, l->waitlist, (uint64_t)l->pid, NULL), out);
	}
	while ((got = hashmap_next(&waitlists, &pos, NULL, NULL)))
		free(got->v);
	hashmap_free(&waitlists);
	if (out->stuck)
		return;
	/* Nothing waits in a closure: the program hangs on something else. */
	for (struct model_life *l = model_lives(m); l; l = l->next)
		if (blocks(l, out->end_ts, false))
			make_root(l, NULL, out);
}

void leaks_analyze(struct model *m, enum leaks_end end, int64_t end_ts, struct leaks_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->end = end;
	out->exited = end == LEAKS_EXITED;
	out->end_ts = end_ts;
	/* The process ran on after the recording (record -p, top): what it left idle is a suspect.
	 * A process ended with the recording was judged for its hang (below). */
	if (end == LEAKS_CUT_RUNNING && end_ts - model_counts(m)->last_ts >= LEAKS_IDLE_NS)
		out->idle_ns = (uint64_t)(end_ts - model_counts(m)->last_ts);
	for (struct model_life *l = model_lives(m); l; l = l->next) {
		l->hang_root = false;
		l->waiting_behind = 0;
		l->behind = NULL;
		if (!l->finished)
			leaks_judge(m, l, out);
	}
	if (end == LEAKS_CUT_ENDED)
		find_hang_roots(m, out);
	for (struct model_life *l = model_lives(m); l; l = l->next)
		l->mark = 0;
}
