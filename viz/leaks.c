/*
 * Leak verdicts. An unfinished closure's count is made of: the running reference (flag R), the
 * waitlist's reference (flag W), one per unfinished child, and the rest, taken with closure_get.
 * The first three are known exactly; the rest is attributed to call sites by comparing the
 * closure's ledger with the finished closures of the same kind, which show what balanced looks
 * like.
 */
#include "leaks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_blame(struct model_life *l, enum blame_kind kind, uint64_t site, double refs,
		      double expected, double actual)
{
	struct model_blame b = {kind, site, refs, expected, actual};
	unsigned i;

	/* Keep the list sorted by how much each explains, first come first on ties. */
	for (i = l->nblames; i > 0 && l->blames[i - 1].refs < refs; i--)
		if (i < MODEL_MAX_BLAMES)
			l->blames[i] = l->blames[i - 1];
	if (i < MODEL_MAX_BLAMES)
		l->blames[i] = b;
	if (l->nblames < MODEL_MAX_BLAMES)
		l->nblames++;
}

static const struct model_site *kind_site(const struct model_kind *k, uint64_t ip)
{
	for (unsigned i = 0; i < k->nsites; i++)
		if (k->sites[i].ip == ip)
			return &k->sites[i];
	return NULL;
}

static bool in_life(const struct model_life *l, uint64_t ip)
{
	for (unsigned i = 0; i < l->nsites; i++)
		if (l->sites[i].ip == ip)
			return true;
	return false;
}

/* Compare with the finished closures of the kind: sites that took more or put less. */
static unsigned blame_against_kind(struct model_life *l)
{
	const struct model_kind *k = l->kind;
	double n = (double)k->finished;
	unsigned before = l->nblames;

	for (unsigned i = 0; i < l->nsites; i++) {
		const struct model_site *s = &l->sites[i], *ks = kind_site(k, s->ip);
		double lt = (double)model_site_plain_taken(s), lp = (double)model_site_plain_put(s);
		double kt = ks ? (double)model_site_plain_taken(ks) / n : 0;
		double kp = ks ? (double)model_site_plain_put(ks) / n : 0;

		if (lt - kt >= 0.5)
			add_blame(l, BLAME_EXCESS_TAKE, s->ip, lt - kt, kt, lt);
		if (kp - lp >= 0.5)
			add_blame(l, BLAME_MISSING_PUT, s->ip, kp - lp, kp, lp);
	}
	for (unsigned i = 0; i < k->nsites; i++) {
		const struct model_site *ks = &k->sites[i];
		double kp = (double)model_site_plain_put(ks) / n;

		if (!in_life(l, ks->ip) && kp >= 0.5)
			add_blame(l, BLAME_MISSING_PUT, ks->ip, kp, kp, 0);
	}
	return l->nblames - before;
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

static void blame(struct model_life *l)
{
	unsigned found;

	if (l->held_waitlist)
		add_blame(l, BLAME_WAITLIST, l->wait_ip, 1, 0, 1);
	if (l->held_running)
		add_blame(l, BLAME_RUNNING, l->running_from, 1, 0, 1);
	if (l->held_other <= 0) {
		l->sure = SURE_HIGH;
		l->sure_why = l->held_waitlist ? "a waitlist holds it and nobody woke it"
					       : "its running reference was never given up";
		return;
	}
	/* Closures created before recording have no known kind to compare with. */
	if (l->init_ip && l->kind && l->kind->finished) {
		found = blame_against_kind(l);
		if (found) {
			const struct model_blame *top = &l->blames[0];

			if (found == 1 && fabs(top->refs - (double)l->held_other) < 0.5) {
				l->sure = SURE_HIGH;
				l->sure_why =
					"the only call site that differs from the finished "
					"closures of its kind, by exactly the references held";
			} else if (l->nblames == 1 || top->refs > l->blames[1].refs) {
				l->sure = SURE_MEDIUM;
				l->sure_why = "the call site that differs most from the finished "
					      "closures of its kind";
			} else {
				l->sure = SURE_LOW;
				l->sure_why = "several call sites differ as much from the finished "
					      "closures of its kind";
			}
			return;
		}
	}
	found = blame_unmatched(l);
	if (!found && !l->init_ip) {
		l->sure = SURE_LOW;
		l->sure_why = "the references it holds were taken before its first event";
		return;
	}
	l->sure = found == 1 ? SURE_MEDIUM : SURE_LOW;
	l->sure_why = !l->init_ip
			      ? "created before recording: the references it had then are unknown"
		      : l->kind && l->kind->finished
			      ? "its call sites match the finished closures of its kind; these "
				"took references that were not put back here"
		      : found == 1 ? "no finished closure of its kind to compare with; the only "
				     "call site that took references not put back"
				   : "no finished closure of its kind to compare with";
}

void leaks_analyze(struct model *m, struct leaks_summary *out)
{
	memset(out, 0, sizeof(*out));
	for (struct model_life *l = model_lives(m); l; l = l->next) {
		int64_t rest;

		if (l->finished)
			continue;
		l->live_children = 0;
		for (struct model_life *c = l->first_child; c; c = c->next_sibling)
			if (!c->finished)
				l->live_children++;
		l->held_running = !!(l->flags & TRACE_FLAG_RUNNING);
		l->held_waitlist = !!(l->flags & TRACE_FLAG_WAITING);
		l->held_children = l->live_children;
		rest = l->remaining < 0 ? 0
					: l->remaining - l->held_running - l->held_waitlist -
						  l->held_children;
		l->held_other = rest > 0 ? rest : 0;
		l->stuck = l->state == MODEL_SYNCING || l->on_waitlist;
		l->nblames = 0;
		out->unfinished++;
		if (l->stuck)
			out->stuck++;
		/* A stack closure's owner holds its running reference until closure_sync returns:
		 * with unfinished children, those are what it waits for. */
		if (!l->held_other && (!l->held_running || l->stack) && !l->held_waitlist &&
		    l->live_children) {
			l->verdict = VERDICT_KEPT_ALIVE;
			out->kept_alive++;
			continue;
		}
		l->verdict = VERDICT_LEAKED;
		out->leaked++;
		blame(l);
	}
}

struct model_life *leaks_root_of(struct model_life *l)
{
	while (l->parent)
		l = l->parent;
	return l;
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
		snprintf(buf, len, "took %.0f %s; the finished closures of its kind take %.3g here",
			 b->actual, refs_word(b->actual), b->expected);
		break;
	case BLAME_MISSING_PUT:
		snprintf(buf, len,
			 "put %.0f %s back; the finished closures of its kind put %.3g here",
			 b->actual, refs_word(b->actual), b->expected);
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
		snprintf(buf, len, "the running reference (owned by %s) was never given up",
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
