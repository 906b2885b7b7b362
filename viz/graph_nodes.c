/*
 * The picture's nodes and edges (graph.c draws the picture, graph_walk.c walks the trees,
 * graph_wait.c draws what closures wait on): a closure, a fold of alike ones, the culprits a fold
 * or a cut leaves out, a chain's elided levels, and their colours by verdict.
 */
#include <gvc.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "trace_text.h"
#include "viz.h"

#define TXT 512

/* ---- nodes ---- */

/* The name of a node that stands for several closures, or for none. */
static const char *name_of(struct builder *b, char *buf, size_t len)
{
	snprintf(buf, len, "f%u", ++b->folded);
	return buf;
}

/* What a closure is judged, for a picture: one line, with the references it holds. */
static void verdict_line(struct builder *b, const struct model_life *l, int64_t refs, bool group)
{
	char site[TXT];
	enum leaks_word w = leaks_word(l); /* the words of every output */

	if (w == LEAKS_WORD_STUCK && l->verdict == VERDICT_KEPT_ALIVE)
		label_text(&b->lab, "STUCK: "); /* in closure_sync, on its children */
	switch (w == LEAKS_WORD_STUCK && l->verdict == VERDICT_KEPT_ALIVE ? LEAKS_WORD_KEPT_ALIVE
									  : w) {
	case LEAKS_WORD_KEPT_ALIVE:
		if (group)
			label_text(&b->lab, "kept alive by unfinished children");
		else
			label_printf(&b->lab, "kept alive by %u unfinished child%s",
				     l->live_children, l->live_children == 1 ? "" : "ren");
		return;
	case LEAKS_WORD_IN_FLIGHT:
		label_text(&b->lab, "in flight (the recording was cut short)");
		return;
	case LEAKS_WORD_SET_ASIDE:
		label_text(&b->lab, "set aside: its events reached the trace late");
		return;
	default: /* a culprit, or stuck: in capitals, with what it holds and who is blamed */
		break;
	}
	label_printf(&b->lab, "%s: ", leaks_word_caps(w));
	if (refs < 0) /* named as a parent only: created before recording, its count never seen */
		label_text(&b->lab, "count not known");
	else
		label_printf(&b->lab, "%s%" PRId64 " ref%s", group ? "" : "holds ", refs,
			     refs == 1 ? "" : "s");
	if (group)
		label_text(&b->lab, " held in all");
	for (unsigned i = 0; i < (group ? !!l->nblames : l->nblames); i++) {
		const struct model_sym *s = model_sym(b->in->m, l->blames[i].site);

		label_newline(&b->lab);
		label_printf(&b->lab, "%s %s", i ? "also" : "blame:",
			     model_site_text(b->in->m, l->blames[i].site, site, sizeof(site)));
		if (!group && s && s->func && s->file)
			label_printf(&b->lab, " %s", s->func);
		label_printf(&b->lab, ": %s", leaks_blame_short(&l->blames[i]));
		if (!i && !group)
			label_printf(&b->lab, " (sure: %s)", leaks_sure_text(l->sure));
	}
}

static void life_label(struct builder *b, const struct gl *g)
{
	struct model *m = b->in->m;
	const struct model_life *l = g->l;
	char func[TXT], site[TXT], name[64], state[2 * TXT], d[32];

	label_reset(&b->lab);
	label_text(&b->lab, model_life_function(m, l, func, sizeof(func)));
	label_newline(&b->lab);
	if (l->init_ip)
		label_printf(&b->lab, "init %s",
			     model_site_text(b->in->m, l->init_ip, site, sizeof(site)));
	else
		label_text(&b->lab, model_origin_text(l, site, sizeof(site)));
	label_newline(&b->lab);
	label_text(&b->lab, model_life_name(l, name, sizeof(name)));
	label_newline(&b->lab);
	if (g->cut || (l->parent_addr == l->addr && !l->parent)) {
		/* The model does not link a closure to itself; other loops are cut here. */
		if (l->parent == l || !l->parent)
			label_text(&b->lab, "its own parent (a cycle)");
		else
			label_printf(&b->lab, "parent %s: a cycle",
				     model_life_name(l->parent, name, sizeof(name)));
		label_newline(&b->lab);
	}
	label_text(&b->lab, model_state_text(m, l, state, sizeof(state)));
	label_newline(&b->lab);
	if (l->finished) {
		label_printf(&b->lab, "lifetime %s",
			     model_duration_text((uint64_t)l->end_ts - (uint64_t)l->start_ts, d,
						 sizeof(d)));
		return;
	}
	if (l->verdict == VERDICT_SUSPECT)
		label_text(&b->lab, leaks_age_text(l, state, sizeof(state)));
	else
		label_printf(&b->lab, "alive %s at the end",
			     model_duration_text(l->age_ns, d, sizeof(d)));
	label_newline(&b->lab);
	verdict_line(b, l, l->remaining, false);
}

Agnode_t *graph_new_node(struct builder *b, const char *name)
{
	b->nodes++;
	return agnode(b->g, (char *)name, 1);
}

void graph_set(void *obj, const char *attr, const char *value)
{
	agset(obj, (char *)attr, (char *)value);
}

/* Finished: quiet grey; in flight: blue; kept alive: orange; culprits (gtree_culprit): red. */
void graph_paint(Agnode_t *n, const struct model_life *l)
{
	if (l->finished || l->verdict == VERDICT_LATE) {
		graph_set(n, "color", "gray60");
		graph_set(n, "fontcolor", "gray35");
		return;
	}
	graph_set(n, "penwidth", "2");
	switch (l->verdict) {
	case VERDICT_IN_FLIGHT:
		graph_set(n, "color", "#3465a4");
		graph_set(n, "fillcolor", "#e4edf8");
		graph_set(n, "fontcolor", "#1b3a63");
		graph_set(n, "penwidth", "1.5");
		break;
	case VERDICT_KEPT_ALIVE:
		graph_set(n, "color", "darkorange");
		graph_set(n, "fillcolor", "#ffe8c8");
		break;
	default:
		graph_set(n, "color", "red");
		graph_set(n, "fillcolor", "#ffd8d8");
		graph_set(n, "fontcolor", "#8b0000");
		graph_set(n, "penwidth", "2.5");
	}
}

Agnode_t *graph_life_node(struct builder *b, struct gl *g)
{
	char name[32];
	Agnode_t *n;

	snprintf(name, sizeof(name), "c%" PRIu64, g->l->seq);
	n = graph_new_node(b, name);
	life_label(b, g);
	graph_set(n, "label", b->lab.text);
	graph_paint(n, g->l);
	g->node = n;
	return n;
}

static uint64_t life_ns(const struct model_life *l)
{
	return l->end_ts > l->start_ts ? (uint64_t)l->end_ts - (uint64_t)l->start_ts : 0;
}

static int cmp_ns(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void fold_style(Agnode_t *node)
{
	graph_set(node, "style", "rounded,filled");
	graph_set(node, "peripheries", "2");
}

/* The closures of l's kind folded away beside it (model_fold_finished); NULL: none. */
static struct model_fold *folded_beside(struct model *m, const struct gl *g)
{
	for (struct model_fold *f = model_folds(m, g->parent ? g->parent->l : NULL); f; f = f->next)
		if (f->kind == g->l->kind && f->count)
			return f;
	return NULL;
}

/* The p50 and max lifetime of the group with the lives folded beside it. */
static void fold_lifetimes(const struct model_fold *f, const uint64_t *ns, size_t n, uint64_t *p50,
			   uint64_t *max)
{
	struct model_kind *all;

	if (!f || !f->lifetimes) {
		*p50 = ns[(n - 1) / 2];
		*max = ns[n - 1];
		return;
	}
	all = model_kind_copy(f->lifetimes);
	for (size_t i = 0; i < n; i++)
		model_kind_add_lifetime(all, ns[i]);
	*p50 = model_kind_percentile(all, 50);
	*max = all->max_ns;
	model_kind_free(all);
}

Agnode_t *graph_fold_node(struct builder *b, struct gl **group, size_t n)
{
	struct model *m = b->in->m;
	uint64_t *ns = calloc(n, sizeof(*ns)), p50_ns, max_ns;
	char name[32], func[TXT], site[TXT], p50[32], max[32];
	const struct model_life *l = group[0]->l;
	struct model_fold *folded = folded_beside(m, group[0]);
	uint64_t below = 0, count = n;
	Agnode_t *node;

	if (!ns) {
		b->oom = true;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		ns[i] = life_ns(group[i]->l);
		below += group[i]->below;
	}
	if (folded) {
		count += folded->count;
		below += folded->below;
	}
	node = graph_new_node(b, name_of(b, name, sizeof(name)));
	for (size_t i = 0; i < n; i++)
		group[i]->node = node;
	if (folded)
		folded->node = node;
	qsort(ns, n, sizeof(*ns), cmp_ns);
	fold_lifetimes(folded, ns, n, &p50_ns, &max_ns);
	label_reset(&b->lab);
	label_printf(&b->lab, "×%" PRIu64 " %s", count,
		     model_life_function(m, l, func, sizeof(func)));
	label_newline(&b->lab);
	if (l->init_ip)
		label_printf(&b->lab, "init %s",
			     model_site_text(b->in->m, l->init_ip, site, sizeof(site)));
	else
		label_text(&b->lab, "created before recording");
	label_newline(&b->lab);
	label_printf(&b->lab, "finished, p50 %s, max %s",
		     model_duration_text(p50_ns, p50, sizeof(p50)),
		     model_duration_text(max_ns, max, sizeof(max)));
	if (below) {
		label_newline(&b->lab);
		label_printf(&b->lab, "(+%" PRIu64 " closure%s below)", below,
			     below == 1 ? "" : "s");
	}
	graph_set(node, "label", b->lab.text);
	graph_set(node, "color", "gray60");
	graph_set(node, "fontcolor", "gray35");
	graph_set(node, "fillcolor", "gray95");
	fold_style(node);
	free(ns);
	return node;
}

void graph_edge(struct builder *b, Agnode_t *from, Agnode_t *to, const struct model_life *child)
{
	Agedge_t *e;

	if (!from || !to)
		return;
	e = agedge(b->g, from, to, NULL, 1);
	if (!child || child->finished || child->verdict == VERDICT_LATE)
		return;
	agset(e, "color",
	      child->verdict == VERDICT_KEPT_ALIVE  ? "darkorange"
	      : child->verdict == VERDICT_IN_FLIGHT ? "#3465a4"
						    : "red");
	agset(e, "penwidth", child->verdict == VERDICT_IN_FLIGHT ? "1.5" : "2");
}

/* A dashed edge to a node that stands for closures left out, red when they are culprits. */
static void left_out_edge(struct builder *b, Agnode_t *from, Agnode_t *to, bool culprits)
{
	Agedge_t *e = from && to ? agedge(b->g, from, to, NULL, 1) : NULL;

	if (!e)
		return;
	if (culprits)
		agsafeset(e, "color", "red", "");
	agsafeset(e, "style", "dashed", "");
}

/*
 * Culprits the nodes above them do not show, in a red node of their own: a root cause is never
 * hidden in a fold of another colour (issue 40 item 3).
 */
Agnode_t *graph_culprits_node(struct builder *b, Agnode_t *from, unsigned count, unsigned suspects,
			      const struct model_life *example, const char *where)
{
	char name[64], func[TXT], site[TXT];
	Agnode_t *node;

	if (!count || !example)
		return NULL;
	node = graph_new_node(b, name_of(b, name, sizeof(name)));
	label_reset(&b->lab);
	label_printf(&b->lab, "×%u %s %s, first like %s", count,
		     !suspects		 ? "LEAKED"
		     : suspects == count ? "SUSPECT"
					 : "LEAKED OR SUSPECT",
		     where, model_life_name(example, name, sizeof(name)));
	label_newline(&b->lab);
	label_text(&b->lab, model_life_function(b->in->m, example, func, sizeof(func)));
	if (example->init_ip) {
		label_newline(&b->lab);
		label_printf(&b->lab, "init %s",
			     model_site_text(b->in->m, example->init_ip, site, sizeof(site)));
	}
	label_newline(&b->lab);
	verdict_line(b, example, example->remaining, false);
	graph_set(node, "label", b->lab.text);
	graph_paint(node, example);
	fold_style(node);
	left_out_edge(b, from, node, true);
	return node;
}

Agnode_t *graph_alike_node(struct builder *b, const struct model_life *l, const struct fold *f)
{
	struct model *m = b->in->m;
	char name[32], func[TXT], site[TXT], state[2 * TXT], d[32];
	Agnode_t *node = graph_new_node(b, name_of(b, name, sizeof(name)));

	label_reset(&b->lab);
	if (f->example)
		label_printf(&b->lab, "×%zu more like %s", f->count,
			     model_life_name(l, name, sizeof(name)));
	else
		label_printf(&b->lab, "×%zu %s", f->count,
			     model_life_function(m, l, func, sizeof(func)));
	label_newline(&b->lab);
	if (f->example)
		label_text(&b->lab, model_life_function(m, l, func, sizeof(func)));
	else if (l->init_ip)
		label_printf(&b->lab, "init %s",
			     model_site_text(b->in->m, l->init_ip, site, sizeof(site)));
	else
		label_text(&b->lab, model_origin_text(l, site, sizeof(site)));
	label_newline(&b->lab);
	if (l->stuck)
		label_text(&b->lab, "STUCK: ");
	label_text(&b->lab, model_state_text(m, l, state, sizeof(state)));
	label_newline(&b->lab);
	label_printf(&b->lab, "oldest alive %s at the end",
		     model_duration_text(f->oldest_age_ns, d, sizeof(d)));
	label_newline(&b->lab);
	verdict_line(b, l, f->refs, true);
	if (f->below) {
		label_newline(&b->lab);
		label_printf(&b->lab, "(+%u closure%s below)", f->below, f->below == 1 ? "" : "s");
	}
	graph_set(node, "label", b->lab.text);
	graph_paint(node, l);
	fold_style(node);
	graph_culprits_node(b, node, f->leaked_below, f->suspects_below, f->leak_example,
			    "below them");
	return node;
}

Agnode_t *graph_rest_node(struct builder *b, size_t lives, unsigned below)
{
	char name[32];
	Agnode_t *node = graph_new_node(b, name_of(b, name, sizeof(name)));

	label_reset(&b->lab);
	if (lives)
		label_printf(&b->lab, "+%zu more closure%s here", lives, lives == 1 ? "" : "s");
	if (lives && below)
		label_printf(&b->lab, ", %u below them", below);
	else if (below) /* below culprits, which their red node counts */
		label_printf(&b->lab, "+%u more closure%s below these", below,
			     below == 1 ? "" : "s");
	label_newline(&b->lab);
	label_text(&b->lab, "--no-fold draws every one");
	graph_set(node, "label", b->lab.text);
	graph_set(node, "style", "dashed");
	graph_set(node, "color", "gray50");
	graph_set(node, "fontcolor", "gray35");
	return node;
}

void graph_cut_node(struct builder *b, Agnode_t *node, struct gl *g)
{
	unsigned others = g->below - g->leaked_below;
	char name[32], where[64];
	Agnode_t *cut, *red;

	snprintf(where, sizeof(where), "below, not drawn (deeper than %d levels)", MAX_DEPTH);
	red = graph_culprits_node(b, node, g->leaked_below, g->suspects_below, g->leak_example,
				  where);
	g->below_node = red;
	if (!others)
		return; /* every closure below is a culprit: the red node says them all */
	cut = graph_new_node(b, name_of(b, name, sizeof(name)));
	g->below_node = cut;
	label_reset(&b->lab);
	label_printf(&b->lab, "%u closure%s below, not drawn", others, others == 1 ? "" : "s");
	label_newline(&b->lab);
	label_printf(&b->lab, "(deeper than %d levels: report and explain show them)", MAX_DEPTH);
	graph_set(cut, "label", b->lab.text);
	graph_set(cut, "style", "dashed");
	graph_set(cut, "color", "gray50");
	graph_set(cut, "fontcolor", "gray35");
	left_out_edge(b, node, cut, false);
}

Agnode_t *graph_chain_node(struct builder *b, const struct gl *first, const struct gl *last,
			   size_t n, int64_t refs)
{
	const struct model_life *l = first->l;
	char name[64], func[TXT], last_name[64];
	Agnode_t *node = graph_new_node(b, name_of(b, name, sizeof(name)));

	label_reset(&b->lab);
	label_printf(&b->lab, "… %zu levels …", n);
	label_newline(&b->lab);
	label_printf(&b->lab, "%s to %s", model_life_name(l, name, sizeof(name)),
		     model_life_name(last->l, last_name, sizeof(last_name)));
	label_newline(&b->lab);
	label_text(&b->lab, model_life_function(b->in->m, l, func, sizeof(func)));
	label_newline(&b->lab);
	if (l->finished)
		label_text(&b->lab, "finished");
	else
		verdict_line(b, l, refs, true);
	graph_set(node, "label", b->lab.text);
	graph_paint(node, l);
	graph_set(node, "style", "rounded,filled,dashed");
	return node;
}
