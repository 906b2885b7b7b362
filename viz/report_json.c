/*
 * report --json (report.c has the text): totals, kinds, and every unfinished closure's verdict as
 * one JSON document, written as it is made.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "report_internal.h"
#include "json_value.h"
#include "viz.h"
#include "xalloc.h"

static json_t *jsite(struct model *m, uint64_t ip)
{
	char buf[TXT];
	const struct model_sym *s = model_sym(m, ip);
	json_t *o = json_object();

	snprintf(buf, sizeof(buf), "0x%" PRIx64, ip);
	json_object_set_new(o, "ip", json_string(buf));
	json_object_set_new(o, "site", json_text(model_site_text(m, ip, buf, sizeof(buf))));
	if (s && s->func)
		json_object_set_new(o, "function", json_text(s->func));
	return o;
}

static json_t *jlife(struct model *m, const struct model_life *l)
{
	char buf[2 * TXT];
	json_t *o = json_object();

	json_object_set_new(o, "closure", json_string(model_life_name(l, buf, sizeof(buf))));
	if (l->pid)
		json_object_set_new(o, "pid", json_integer(l->pid));
	json_object_set_new(o, "verdict", json_string(leaks_verdict_word(l)));
	json_object_set_new(o, "function", json_text(model_life_function(m, l, buf, sizeof(buf))));
	json_object_set_new(o, "init", l->init_ip ? jsite(m, l->init_ip) : json_null());
	json_object_set_new(o, "state", json_text(model_state_text(m, l, buf, sizeof(buf))));
	json_object_set_new(o, "remaining", json_integer(l->remaining));
	json_object_set_new(o, "age_ns", json_integer((json_int_t)report_age_at_end(m, l)));
	if (l->before_recording && !l->no_init)
		json_object_set_new(o, "created_before_recording", json_true());
	if (l->snapshot)
		json_object_set_new(o, "alive_at_attach", json_true());
	if (l->no_init)
		json_object_set_new(o, "used_after_finish_without_init", json_true());
	if (l->reused)
		json_object_set_new(o, "address_reused", json_true());
	return o;
}

#define JSON_CHAIN_SHOWN 8

/*
 * How many closures lie above a chain's cut: from p up to the root, or back to l, at most
 * LEAKS_MAX_DEPTH. Each closure's depth is kept once known, so that the leaks of one deep chain
 * cost one walk up it in all, not one each (a 100,000-deep chain of leaks was 5 * 10^9 steps).
 */
struct chain_depths {
	struct hashmap depth;		/* (life, 0) -> uint32_t: closures from it up to its root */
	const struct model_life **path; /* a walk up, LEAKS_MAX_DEPTH + 1 at most */
};

static void chain_depths_init(struct chain_depths *d)
{
	hashmap_init(&d->depth, sizeof(uint32_t));
	d->path = NULL; /* at the first chain cut */
}

static void chain_depths_free(struct chain_depths *d)
{
	hashmap_free(&d->depth);
	free(d->path);
}

static json_int_t chain_left(struct chain_depths *d, const struct model_life *p,
			     const struct model_life *l)
{
	const struct model_life *x = p;
	const uint32_t *known = NULL;
	size_t n = 0;
	uint32_t base = 0;
	unsigned more = 0;

	if (!d->path)
		d->path = xcalloc(LEAKS_MAX_DEPTH + 1, sizeof(*d->path));
	while (x && x != l && n <= LEAKS_MAX_DEPTH &&
	       !(known = hashmap_get(&d->depth, (uintptr_t)x, 0))) {
		d->path[n++] = x;
		x = x->parent;
	}
	if (n <= LEAKS_MAX_DEPTH && (!x || known)) { /* a root above: every depth on the way */
		base = known ? *known : 0;
		for (size_t i = n; i-- > 0;)
			*(uint32_t *)hashmap_put(&d->depth, (uintptr_t)d->path[i], 0, NULL) =
				base + (uint32_t)(n - i);
		return base + n < LEAKS_MAX_DEPTH ? (json_int_t)(base + n) : LEAKS_MAX_DEPTH;
	}
	/* Back to l (a cycle) or deeper than the bound: counted as it goes, never kept. */
	for (x = p; x && x != l && more < LEAKS_MAX_DEPTH; x = x->parent)
		more++;
	return more;
}

static json_t *jleak(struct model *m, struct chain_depths *depths, const struct model_life *l)
{
	char buf[2 * TXT];
	json_t *o = jlife(m, l), *held = json_object(), *blames = json_array(),
	       *chain = json_array(), *children = json_array();

	json_object_set_new(held, "running", json_integer(l->held_running));
	json_object_set_new(held, "waitlist", json_integer(l->held_waitlist));
	json_object_set_new(held, "children", json_integer(l->held_children));
	json_object_set_new(held, "get", json_integer(l->held_other));
	json_object_set_new(o, "held", held);
	for (unsigned i = 0; i < l->nblames; i++) {
		const struct model_blame *b = &l->blames[i];
		json_t *jb = jsite(m, b->site);

		json_object_set_new(jb, "why", json_string(leaks_blame_name(b->kind)));
		json_object_set_new(jb, "refs", json_real(b->refs));
		json_object_set_new(jb, "text",
				    json_text(leaks_blame_text(m, b, buf, sizeof(buf))));
		json_array_append_new(blames, jb);
	}
	json_object_set_new(o, "blame", blames);
	json_object_set_new(o, "sure", json_string(leaks_sure_text(l->sure)));
	json_object_set_new(o, "sure_why", json_text(l->sure_why ? l->sure_why : ""));
	if (l->hang_root) {
		json_object_set_new(o, "hang_root", json_true());
		json_object_set_new(o, "waiting_behind",
				    json_integer((json_int_t)l->waiting_behind));
		json_object_set_new(o, "quiet_ns", json_integer((json_int_t)l->hang_quiet_ns));
	}
	if (l->verdict == VERDICT_SUSPECT) {
		json_object_set_new(o, "why_suspect",
				    json_text(leaks_age_text(l, buf, sizeof(buf))));
		if (l->idle_ns) /* left by an idle process: its kind may have no finished closure */
			json_object_set_new(o, "idle_ns", json_integer((json_int_t)l->idle_ns));
	}
	if (l->verdict == VERDICT_SUSPECT && l->peer) {
		json_t *peer = json_object();

		json_object_set_new(peer, "finished", json_integer((json_int_t)l->peer->finished));
		json_object_set_new(peer, "p99_ns",
				    json_integer((json_int_t)model_kind_percentile(l->peer, 99)));
		json_object_set_new(peer, "max_ns", json_integer((json_int_t)l->peer->max_ns));
		json_object_set_new(o, "kind_lifetimes", peer);
	}
	for (struct model_life *c = l->first_child; c; c = c->next_sibling)
		if (!c->finished)
			json_array_append_new(children,
					      json_string(model_life_name(c, buf, sizeof(buf))));
	json_object_set_new(o, "held_by_children", children);
	for (struct model_life *p = l->parent; p && p != l; p = p->parent) {
		json_t *jp;

		/* Chains are capped (a 10,000-deep chain of leaks stays small): say what is left.
		 */
		if (json_array_size(chain) == JSON_CHAIN_SHOWN) {
			json_object_set_new(o, "chain_left_out",
					    json_integer(chain_left(depths, p, l)));
			break;
		}
		jp = json_object();

		json_object_set_new(jp, "closure",
				    json_string(model_life_name(p, buf, sizeof(buf))));
		json_object_set_new(jp, "verdict", json_string(leaks_verdict_word(p)));
		json_array_append_new(chain, jp);
	}
	json_object_set_new(o, "chain", chain);
	return o;
}

/* A stuck closure: what it holds and who is blamed, as a root cause, and what it waits on. */
static json_t *jstuck(struct model *m, struct chain_depths *depths, const struct model_life *l)
{
	json_t *o = jleak(m, depths, l);

	if (l->on_waitlist) {
		char buf[64];

		snprintf(buf, sizeof(buf), "0x%" PRIx64, l->waitlist);
		json_object_set_new(o, "waitlist", json_string(buf));
		json_object_set_new(o, "wait", jsite(m, l->wait_ip));
	}
	if (l->state == MODEL_SYNCING)
		json_object_set_new(o, "sync", jsite(m, l->sync_ip));
	return o;
}

/* Every verdict says whether the trace it stands on is complete. */
static json_t *verdict(struct viz_input *in, json_t *o)
{
	json_object_set_new(o, "complete", json_boolean(!viz_incomplete(in)));
	return o;
}

/* Closures by kind, with the lifetimes of the finished ones. */
static json_t *json_kinds(struct model *m)
{
	json_t *jkinds = json_array();
	struct model_kind **kinds;
	size_t n = 0;
	char buf[3 * TXT];

	kinds = report_sorted_kinds(m, &n);
	for (size_t i = 0; kinds && i < n; i++) {
		struct model_kind *k = kinds[i];
		json_t *jk = json_object();

		json_object_set_new(jk, "kind", json_text(model_kind_text(m, k, buf, sizeof(buf))));
		json_object_set_new(jk, "init", k->init_ip ? jsite(m, k->init_ip) : json_null());
		json_object_set_new(jk, "continuation",
				    k->fn ? json_text(model_func_text(m, k->fn, buf, sizeof(buf)))
					  : json_null());
		json_object_set_new(jk, "count", json_integer((json_int_t)k->total));
		json_object_set_new(jk, "finished", json_integer((json_int_t)k->finished));
		json_object_set_new(jk, "unfinished", json_integer((json_int_t)k->unfinished));
		if (k->finished) {
			json_t *lt = json_object();

			json_object_set_new(lt, "p50",
					    json_integer((json_int_t)model_kind_percentile(k, 50)));
			json_object_set_new(lt, "p90",
					    json_integer((json_int_t)model_kind_percentile(k, 90)));
			json_object_set_new(lt, "p99",
					    json_integer((json_int_t)model_kind_percentile(k, 99)));
			json_object_set_new(lt, "max", json_integer((json_int_t)k->max_ns));
			json_object_set_new(jk, "lifetime_ns", lt);
		}
		json_array_append_new(jkinds, jk);
	}
	free(kinds);
	return jkinds;
}

/* ---- the document, written as it is made ---- */

/* Writes the value as json_dumpf(JSON_INDENT(2)) would at that depth (indent spaces more), its
 * strings as every output writes them (json_value.h), and frees it. */
static void put_value(FILE *f, json_t *v, int indent)
{
	json_value_write(f, v, 2, indent);
	json_decref(v);
}

struct jout {
	FILE *f;
	bool members; /* a member is written already */
	size_t items; /* in the open array */
};

static void put_key(struct jout *o, const char *key)
{
	fprintf(o->f, "%s\"%s\": ", o->members ? ",\n  " : "{\n  ", key);
	o->members = true;
}

static void member(struct jout *o, const char *key, json_t *v)
{
	put_key(o, key);
	put_value(o->f, v, 2);
}

static void array_open(struct jout *o, const char *key)
{
	put_key(o, key);
	fputc('[', o->f);
	o->items = 0;
}

static void array_item(struct jout *o, json_t *v)
{
	fputs(o->items++ ? ",\n    " : "\n    ", o->f);
	put_value(o->f, v, 4);
}

static void array_close(struct jout *o)
{
	fputs(o->items ? "\n  ]" : "]", o->f);
}

static json_t *totals(struct viz_input *in)
{
	struct model *m = in->m;
	json_t *t = json_object();

	json_object_set_new(t, "events", json_integer((json_int_t)model_counts(m)->events));
	json_object_set_new(t, "closures", json_integer((json_int_t)model_counts(m)->lives));
	json_object_set_new(t, "finished", json_integer((json_int_t)model_counts(m)->finished));
	json_object_set_new(t, "unfinished", json_integer((json_int_t)in->leaks.unfinished));
	json_object_set_new(t, "leaked", json_integer((json_int_t)in->leaks.leaked));
	json_object_set_new(t, "hang_roots", json_integer((json_int_t)in->leaks.hang_roots));
	json_object_set_new(t, "kept_alive", json_integer((json_int_t)in->leaks.kept_alive));
	json_object_set_new(t, "stuck", json_integer((json_int_t)in->leaks.stuck));
	json_object_set_new(t, "in_flight", json_integer((json_int_t)in->leaks.in_flight));
	json_object_set_new(t, "suspects", json_integer((json_int_t)in->leaks.suspects));
	json_object_set_new(t, "set_aside", json_integer((json_int_t)in->leaks.late));
	return t;
}

/*
 * The list of the closures of one word (leaks_word: each closure is in one list at most), a
 * closure at a time: memory holds one element, whatever the count.
 */
static void verdict_list(struct jout *o, struct viz_input *in, struct chain_depths *depths,
			 enum leaks_word w, const char *key)
{
	struct model *m = in->m;

	array_open(o, key);
	for (struct model_life *l = model_lives(m); l; l = l->next) {
		if (leaks_word(l) != w)
			continue;
		if (w == LEAKS_WORD_KEPT_ALIVE)
			array_item(o, verdict(in, jlife(m, l)));
		else if (w == LEAKS_WORD_STUCK)
			array_item(o, verdict(in, jstuck(m, depths, l)));
		else
			array_item(o, verdict(in, jleak(m, depths, l)));
	}
	array_close(o);
}

static json_t *warnings(struct viz_input *in)
{
	json_t *w = json_array();
	char buf[3 * TXT];

	if (!in->info.has_end)
		json_array_append_new(w, json_string("truncated: no end record"));
	if (in->info.lost > 0) {
		snprintf(buf, sizeof(buf), "%lld event%s lost: the verdicts are incomplete",
			 in->info.lost, in->info.lost == 1 ? "" : "s");
		json_array_append_new(w, json_string(buf));
	}
	if (in->info.has_trees && *report_sampled_text(&in->info, buf, sizeof(buf)))
		json_array_append_new(w, json_text(buf));
	if (*report_missed_text(&in->info, buf, sizeof(buf)))
		json_array_append_new(w, json_text(buf));
	if (*report_unread_text(&in->info, buf, sizeof(buf)))
		json_array_append_new(w, json_text(buf));
	if (*report_claims_text(&in->info, buf, sizeof(buf)))
		json_array_append_new(w, json_text(buf));
	if (!in->leaks.exited) {
		char end[256];

		char rule[320];

		snprintf(buf, sizeof(buf), "%s: unfinished closures are in flight, not leaks%s; %s",
			 viz_end_text(&in->info, end, sizeof(end)),
			 in->leaks.end == LEAKS_CUT_ENDED ? ", and those still waiting are stuck"
							  : "",
			 leaks_suspect_rule(&in->leaks, rule, sizeof(rule)));
		json_array_append_new(w, json_text(buf));
	}
	return w;
}

/*
 * The document as json_dumpf(JSON_INDENT(2)) would write it, member by member and closure by
 * closure: time linear and memory bounded by one closure's element, not by the number of leaks
 * (a 100,000-deep chain of leaks is 150 MB of JSON).
 */
int report_json(struct viz_input *in, FILE *out)
{
	struct jout o = {.f = out};
	struct chain_depths depths;

	chain_depths_init(&depths);
	member(&o, "trace", json_text(in->path));
	member(&o, "complete", json_boolean(!viz_incomplete(in)));
	member(&o, "truncated", json_boolean(!in->info.has_end));
	member(&o, "lost", json_integer(in->info.lost));
	member(&o, "process_exited", json_boolean(in->leaks.exited));
	member(&o, "cut_short",
	       json_boolean(in->leaks.end == LEAKS_CUT_ENDED ||
			    in->leaks.end == LEAKS_CUT_RUNNING));
	member(&o, "totals", totals(in));
	member(&o, "kinds", json_kinds(in->m));
	verdict_list(&o, in, &depths, LEAKS_WORD_LEAKED, "leaks");
	verdict_list(&o, in, &depths, LEAKS_WORD_HANG_ROOT, "hang_roots");
	verdict_list(&o, in, &depths, LEAKS_WORD_SUSPECT, "suspects");
	verdict_list(&o, in, &depths, LEAKS_WORD_KEPT_ALIVE, "kept_alive");
	verdict_list(&o, in, &depths, LEAKS_WORD_STUCK, "stuck");
	if (in->info.has_trees) {
		json_t *t = json_object();

		json_object_set_new(t, "sample", json_integer(in->info.sample));
		json_object_set_new(t, "trees", json_integer(in->info.trees));
		json_object_set_new(t, "trees_left_out", json_integer(in->info.trees_left_out));
		member(&o, "trees", t);
	}
	member(&o, "warnings", warnings(in));
	fputs("\n}\n", out);
	chain_depths_free(&depths);
	return 0;
}
