/*
 * Leak verdicts. An unfinished closure's count is made of: the running reference (flag R), the
 * waitlist's reference (flag W), one per unfinished child, and the rest, taken with closure_get.
 * The first three are known exactly; the rest is attributed to call sites by comparing the
 * closure's ledger with the finished closures of the same kind, which show what balanced looks
 * like.
 */
#include "leaks.h"
#include "leaks_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_text.h"
#include "xalloc.h"

/* A count per finished closure that is whole: they all do the same there (a mix of 1 and 3 would
 * average a whole 2 only by chance). */
static bool whole(double v)
{
	return fabs(v - round(v)) < 0.02;
}

/* Whether a ranks before b: consistent evidence first, then how much it explains. */
static bool ranks_before(const struct model_blame *a, const struct model_blame *b)
{
	if (a->consistent != b->consistent)
		return a->consistent;
	return a->refs > b->refs;
}

static void add_blame(struct model_life *l, enum blame_kind kind, uint64_t site, double refs,
		      double expected, double actual)
{
	struct model_blame b = {.kind = kind,
				.site = site,
				.refs = refs,
				.expected = expected,
				.actual = actual,
				.consistent = whole(expected)};
	unsigned i;

	/* Grown one at a time: most judged lives have one blame, and a million of them add up. */
	if (l->nblames < MODEL_MAX_BLAMES)
		l->blames = xrealloc(l->blames, (l->nblames + 1) * sizeof(*l->blames));
	/* Keep the list ranked, first come first on ties. A site where the finished closures vary
	 * (a bio puts once per segment, and segments vary) ranks after one where they agree. */
	for (i = l->nblames; i > 0 && ranks_before(&b, &l->blames[i - 1]); i--)
		if (i < MODEL_MAX_BLAMES)
			l->blames[i] = l->blames[i - 1];
	if (i < MODEL_MAX_BLAMES)
		l->blames[i] = b;
	if (l->nblames < MODEL_MAX_BLAMES)
		l->nblames++;
}

/*
 * References taken and put on one source line, by the life and per finished closure of its kind.
 * Sites are compared by line, not by address: one closure_put in the source may reach the trace
 * from two addresses (its inlined fast path and its slow path).
 */
struct line_ledger {
	uint64_t ip; /* the first site seen on the line */
	double lt, lp, kt, kp;
};

static bool same_line(struct model *m, uint64_t a, uint64_t b)
{
	const struct model_sym *x, *y;

	if (a == b)
		return true;
	x = model_sym(m, a);
	y = model_sym(m, b);
	return x && y && x->file && y->file && x->line > 0 && x->line == y->line &&
	       !strcmp(x->file, y->file);
}

static struct line_ledger *ledger_of(struct model *m, struct line_ledger *v, unsigned *n,
				     uint64_t ip)
{
	for (unsigned i = 0; i < *n; i++)
		if (same_line(m, v[i].ip, ip))
			return &v[i];
	v[*n] = (struct line_ledger){.ip = ip};
	return &v[(*n)++];
}

static bool is_get_blame(const struct model_blame *b)
{
	return b->kind == BLAME_EXCESS_TAKE || b->kind == BLAME_MISSING_PUT ||
	       b->kind == BLAME_UNMATCHED;
}

/*
 * The second and later sites are told only while the ones before them have not explained every
 * reference held: a site that differs from its kind by chance (a count that varies per closure)
 * is not a second culprit.
 */
static void keep_needed(struct model_life *l)
{
	double explained = 0;
	unsigned kept = 0;

	for (unsigned i = 0; i < l->nblames; i++) {
		if (is_get_blame(&l->blames[i])) {
			if (explained > 0 && explained + 0.5 > (double)l->held_other)
				continue;
			explained += l->blames[i].refs;
		}
		l->blames[kept++] = l->blames[i];
	}
	l->nblames = kept;
}

/* Compare with the finished closures of the kind: lines that took more or put less. */
static unsigned blame_against_kind(struct model *m, struct model_life *l)
{
	const struct model_kind *k = l->peer;
	double n = (double)k->finished;
	struct line_ledger *v = calloc(l->nsites + k->nsites + 1, sizeof(*v));
	unsigned nv = 0, found = 0;
	double taken_more = 0;

	if (!v)
		return 0;
	for (unsigned i = 0; i < l->nsites; i++) {
		struct line_ledger *e = ledger_of(m, v, &nv, l->sites[i].ip);

		e->lt += (double)model_site_plain_taken(&l->sites[i]);
		e->lp += (double)model_site_plain_put(&l->sites[i]);
	}
	for (unsigned i = 0; i < k->nsites; i++) {
		struct line_ledger *e = ledger_of(m, v, &nv, k->sites[i].ip);

		e->kt += (double)model_site_plain_taken(&k->sites[i]) / n;
		e->kp += (double)model_site_plain_put(&k->sites[i]) / n;
	}
	for (unsigned i = 0; i < nv; i++) {
		const struct line_ledger *e = &v[i];

		if (e->lt - e->kt >= 0.5) {
			add_blame(l, BLAME_EXCESS_TAKE, e->ip, e->lt - e->kt, e->kt, e->lt);
			found++;
			if (whole(e->kt))
				taken_more += e->lt - e->kt;
		}
	}
	/*
	 * Fewer puts than the kind are evidence only for the references that takes beyond the kind
	 * do not explain: a closure that took less at a site (one segment, not two) puts less too.
	 */
	for (unsigned i = 0; i < nv && taken_more + 0.5 <= (double)l->held_other; i++) {
		const struct line_ledger *e = &v[i];
		double refs = e->kp - e->lp, most = (double)l->held_other - taken_more;

		if (refs >= 0.5) {
			add_blame(l, BLAME_MISSING_PUT, e->ip, refs < most ? refs : most, e->kp,
				  e->lp);
			found++;
		}
	}
	free(v);
	return found;
}

/* Nothing to compare with: the sites that took more than they put themselves. */
static unsigned blame_unmatched(struct model_life *l)
{
	unsigned before = l->nblames;

	for (unsigned i = 0; i < l->nsites; i++) {
		const struct model_site *s = &l->sites[i];
		int64_t net = model_site_plain_taken(s) - model_site_plain_put(s);

		if (net > 0) {
			double refs = (double)(net < l->held_other ? net : l->held_other);

			add_blame(l, BLAME_UNMATCHED, s->ip, refs, 0,
				  (double)model_site_plain_taken(s));
		}
	}
	return l->nblames - before;
}

/*
 * Nothing to compare with, but every get still open is known (model.c pairs plain gets with plain
 * puts last in, first out) and no pairing was a guess (every put came while the gets open were
 * of one site): the sites of those, which no put matched, and not the sites of gets that were put
 * back elsewhere. 0 otherwise: then blame_unmatched() names every site that took more than it put,
 * whatever order the puts came in.
 */
static unsigned blame_open(struct model *m, struct model_life *l)
{
	unsigned before = l->nblames;
	bool told[MODEL_OPEN_GETS] = {false};

	if (!l->nopen || l->nkept != l->nopen || l->held_other <= 0 || l->open_guessed)
		return 0;
	for (uint32_t i = 0; i < l->nkept; i++) {
		int64_t refs = 0, taken = 0;

		if (told[i])
			continue;
		for (uint32_t j = i; j < l->nkept; j++)
			if (!told[j] && same_line(m, l->open_get[i], l->open_get[j])) {
				told[j] = true;
				refs++;
			}
		for (unsigned k = 0; k < l->nsites; k++)
			if (same_line(m, l->sites[k].ip, l->open_get[i]))
				taken += model_site_plain_taken(&l->sites[k]);
		add_blame(l, BLAME_UNMATCHED, l->open_get[i],
			  (double)(refs < l->held_other ? refs : l->held_other), 0, (double)taken);
	}
	return l->nblames - before;
}

/* How sure the comparison with the kind is, from the get blames that were kept. */
static void sure_against_kind(struct model_life *l)
{
	const struct model_blame *top = NULL, *second = NULL;

	for (unsigned i = 0; i < l->nblames; i++)
		if (is_get_blame(&l->blames[i])) {
			if (!top)
				top = &l->blames[i];
			else if (!second)
				second = &l->blames[i];
		}
	if (!top->consistent) {
		l->sure = SURE_LOW;
		l->sure_why = "it differs from the average of the finished closures of its kind, "
			      "which vary there";
	} else if (!second && fabs(top->refs - (double)l->held_other) < 0.5) {
		l->sure = SURE_HIGH;
		l->sure_why = "the only call site that differs from the finished closures of its "
			      "kind, by exactly the references held";
	} else if (!second || ranks_before(top, second)) {
		l->sure = SURE_MEDIUM;
		l->sure_why = "the call site that differs most from the finished closures of its "
			      "kind";
	} else {
		l->sure = SURE_LOW;
		l->sure_why = "several call sites differ as much from the finished closures of its "
			      "kind";
	}
}

static void blame(struct model *m, struct model_life *l)
{
	unsigned found;

	if (l->held_waitlist)
		add_blame(l, BLAME_WAITLIST, l->wait_ip, 1, 0, 1);
	/* A stack closure's running reference is its frame's: leaving the frame ends it. */
	if (l->held_running && !l->stack)
		add_blame(l, BLAME_RUNNING, l->running_from, 1, 0, 1);
	if (l->remaining < 0) { /* named as a parent only: nothing of it was seen */
		l->sure = SURE_LOW;
		l->sure_why = "created before recording and never seen: its count is not known";
		return;
	}
	if (l->held_other <= 0) {
		l->sure = SURE_HIGH;
		l->sure_why = l->held_waitlist ? "a waitlist holds it and nobody woke it"
					       : "its running reference was never given up";
		return;
	}
	/*
	 * Alive when the recording began (a snapshot's init): what it took and put back before is
	 * not known, so its call sites are not compared with its kind's; only references taken
	 * in the trace and never put back are blamed.
	 */
	if (l->snapshot) {
		found = blame_unmatched(l);
		keep_needed(l);
		l->sure = SURE_LOW;
		l->sure_why =
			found ? "alive when the recording began: references taken before it "
				"are not known"
			      : "alive when the recording began: the references it holds were "
				"taken before it, by call sites not recorded";
		return;
	}
	/* Closures created before recording have no known kind to compare with. */
	if (l->init_ip && l->peer && l->peer->finished && blame_against_kind(m, l)) {
		keep_needed(l);
		sure_against_kind(l);
		return;
	}
	/* The gets no put matched, when all are known; else the sites that took more than put. */
	found = l->init_ip ? blame_open(m, l) : 0;
	if (!found)
		found = blame_unmatched(l);
	/* Which gets the puts gave back is not known: every site is a candidate, none dropped. */
	if (!l->open_guessed)
		keep_needed(l);
	if (!found && !l->init_ip) {
		l->sure = SURE_LOW;
		l->sure_why = "the references it holds were taken before its first event";
		return;
	}
	l->sure = found == 1 ? SURE_MEDIUM : SURE_LOW;
	l->sure_why =
		!l->init_ip ? "created before recording: the references it had then are unknown"
		: l->peer && l->peer->finished
			? "its call sites match the finished closures of its kind; these "
			  "took references that were not put back here"
		: found == 1	  ? "no finished closure of its kind to compare with; the only "
				    "call site that took references not put back"
		: l->open_guessed ? "no finished closure of its kind to compare with; the puts "
				    "do not tell which of these sites' references they gave "
				    "back"
				  : "no finished closure of its kind to compare with";
}

/* The finished closures a life is compared with: its kind, or without a continuation yet, the
 * kind of the same init site with the most finished closures. */
static struct model_kind *peer_kind(struct model *m, const struct model_life *l)
{
	struct model_kind *best = l->kind && l->kind->finished ? l->kind : NULL;

	if (best || l->first_fn || !l->init_ip)
		return best;
	for (struct model_kind *k = model_kinds(m); k; k = k->next)
		if (k->init_ip == l->init_ip && k->finished &&
		    (!best || k->finished > best->finished))
			best = k;
	return best;
}

static bool is_suspect(struct model_life *l, uint64_t idle_ns)
{
	const struct model_kind *k = l->peer;

	if (l->before_recording)
		return false;
	/* A stack closure holding only its running reference: its function is still at work. */
	if (l->stack && !l->held_other && !l->held_waitlist && !l->live_children)
		return false;
	/* Nothing moved in the process for a while, and its owner is not asleep waiting for it. */
	if (idle_ns && l->state != MODEL_SYNCING) {
		l->idle_ns = idle_ns;
		return true;
	}
	return k && leaks_outlived(l->age_ns, k->finished, k->unfinished,
				   model_kind_percentile(k, 99), k->max_ns);
}

/* What an unfinished life holds: the running and waitlist references, children, the rest. */
static void count_held(struct model_life *l)
{
	int64_t rest;

	l->live_children = 0;
	for (struct model_life *c = l->first_child; c; c = c->next_sibling)
		if (!c->finished)
			l->live_children++;
	l->held_running = !!(l->flags & TRACE_FLAG_RUNNING);
	l->held_waitlist = !!(l->flags & TRACE_FLAG_WAITING);
	l->held_children = l->live_children;
	rest = l->remaining < 0
		       ? 0
		       : l->remaining - l->held_running - l->held_waitlist - l->held_children;
	l->held_other = rest > 0 ? rest : 0;
}

/* Only unfinished children hold it. A stack closure's owner holds its running reference until
 * closure_sync returns: with unfinished children, those are what it waits for. */
static bool only_children_hold(const struct model_life *l)
{
	return !l->held_other && (!l->held_running || l->stack) && !l->held_waitlist &&
	       l->live_children;
}

void leaks_judge(struct model *m, struct model_life *l, struct leaks_summary *out)
{
	int64_t end = out->end_ts;

	count_held(l);
	l->age_ns = end > l->start_ts ? (uint64_t)end - (uint64_t)l->start_ts : 0;
	l->peer = peer_kind(m, l);
	l->nblames = 0;
	l->stuck = false;
	out->unfinished++;
	if (l->no_init) {
		l->verdict = VERDICT_LATE;
		out->late++;
		return;
	}
	/* Still waiting when the process ended: what a hang is, leaked or cut short by a timeout.
	 */
	l->stuck = (out->end == LEAKS_EXITED || out->end == LEAKS_CUT_ENDED) &&
		   (l->state == MODEL_SYNCING || l->on_waitlist);
	out->stuck += l->stuck;
	l->idle_ns = 0;
	if (!out->exited && !is_suspect(l, out->idle_ns)) {
		l->verdict = VERDICT_IN_FLIGHT;
		out->in_flight += !l->stuck; /* the stuck ones are counted apart */
		/* The process was ended while it ran: who held what is what a hang is made of. */
		if (out->end == LEAKS_CUT_ENDED && !only_children_hold(l))
			blame(m, l);
		return;
	}
	/* Counted by word (leaks_word): a stuck one is counted stuck only. */
	if (only_children_hold(l)) {
		l->verdict = VERDICT_KEPT_ALIVE;
		out->kept_alive += !l->stuck;
	} else if (out->exited) {
		l->verdict = VERDICT_LEAKED;
		out->leaked += !l->stuck;
		blame(m, l);
	} else {
		l->verdict = VERDICT_SUSPECT;
		out->suspects += !l->stuck;
		blame(m, l);
	}
}

const struct model_blame *leaks_get_blame(const struct model_life *l)
{
	for (unsigned i = 0; i < l->nblames; i++)
		if (is_get_blame(&l->blames[i]) && l->blames[i].site)
			return &l->blames[i];
	return NULL;
}

struct model_life *leaks_root_of(struct model_life *l)
{
	struct model_life *start = l;

	for (unsigned depth = 0; l->parent && l->parent != start && depth < LEAKS_MAX_DEPTH;
	     depth++)
		l = l->parent;
	return l;
}

static int cmp_u(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Orders lives so that identical verdicts lie together, oldest first within. */
static int cmp_same(const void *pa, const void *pb)
{
	const struct model_life *a = *(struct model_life *const *)pa;
	const struct model_life *b = *(struct model_life *const *)pb;
	const struct model_blame *x = a->nblames ? &a->blames[0] : NULL;
	const struct model_blame *y = b->nblames ? &b->blames[0] : NULL;
	int c;

	if ((c = cmp_u(a->kind ? a->kind->init_ip : 0, b->kind ? b->kind->init_ip : 0)) ||
	    (c = cmp_u(a->kind ? a->kind->fn : 0, b->kind ? b->kind->fn : 0)) ||
	    (c = cmp_u(a->nblames, b->nblames)) || (c = cmp_u(x ? x->kind : 0, y ? y->kind : 0)) ||
	    (c = cmp_u(x ? x->site : 0, y ? y->site : 0)) ||
	    (c = cmp_u((uint64_t)a->remaining, (uint64_t)b->remaining)) ||
	    (c = cmp_u((uint64_t)a->held_children, (uint64_t)b->held_children)) ||
	    (c = cmp_u((uint64_t)a->held_running, (uint64_t)b->held_running)) ||
	    (c = cmp_u((uint64_t)a->held_waitlist, (uint64_t)b->held_waitlist)) ||
	    (c = cmp_u(a->stuck, b->stuck)) || (c = cmp_u(a->state, b->state)) ||
	    (c = cmp_u(a->before_recording, b->before_recording)))
		return c;
	return 0;
}

static int cmp_seq(const void *pa, const void *pb)
{
	const struct model_life *a = *(struct model_life *const *)pa;
	const struct model_life *b = *(struct model_life *const *)pb;
	int c = cmp_same(pa, pb);

	return c ? c : cmp_u(a->seq, b->seq);
}

static int cmp_groups(const void *pa, const void *pb)
{
	const struct leaks_group *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return cmp_u(a->first->seq, b->first->seq);
}

struct leaks_group *leaks_fold(struct model *m, enum leaks_word w, size_t *n)
{
	struct model_life **lives;
	struct leaks_group *groups;
	size_t count = 0, ng = 0;

	*n = 0;
	for (struct model_life *l = model_lives(m); l; l = l->next)
		count += leaks_word(l) == w;
	if (!count)
		return NULL;
	lives = calloc(count, sizeof(*lives));
	groups = calloc(count, sizeof(*groups));
	if (!lives || !groups) {
		free(lives);
		free(groups);
		return NULL;
	}
	count = 0;
	for (struct model_life *l = model_lives(m); l; l = l->next)
		if (leaks_word(l) == w)
			lives[count++] = l;
	qsort(lives, count, sizeof(*lives), cmp_seq);
	for (size_t i = 0; i < count; i++) {
		if (!ng || cmp_same(&groups[ng - 1].first, &lives[i]))
			groups[ng++].first = lives[i];
		groups[ng - 1].count++;
	}
	free(lives);
	qsort(groups, ng, sizeof(*groups), cmp_groups);
	*n = ng;
	return groups;
}

const struct model_blame *leaks_stuck_culprit(const struct model_life *l)
{
	const struct model_blame *b;

	if (!l->stuck)
		return NULL;
	if ((b = leaks_get_blame(l)))
		return b;
	/*
	 * Its own references all came back: what holds it is an unfinished child's, one not judged
	 * itself (in flight when the process was ended). A child that is an error of its own
	 * (leaked, the root of the hang) is told there.
	 */
	for (const struct model_life *c = l->first_child; c; c = c->next_sibling)
		if (!c->finished && c != l && !c->stuck && !leaks_is_root_cause(c) &&
		    (b = leaks_get_blame(c)))
			return b;
	return NULL;
}

uint64_t leaks_wait_site(const struct model_life *l)
{
	return l->state == MODEL_SYNCING ? l->sync_ip : l->wait_ip;
}

uint64_t leaks_blamed_site(const struct model_life *l)
{
	const struct model_blame *culprit = leaks_stuck_culprit(l);

	if (culprit)
		return culprit->site;
	if (l->stuck)
		return leaks_wait_site(l);
	return l->nblames ? l->blames[0].site : l->init_ip;
}

const char *leaks_age_text(const struct model_life *l, char *buf, size_t len)
{
	const struct model_kind *k = l->peer;
	char age[32], p99[32], max[32];

	model_duration_text(l->age_ns, age, sizeof(age));
	if (l->before_recording)
		snprintf(buf, len, "alive %s; created before the recording: never a suspect", age);
	else if (l->idle_ns)
		snprintf(buf, len,
			 "alive %s; the process made no closure operation for its last %s", age,
			 model_duration_text(l->idle_ns, p99, sizeof(p99)));
	else if (!k)
		snprintf(buf, len, "alive %s; no finished closure of its kind to compare with",
			 age);
	else
		snprintf(buf, len,
			 "alive %s; %" PRIu64 " finished closure%s of its kind live p99 %s, max %s",
			 age, k->finished, k->finished == 1 ? "" : "s",
			 model_duration_text(model_kind_percentile(k, 99), p99, sizeof(p99)),
			 model_duration_text(k->max_ns, max, sizeof(max)));
	return buf;
}

const char *leaks_suspect_rule(const struct leaks_summary *s, char *buf, size_t len)
{
	char idle[32];
	int n = snprintf(buf, len,
			 "a suspect has lived over %dx the p99 and %dx the max of the finished "
			 "closures of its kind (at least %d of them, no fewer than in flight)",
			 LEAKS_SUSPECT_P99, LEAKS_SUSPECT_MAX, LEAKS_SUSPECT_MIN_FINISHED);

	if (s->end == LEAKS_CUT_RUNNING && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 ", or was left by a process idle for the last %s (no closure operation), "
			 "not waited for in closure_sync",
			 model_duration_text(LEAKS_IDLE_NS, idle, sizeof(idle)));
	return buf;
}

const char *leaks_sure_text(enum blame_sure sure)
{
	return sure == SURE_HIGH ? "high" : sure == SURE_MEDIUM ? "medium" : "low";
}

static const char *refs_word(double n)
{
	return n >= 0.5 && n < 1.5 ? "reference" : "references";
}

const char *leaks_blame_text(struct model *m, const struct model_blame *b, char *buf, size_t len)
{
	char fn[256];

	switch (b->kind) {
	case BLAME_EXCESS_TAKE:
		snprintf(buf, len,
			 "took %.0f %s; the finished closures of its kind take %.3g here%s",
			 b->actual, refs_word(b->actual), b->expected,
			 b->consistent ? "" : " on average");
		break;
	case BLAME_MISSING_PUT:
		snprintf(buf, len,
			 "put %.0f %s back; the finished closures of its kind put %.3g here%s",
			 b->actual, refs_word(b->actual), b->expected,
			 b->consistent ? "" : " on average");
		break;
	case BLAME_UNMATCHED:
		snprintf(buf, len, "took %.0f %s, %.0f not put back", b->actual,
			 refs_word(b->actual), b->refs);
		break;
	case BLAME_RUNNING:
		if (!b->site) {
			snprintf(buf, len,
				 "the running reference, held since before recording, "
				 "was never given up");
			break;
		}
		text_snprintf(buf, len, "the running reference (owned by %s) was never given up",
			      model_func_text(m, b->site, fn, sizeof(fn)));
		break;
	case BLAME_WAITLIST:
		snprintf(buf, len, "closure_wait here; the waitlist was never woken");
		break;
	}
	return buf;
}

const char *leaks_blame_short(const struct model_blame *b)
{
	static const char *const words[] = {
		[BLAME_EXCESS_TAKE] = "takes more than its kind",
		[BLAME_MISSING_PUT] = "a put is missing",
		[BLAME_UNMATCHED] = "took refs never put back",
		[BLAME_RUNNING] = "running ref never given up",
		[BLAME_WAITLIST] = "waitlist never woken",
	};
	return words[b->kind];
}

const char *leaks_blame_name(enum blame_kind k)
{
	static const char *const names[] = {"excess_take", "missing_put", "unmatched_take",
					    "running_ref", "never_woken"};
	return names[k];
}
