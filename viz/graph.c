/*
 * The closure trees as a Graphviz picture, laid out and rendered in-process by libgvc.
 *
 * dot's layout grows about quadratically with the nodes, so the picture is kept small: finished
 * siblings of the same kind fold into one counted node ("×128, p50 12 µs") with everything below
 * them. Leaked closures are red with the references they hold and where those were taken; the
 * closures they keep alive are orange; finished ones are quiet grey.
 *
 * The model is only read: what the drawing needs per life lives in its own table (struct gl),
 * and every walk over the trees is a loop, never a recursion, so a trace's shape (a parent chain
 * 100,000 deep, a closure that is its own parent) cannot exhaust the stack or loop forever.
 */
#include <errno.h>
#include <gvc.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph_label.h"
#include "graph_tree.h"
#include "mem_limit.h"
#include "trace_text.h"
#include "viz.h"

#define TXT	       512
#define GTREE_FOLD_MIN 3  /* fewer siblings that look alike than this stay apart */
#define MAX_SIBLINGS   12 /* more nodes than this under one parent: the rest in a "+N more" node */
#define ROW	       4  /* siblings in a row, when there are more than ROW_MIN (a wide picture) */
#define ROW_MIN	       6
/*
 * Levels laid out at most (svg, png, pdf; -T dot writes every level, no layout), --no-fold or
 * not: Graphviz's layout of a deeper chain takes minutes and gigabytes (250,000 levels: 3.3 GB,
 * then a crash inside libgvc; 70,000: over 200 s). Below it, one node says how many closures
 * are left out.
 */
#define MAX_DEPTH 256

struct builder {
	struct viz_input *in;
	const struct render_graph_opts *opts;
	Agraph_t *g;
	struct gtree t;
	unsigned nodes, folded;
	size_t depth; /* the level the walk is in (walk) */
	bool whole;   /* every tree is drawn: the first level is the roots */
	bool oom;
	struct graph_label lab; /* the node's being made */
};

/* ---- nodes ---- */

/* What a closure is judged, for a picture: one line, with the references it holds. */
static void verdict_line(struct builder *b, const struct model_life *l, int64_t refs, bool group)
{
	char site[TXT];

	switch (l->verdict) {
	case VERDICT_KEPT_ALIVE:
		if (group)
			label_text(&b->lab, "kept alive by unfinished children");
		else
			label_printf(&b->lab, "kept alive by %u unfinished child%s",
				     l->live_children, l->live_children == 1 ? "" : "ren");
		return;
	case VERDICT_IN_FLIGHT:
		label_text(&b->lab, "in flight (the recording was cut short)");
		return;
	case VERDICT_LATE:
		label_text(&b->lab, "set aside: its events reached the trace late");
		return;
	default:
		break;
	}
	label_printf(&b->lab, "%s: ",
		     l->verdict == VERDICT_SUSPECT ? "SUSPECT"
		     : l->hang_root		   ? "ROOT OF THE HANG"
						   : "LEAKED");
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
	if (l->stuck && !l->finished)
		label_text(&b->lab, "STUCK: ");
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

static Agnode_t *new_node(struct builder *b, const char *name)
{
	b->nodes++;
	return agnode(b->g, (char *)name, 1);
}

static void set(Agnode_t *n, const char *attr, const char *value)
{
	agset(n, (char *)attr, (char *)value);
}

/* Finished: quiet grey; in flight: blue; kept alive: orange; leaked and suspects: red. */
static void paint(Agnode_t *n, const struct model_life *l)
{
	if (l->finished || l->verdict == VERDICT_LATE) {
		set(n, "color", "gray60");
		set(n, "fontcolor", "gray35");
		return;
	}
	set(n, "penwidth", "2");
	switch (l->verdict) {
	case VERDICT_IN_FLIGHT:
		set(n, "color", "#3465a4");
		set(n, "fillcolor", "#e4edf8");
		set(n, "fontcolor", "#1b3a63");
		set(n, "penwidth", "1.5");
		break;
	case VERDICT_KEPT_ALIVE:
		set(n, "color", "darkorange");
		set(n, "fillcolor", "#ffe8c8");
		break;
	default:
		set(n, "color", "red");
		set(n, "fillcolor", "#ffd8d8");
		set(n, "fontcolor", "#8b0000");
		set(n, "penwidth", "2.5");
	}
}

static Agnode_t *life_node(struct builder *b, const struct gl *g)
{
	char name[32];
	Agnode_t *n;

	snprintf(name, sizeof(name), "c%" PRIu64, g->l->seq);
	n = new_node(b, name);
	life_label(b, g);
	set(n, "label", b->lab.text);
	paint(n, g->l);
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
	set(node, "style", "rounded,filled");
	set(node, "peripheries", "2");
}

/* One node for group[0..n): finished siblings of one kind. */
static Agnode_t *fold_node(struct builder *b, struct gl **group, size_t n)
{
	struct model *m = b->in->m;
	uint64_t *ns = calloc(n, sizeof(*ns));
	char name[32], func[TXT], site[TXT], p50[32], max[32];
	const struct model_life *l = group[0]->l;
	unsigned below = 0;
	Agnode_t *node;

	if (!ns) {
		b->oom = true;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		ns[i] = life_ns(group[i]->l);
		below += group[i]->below;
	}
	qsort(ns, n, sizeof(*ns), cmp_ns);
	snprintf(name, sizeof(name), "f%u", ++b->folded);
	node = new_node(b, name);
	label_reset(&b->lab);
	label_printf(&b->lab, "×%zu %s", n, model_life_function(m, l, func, sizeof(func)));
	label_newline(&b->lab);
	if (l->init_ip)
		label_printf(&b->lab, "init %s",
			     model_site_text(b->in->m, l->init_ip, site, sizeof(site)));
	else
		label_text(&b->lab, "created before recording");
	label_newline(&b->lab);
	label_printf(&b->lab, "finished, p50 %s, max %s",
		     model_duration_text(ns[(n - 1) / 2], p50, sizeof(p50)),
		     model_duration_text(ns[n - 1], max, sizeof(max)));
	if (below) {
		label_newline(&b->lab);
		label_printf(&b->lab, "(+%u closure%s below)", below, below == 1 ? "" : "s");
	}
	set(node, "label", b->lab.text);
	set(node, "color", "gray60");
	set(node, "fontcolor", "gray35");
	set(node, "fillcolor", "gray95");
	fold_style(node);
	free(ns);
	return node;
}

static void edge(struct builder *b, Agnode_t *from, Agnode_t *to, const struct model_life *child)
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

/*
 * Under a fold, the leaked closures below the folded siblings, in a red node of their own: a root
 * cause is never hidden in a fold of another colour (issue 40 item 3).
 */
static void leaked_below_node(struct builder *b, Agnode_t *fold, const struct fold *f)
{
	const struct model_life *l = f->leak_example;
	char name[32], func[TXT], site[TXT];
	Agnode_t *node;
	Agedge_t *e;

	snprintf(name, sizeof(name), "f%u", ++b->folded);
	node = new_node(b, name);
	label_reset(&b->lab);
	label_printf(&b->lab, "×%u LEAKED below them, first like %s", f->leaked_below,
		     model_life_name(l, name, sizeof(name)));
	label_newline(&b->lab);
	label_text(&b->lab, model_life_function(b->in->m, l, func, sizeof(func)));
	if (l->init_ip) {
		label_newline(&b->lab);
		label_printf(&b->lab, "init %s",
			     model_site_text(b->in->m, l->init_ip, site, sizeof(site)));
	}
	label_newline(&b->lab);
	verdict_line(b, l, l->remaining, false);
	set(node, "label", b->lab.text);
	paint(node, l);
	fold_style(node);
	e = agedge(b->g, fold, node, NULL, 1);
	if (e) {
		agsafeset(e, "color", "red", "");
		agsafeset(e, "style", "dashed", "");
	}
}

/* The node for a fold of unfinished siblings like l. */
static Agnode_t *alike_node(struct builder *b, const struct model_life *l, const struct fold *f)
{
	struct model *m = b->in->m;
	char name[32], func[TXT], site[TXT], state[2 * TXT], d[32];
	Agnode_t *node;

	snprintf(name, sizeof(name), "f%u", ++b->folded);
	node = new_node(b, name);
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
	set(node, "label", b->lab.text);
	paint(node, l);
	fold_style(node);
	if (f->leaked_below && f->leak_example)
		leaked_below_node(b, node, f);
	return node;
}

/* ---- the walk: one frame per level of siblings, on a heap stack (trees may be deep) ---- */

/* A node drawn in a level, and how many levels its tree takes. */
struct drawn {
	Agnode_t *node;
	size_t depth;
};

struct level {
	struct gl **v; /* the siblings, sorted: the ones that stay apart, then the foldable */
	size_t n, i, apart;
	struct fold *folds; /* per v[i], i < apart */
	Agnode_t *parent;
	struct drawn *drawn; /* the nodes drawn in this level, for rows */
	size_t ndrawn, capdrawn;
	bool below_done; /* v[i]'s own level was walked: its "more like" node comes next */
};

static void level_free(struct level *f)
{
	free(f->v);
	free(f->folds);
	free(f->drawn);
}

/* A node of the level, under its parent. */
static void attach(struct builder *b, struct level *f, Agnode_t *node, const struct model_life *l)
{
	if (!node)
		return;
	edge(b, f->parent, node, l);
	if (f->ndrawn == f->capdrawn) {
		size_t cap = f->capdrawn ? 2 * f->capdrawn : 16;
		struct drawn *bigger = realloc(f->drawn, cap * sizeof(*bigger));

		if (!bigger) {
			b->oom = true;
			return;
		}
		f->drawn = bigger;
		f->capdrawn = cap;
	}
	f->drawn[f->ndrawn++] = (struct drawn){node, 1};
}

/* The shown children of g (all tops when g is NULL) as a level; false when there are none. */
static bool level_of(struct builder *b, struct gl *g, Agnode_t *parent, struct level *f)
{
	size_t n = 0;

	memset(f, 0, sizeof(*f));
	f->parent = parent;
	for (size_t i = 0; !g && i < b->t.n; i++)
		if (!b->t.lives[i].parent && (b->t.lives[i].mark & MARK_SHOW))
			n++;
	for (struct gl *c = g ? g->first_child : NULL; c; c = c->next_sibling)
		n += !!(c->mark & MARK_SHOW);
	if (!n)
		return false;
	if (!(f->v = calloc(n, sizeof(*f->v))) || !(f->folds = calloc(n, sizeof(*f->folds)))) {
		b->oom = true;
		return false;
	}
	for (size_t i = 0; !g && i < b->t.n; i++)
		if (!b->t.lives[i].parent && (b->t.lives[i].mark & MARK_SHOW))
			f->v[f->n++] = &b->t.lives[i];
	for (struct gl *c = g ? g->first_child : NULL; c; c = c->next_sibling)
		if (c->mark & MARK_SHOW)
			f->v[f->n++] = c;
	qsort(f->v, n, sizeof(*f->v), gtree_cmp_fold);
	while (f->apart < n && !gtree_foldable(f->v[f->apart]))
		f->apart++;
	if (!b->opts->no_fold && f->apart >= GTREE_FOLD_MIN &&
	    gtree_fold_alike(f->v, f->apart, f->folds))
		b->oom = true;
	return true;
}

/* The lives of v[i..n) not drawn, in one node: the picture stays readable however wide. */
static void rest_node(struct builder *b, struct level *f)
{
	size_t lives = 0, roots = 0;
	unsigned below = 0;
	char name[32];
	Agnode_t *node;

	for (size_t k = f->i; k < f->n; k++) {
		lives++;
		below += f->v[k]->below;
		roots += leaks_is_root_cause(f->v[k]->l);
	}
	snprintf(name, sizeof(name), "f%u", ++b->folded);
	node = new_node(b, name);
	label_reset(&b->lab);
	label_printf(&b->lab, "+%zu more closure%s here", lives, lives == 1 ? "" : "s");
	if (below)
		label_printf(&b->lab, ", %u below them", below);
	if (roots) {
		label_newline(&b->lab);
		label_printf(&b->lab, "%zu leaked or suspect (see the report)", roots);
	}
	label_newline(&b->lab);
	label_text(&b->lab, "--no-fold draws every one");
	set(node, "label", b->lab.text);
	set(node, "style", "dashed");
	set(node, "color", roots ? "red" : "gray50");
	set(node, "fontcolor", roots ? "#8b0000" : "gray35");
	attach(b, f, node, NULL);
	f->i = f->n;
}

/* Below node (g's), at MAX_DEPTH: one node for the closures of g's tree left out. */
static void cut_node(struct builder *b, Agnode_t *node, const struct gl *g)
{
	char name[32];
	Agnode_t *cut;
	Agedge_t *e;

	snprintf(name, sizeof(name), "f%u", ++b->folded);
	cut = new_node(b, name);
	label_reset(&b->lab);
	label_printf(&b->lab, "%u closure%s below, not drawn", g->below, g->below == 1 ? "" : "s");
	label_newline(&b->lab);
	label_printf(&b->lab, "(deeper than %d levels: report and explain show them)", MAX_DEPTH);
	set(cut, "label", b->lab.text);
	set(cut, "style", "dashed");
	set(cut, "color", "gray50");
	set(cut, "fontcolor", "gray35");
	e = agedge(b->g, node, cut, NULL, 1);
	if (e)
		agsafeset(e, "style", "dashed", "");
}

/*
 * One step in a level: a group of finished siblings folds into one node; a life gets its node,
 * and its own level (returned in below, true) is walked before its "more like" node is drawn.
 */
static bool level_step(struct builder *b, struct level *f, struct level *below)
{
	size_t i = f->i, j = i + 1;
	struct gl *g = f->v[i];
	const struct fold *fold = i < f->apart ? &f->folds[i] : NULL;
	Agnode_t *node;

	if (f->below_done) {
		f->below_done = false;
		if (fold && fold->count)
			attach(b, f, alike_node(b, g->l, fold), g->l);
		f->i++;
		return false;
	}
	if (g->mark & MARK_FOLDED) {
		f->i++;
		return false;
	}
	if (!b->opts->no_fold && f->ndrawn >= MAX_SIBLINGS) {
		rest_node(b, f);
		return false;
	}
	if (fold && fold->count && !fold->example) {
		attach(b, f, alike_node(b, g->l, fold), g->l);
		f->i++;
		return false;
	}
	if (!b->opts->no_fold && gtree_foldable(g))
		while (j < f->n && gtree_foldable(f->v[j]) && f->v[j]->l->kind == g->l->kind)
			j++;
	/* Roots of a kind fold from two: at the top a reader looks for kinds, not closures. */
	if (j - i >= (b->whole && b->depth == 1 ? 2 : GTREE_FOLD_MIN)) {
		attach(b, f, fold_node(b, f->v + i, j - i), NULL);
		f->i = j;
		return false;
	}
	node = life_node(b, g);
	attach(b, f, node, g->l);
	f->below_done = true;
	if (b->depth >= MAX_DEPTH && g->first_child && strcmp(b->opts->format, "dot")) {
		cut_node(b, node, g);
		return false;
	}
	return level_of(b, g, node, below);
}

/*
 * Many siblings side by side make a strip: they go in rows of ROW, each row below the deepest
 * tree of the row above (invisible edges that only rank them).
 */
static size_t rows(struct builder *b, const struct level *f)
{
	size_t row = ROW, total = 0;

	if (f->ndrawn <= ROW_MIN || b->opts->no_fold)
		row = f->ndrawn; /* one row */
	for (size_t start = 0; start < f->ndrawn; start += row) {
		size_t depth = 1;
		char minlen[32];

		for (size_t k = start; k < start + row && k < f->ndrawn; k++)
			if (f->drawn[k].depth > depth)
				depth = f->drawn[k].depth;
		total += depth;
		snprintf(minlen, sizeof(minlen), "%zu", depth);
		for (size_t k = start + row; k < start + 2 * row && k < f->ndrawn; k++) {
			Agedge_t *e =
				agedge(b->g, f->drawn[k - row].node, f->drawn[k].node, NULL, 1);

			agsafeset(e, "style", "invis", "");
			agsafeset(e, "minlen", minlen, "1");
			agsafeset(e, "weight", "0", "1");
		}
	}
	return total;
}

/* A level is drawn: its rows, and the depth of its tree for the node above. */
static void level_done(struct builder *b, struct level *f, struct level *above)
{
	size_t depth = rows(b, f);

	if (above && above->ndrawn && above->drawn[above->ndrawn - 1].depth < 1 + depth)
		above->drawn[above->ndrawn - 1].depth = 1 + depth;
	level_free(f);
}

/* Draw root's tree (NULL: every tree), a level of siblings at a time. Returns -1: out of memory. */
static int walk(struct builder *b, struct gl *root)
{
	size_t depth = 0, cap = 16;
	struct level *stack = calloc(cap, sizeof(*stack));

	if (!stack)
		return -1;
	gtree_choose(&b->t, root, b->opts->leaks_only);
	b->whole = !root;
	depth = level_of(b, root, root ? life_node(b, root) : NULL, &stack[0]);
	while (depth && !b->oom && !b->lab.oom) {
		struct level *f = &stack[depth - 1];

		if (f->i >= f->n) {
			level_done(b, f, depth > 1 ? &stack[depth - 2] : NULL);
			depth--;
			continue;
		}
		if (depth == cap) {
			struct level *bigger = realloc(stack, 2 * cap * sizeof(*stack));

			if (!bigger) {
				b->oom = true;
				break;
			}
			stack = bigger;
			cap *= 2;
			f = &stack[depth - 1];
		}
		b->depth = depth;
		if (level_step(b, f, &stack[depth]))
			depth++;
	}
	while (depth)
		level_free(&stack[--depth]);
	free(stack);
	return b->oom || b->lab.oom ? -1 : 0;
}

static void graph_attrs(struct builder *b)
{
	Agraph_t *g = b->g;
	char title[TXT + 64];
	const char *root;
	size_t rootlen;

	agattr(g, AGRAPH, "rankdir", "TB");
	agattr(g, AGRAPH, "fontname", "Helvetica");
	agattr(g, AGRAPH, "fontsize", "12");
	agattr(g, AGRAPH, "labelloc", "t");
	agattr(g, AGRAPH, "nodesep", "0.25");
	agattr(g, AGRAPH, "ranksep", "0.4");
	agattr(g, AGNODE, "shape", "box");
	agattr(g, AGNODE, "style", "filled");
	agattr(g, AGNODE, "fillcolor", "white");
	agattr(g, AGNODE, "color", "black");
	agattr(g, AGNODE, "fontcolor", "black");
	agattr(g, AGNODE, "penwidth", "1");
	agattr(g, AGNODE, "peripheries", "1");
	agattr(g, AGNODE, "fontname", "Helvetica");
	agattr(g, AGNODE, "fontsize", "10");
	agattr(g, AGNODE, "label", "");
	agattr(g, AGEDGE, "color", "gray50");
	agattr(g, AGEDGE, "penwidth", "1");
	agattr(g, AGEDGE, "arrowsize", "0.6");
	snprintf(title, sizeof(title), "closuretrace: %s%s", b->in->path,
		 viz_incomplete(b->in) ? " (incomplete: see the report)" : "");
	label_reset(&b->lab);
	label_text(&b->lab, title);
	/* Files are shown relative to their source root: said once when they share one. */
	root = model_source_root(b->in->m, &rootlen);
	if (root) {
		snprintf(title, sizeof(title), "source files under %.*s", (int)rootlen, root);
		label_newline(&b->lab);
		label_text(&b->lab, title);
	}
	agattr(g, AGRAPH, "label", b->lab.text);
}

/*
 * On a graph of thousands of nodes (--no-fold), dot spends most of its time in network simplex
 * (ranking, positions) and crossing minimisation: these bound their iterations, trading a few
 * crossings for a layout in seconds rather than minutes.
 */
static void big_graph_knobs(struct builder *b)
{
	if (b->nodes < 1000)
		return;
	agsafeset(b->g, "nslimit", "2", "");
	agsafeset(b->g, "nslimit1", "2", "");
	agsafeset(b->g, "mclimit", "0.2", "");
	agsafeset(b->g, "remincross", "false", "");
	agsafeset(b->g, "searchsize", "20", "");
}

int render_graph(struct viz_input *in, const struct render_graph_opts *opts, FILE *out,
		 struct trace_error *err)
{
	struct builder b = {.in = in, .opts = opts};
	struct model_life *root = NULL;
	struct gl *groot = NULL;
	char *data = NULL;
	unsigned int len = 0;
	GVC_t *gvc;
	int rc = 0, werr = 0;

	if (opts->root.addr) {
		root = viz_find_closure(in, &opts->root, err);
		if (!root)
			return -1;
	}
	gvc = gvContext();
	b.g = agopen("closures", Agdirected, NULL);
	graph_attrs(&b);
	if (gtree_build(&b.t, in->m)) {
		b.oom = true;
		goto out;
	}
	if (root)
		groot = gtree_find(&b.t, root);
	if (walk(&b, groot))
		goto out;
	if (!strcmp(opts->format, "dot")) {
		/* Structure only, no layout: stable, for tools and tests. */
		if (agwrite(b.g, out) == EOF || ferror(out))
			werr = errno;
		goto out;
	}
	big_graph_knobs(&b);
	if (gvLayout(gvc, b.g, "dot")) {
		rc = trace_error_set(err, "Graphviz could not lay the graph out");
		goto out;
	}
	/* Into memory first: Graphviz's own writer exits the process when a write fails. */
	if (gvRenderData(gvc, b.g, opts->format, &data, &len)) {
		rc = trace_error_set(err, "Graphviz cannot write '%s'", opts->format);
	} else {
		if (fwrite(data, 1, len, out) != len)
			werr = errno;
	}
	gvFreeRenderData(data);
	gvFreeLayout(gvc, b.g);
out:
	if (b.oom || b.lab.oom)
		rc = trace_error_set(err, "out of memory%s", mem_limit_note());
	agclose(b.g);
	gvFreeContext(gvc);
	label_free(&b.lab);
	gtree_free(&b.t);
	/* A failed write: the caller checks the stream when it closes it; errno says why. */
	errno = werr;
	return rc;
}
