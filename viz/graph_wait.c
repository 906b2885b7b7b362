/*
 * What closures wait on, beside their trees (issue 40 item 3): a hang is a closure on a waitlist
 * that nothing will wake, and the trees alone do not show it. A waitlist a drawn closure waits on
 * (closure_wait), or was woken from, is a node of its own, with edges in styles of their own:
 *   waits on      the waiter to the waitlist;
 *   would wake it the waitlist to the closures whose continuation would call closure_wake_up on
 *                 it (wakers.h, the rule the roots of a hang follow too); when none is known, to
 *                 the roots of the hang the model found for the process (leaks.h);
 *   queued by     a closure woken from the waitlist (its continuation queued by the wake-up) to
 *                 it.
 * The tops of the picture that wait (on a waitlist, in closure_sync), or were woken from a
 * waitlist, are grouped in a cluster per thing they wait on, rather than laid out in rows with
 * the others. A legend says the styles
 * drawn. Only the model's facts are drawn: which closure called closure_wake_up is matched by the
 * function it was called from, as the trace names no closure for it.
 */
#include <inttypes.h>

#include "graph_internal.h"
#include "wakers.h"

#define MAX_WAITS     16 /* waitlists drawn; the others share one "+N more waitlists" node */
#define WAIT_COLOUR   "#75507b"
#define QUEUED_COLOUR "#4e9a06"

struct gwait {
	Agnode_t *node; /* NULL: past MAX_WAITS, in b->more_waits */
	Agraph_t *cluster;
	struct wakers wk; /* what would wake it */
	unsigned waiting, woken;
	bool wakes_drawn; /* an edge to a closure that would wake it is drawn */
};

void graph_waits_init(struct builder *b)
{
	hashmap_init(&b->waits, sizeof(struct gwait));
}

void graph_waits_free(struct builder *b)
{
	hashmap_free(&b->waits);
}

/* The waitlist at addr in process pid, drawn from its first waiter on; borrowed until the next
 * call (the map may move it). */
static struct gwait *wait_of(struct builder *b, int64_t pid, uint64_t addr)
{
	bool added;
	struct gwait *w = hashmap_put(&b->waits, (uint64_t)pid, addr, &added);
	char name[32], text[64];

	if (!added || b->nwaits >= MAX_WAITS)
		return w;
	snprintf(name, sizeof(name), "w%u", ++b->nwaits);
	w->node = agnode(b->g, name, 1);
	snprintf(text, sizeof(text), "waitlist 0x%" PRIx64, addr);
	graph_set(w->node, "label", text);
	graph_set(w->node, "shape", "ellipse");
	graph_set(w->node, "color", WAIT_COLOUR);
	graph_set(w->node, "fontcolor", WAIT_COLOUR);
	graph_set(w->node, "fillcolor", "#f1e8f3");
	return w;
}

static Agnode_t *wait_node(struct builder *b, const struct gwait *w)
{
	if (w->node)
		return w->node;
	if (!b->more_waits) {
		b->more_waits = agnode(b->g, "w0", 1);
		graph_set(b->more_waits, "label", "more waitlists");
		graph_set(b->more_waits, "shape", "ellipse");
		graph_set(b->more_waits, "style", "dashed");
		graph_set(b->more_waits, "color", WAIT_COLOUR);
	}
	return b->more_waits;
}

static Agraph_t *cluster(struct builder *b, const char *name, const char *label)
{
	Agraph_t *sg = agsubg(b->g, (char *)name, 1);

	graph_set(sg, "label", label);
	agsafeset(sg, "style", "rounded,dashed", "");
	agsafeset(sg, "color", WAIT_COLOUR, "");
	return sg;
}

bool graph_wait_cluster(struct builder *b, Agnode_t *node, const struct gl *g)
{
	const struct model_life *l = g->l;
	bool waits = !l->finished && l->on_waitlist, woken = !l->on_waitlist && l->wake_ip;
	char name[32], label[64];
	struct gwait *w;

	if (!l->finished && l->state == MODEL_SYNCING && !waits) {
		if (!b->sync_cluster)
			b->sync_cluster = cluster(b, "cluster_sync", "in closure_sync");
		agsubnode(b->sync_cluster, node, 1);
		return true;
	}
	if (!l->waitlist || (!waits && !woken))
		return false;
	w = wait_of(b, l->pid, l->waitlist);
	if (!w->node)
		return false;
	if (!w->cluster) {
		snprintf(name, sizeof(name), "cluster_%s", agnameof(w->node));
		snprintf(label, sizeof(label), "on waitlist 0x%" PRIx64, l->waitlist);
		w->cluster = cluster(b, name, label);
		agsubnode(w->cluster, w->node, 1);
	}
	agsubnode(w->cluster, node, 1);
	return true;
}

/* An edge of one of the kinds beside the trees (GEDGE_*), once between two nodes. */
static void wait_edge(struct builder *b, Agnode_t *from, Agnode_t *to, unsigned kind)
{
	Agedge_t *e;

	if (!from || !to || from == to || agedge(b->g, from, to, NULL, 0))
		return;
	e = agedge(b->g, from, to, NULL, 1);
	b->edges |= kind;
	agsafeset(e, "color", kind == GEDGE_QUEUED ? QUEUED_COLOUR : WAIT_COLOUR, "");
	agsafeset(e, "style", kind == GEDGE_WAITS ? "dashed" : "dotted", "");
	agsafeset(e, "penwidth", kind == GEDGE_WAKES ? "2" : "1.5", "");
	if (kind != GEDGE_WAITS) /* the trees rank the picture; these only connect it */
		agsafeset(e, "constraint", "false", "");
}

/* Waiters and the woken to their waitlists. */
static void waits_on(struct builder *b)
{
	for (size_t i = 0; i < b->t.n; i++) {
		const struct gl *g = &b->t.lives[i];
		const struct model_life *l = g->l;
		bool waits = !l->finished && l->on_waitlist, woken = !l->on_waitlist && l->wake_ip;
		struct gwait *w;

		if (!g->node || !(g->mark & MARK_SHOW) || !l->waitlist || (!waits && !woken))
			continue;
		w = wait_of(b, l->pid, l->waitlist);
		w->waiting += waits;
		w->woken += woken;
		wait_edge(b, g->node, wait_node(b, w), waits ? GEDGE_WAITS : GEDGE_QUEUED);
	}
}

/* What would wake each drawn waitlist. */
static void wakers(struct builder *b)
{
	size_t pos = 0;
	uint64_t pid, addr;
	struct gwait *w;

	while ((w = hashmap_next(&b->waits, &pos, &pid, &addr)))
		wakers_collect(b->in->m, &w->wk, (int64_t)pid, addr);
}

/* Each drawn waitlist with waiters to what would wake them. */
static void wakes(struct builder *b)
{
	size_t pos = 0;
	uint64_t pid, addr;
	struct gwait *w;

	while ((w = hashmap_next(&b->waits, &pos, &pid, &addr))) {
		if (!w->node || !w->waiting)
			continue;
		for (int pass = 0; pass < 2 && !w->wakes_drawn; pass++) {
			for (size_t i = 0; i < b->t.n; i++) {
				const struct gl *g = &b->t.lives[i];
				const struct model_life *l = g->l;
				bool on_it = l->on_waitlist && l->waitlist == addr;

				if (!g->node || !(g->mark & MARK_SHOW) || l->finished || on_it ||
				    (uint64_t)l->pid != pid ||
				    !(pass ? l->hang_root : wakers_would_wake(b->in->m, &w->wk, l)))
					continue;
				wait_edge(b, w->node, g->node, GEDGE_WAKES);
				w->wakes_drawn = true;
			}
		}
	}
}

/* The waitlists' labels: how many wait on each, how many were woken from it. */
static void wait_labels(struct builder *b)
{
	size_t pos = 0;
	uint64_t addr;
	struct gwait *w;

	while ((w = hashmap_next(&b->waits, &pos, NULL, &addr))) {
		if (!w->node)
			continue;
		label_reset(&b->lab);
		label_printf(&b->lab, "waitlist 0x%" PRIx64, addr);
		if (w->waiting) {
			label_newline(&b->lab);
			label_printf(&b->lab, "%u waiting%s%s", w->waiting,
				     w->wakes_drawn ? "" : ", nothing known would wake ",
				     w->wakes_drawn ? "" : (w->waiting == 1 ? "it" : "them"));
		}
		if (w->woken) {
			label_newline(&b->lab);
			label_printf(&b->lab, "%u woken from it before", w->woken);
		}
		graph_set(w->node, "label", b->lab.text);
	}
	if (b->more_waits) {
		size_t more = hashmap_count(&b->waits) - b->nwaits;

		label_reset(&b->lab);
		label_printf(&b->lab, "%zu more waitlist%s", more, more == 1 ? "" : "s");
		graph_set(b->more_waits, "label", b->lab.text);
	}
}

/* One entry of the legend: two small nodes and an edge of the kind. */
static void legend_entry(struct builder *b, Agraph_t *sg, unsigned kind, const char *from,
			 const char *to, const char *text)
{
	char name[32];
	Agnode_t *a, *z;
	Agedge_t *e;

	snprintf(name, sizeof(name), "legend%ua", kind);
	a = agsubnode(sg, agnode(b->g, name, 1), 1);
	snprintf(name, sizeof(name), "legend%uz", kind);
	z = agsubnode(sg, agnode(b->g, name, 1), 1);
	graph_set(a, "label", from);
	graph_set(z, "label", to);
	for (Agnode_t *n = a; n; n = n == a ? z : NULL) {
		graph_set(n, "shape", "plaintext");
		graph_set(n, "peripheries", "0");
		graph_set(n, "fontsize", "9");
	}
	wait_edge(b, a, z, kind);
	e = agedge(b->g, a, z, NULL, 0);
	agsafeset(e, "label", (char *)text, "");
	agsafeset(e, "fontsize", "9", "");
	agsafeset(e, "fontname", "Helvetica", "");
	agsafeset(e, "constraint", "true", "");
}

static void legend(struct builder *b)
{
	unsigned kinds = b->edges;
	Agraph_t *sg;

	if (!kinds)
		return;
	sg = cluster(b, "cluster_legend", "legend");
	graph_set(sg, "color", "gray50");
	if (kinds & GEDGE_WAITS)
		legend_entry(b, sg, GEDGE_WAITS, "waiter", "waitlist", "waits on (closure_wait)");
	if (kinds & GEDGE_WAKES)
		legend_entry(b, sg, GEDGE_WAKES, "waitlist", "closure",
			     "would wake it: its continuation calls closure_wake_up\\non the "
			     "waitlist (else: the root of the hang)");
	if (kinds & GEDGE_QUEUED)
		legend_entry(b, sg, GEDGE_QUEUED, "closure", "waitlist",
			     "queued by the waitlist's closure_wake_up");
}

void graph_wait_edges(struct builder *b)
{
	waits_on(b);
	wakers(b);
	wakes(b);
	wait_labels(b);
	legend(b);
}
