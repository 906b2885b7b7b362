/*
 * The walk over the closure trees that draws them (graph.c makes the nodes): one frame per level
 * of siblings, on a heap stack, since trees may be deep. Siblings alike fold (graph_tree.c), a
 * long chain of alike closures is elided to its ends, a level shows at most MAX_SIBLINGS nodes,
 * and culprits left out of any of these are said in a red node of their own.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

#define MAX_SIBLINGS 12 /* more nodes than this under one parent: the rest in a "+N more" node */
#define ROW	     4	/* siblings in a row, when there are more than ROW_MIN (a wide picture) */
#define ROW_MIN	     6
#define CHAIN_MIN    3 /* alike closures one below the other elided from this many */

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
	size_t nclustered; /* tops drawn in a cluster instead (graph_wait_cluster) */
	bool below_done;   /* v[i]'s own level was walked: its "more like" node comes next */
};

static void level_free(struct level *f)
{
	free(f->v);
	free(f->folds);
	free(f->drawn);
}

/* A node of the level, under its parent (l: the life it is coloured as; g: what it stands for).
 * A top that waits goes in a cluster with what it waits on instead of a row. */
static void attach(struct builder *b, struct level *f, Agnode_t *node, const struct model_life *l,
		   const struct gl *g)
{
	if (!node)
		return;
	if (!f->parent && f->n > 1 && g && graph_wait_cluster(b, node, g)) {
		f->nclustered++;
		return;
	}
	graph_edge(b, f->parent, node, l);
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

static bool level_alloc(struct builder *b, struct level *f, Agnode_t *parent, size_t n)
{
	memset(f, 0, sizeof(*f));
	f->parent = parent;
	if (!(f->v = calloc(n, sizeof(*f->v))) || !(f->folds = calloc(n, sizeof(*f->folds)))) {
		b->oom = true;
		return false;
	}
	return true;
}

/* The shown children of g (all tops when g is NULL) as a level; false when there are none. */
static bool level_of(struct builder *b, struct gl *g, Agnode_t *parent, struct level *f)
{
	size_t n = 0;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; !g && i < b->t.n; i++)
		if (!b->t.lives[i].parent && (b->t.lives[i].mark & MARK_SHOW))
			n++;
	for (struct gl *c = g ? g->first_child : NULL; c; c = c->next_sibling)
		n += !!(c->mark & MARK_SHOW);
	if (!n || !level_alloc(b, f, parent, n))
		return false;
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

static bool shown_child(const struct gl *g)
{
	for (const struct gl *c = g->first_child; c; c = c->next_sibling)
		if (c->mark & MARK_SHOW)
			return true;
	return false;
}

/* g's only shown child; NULL when it has none, or several. */
static struct gl *only_child(const struct gl *g)
{
	struct gl *only = NULL;

	for (struct gl *c = g->first_child; c; c = c->next_sibling) {
		if (!(c->mark & MARK_SHOW))
			continue;
		if (only)
			return NULL;
		only = c;
	}
	return only;
}

/* Closures a chain elides together: one verdict, none stuck or cut from a cycle (those are drawn),
 * and culprits alike as folds are (one red node says them all). */
static bool chain_alike(const struct gl *g, const struct gl *first)
{
	const struct model_life *x = g->l, *y = first->l;

	if (g->cut || x->stuck || x->finished != y->finished || x->verdict != y->verdict)
		return false;
	return !gtree_culprit(x) || gtree_alike(x, y);
}

/*
 * Below g (drawn as gnode), a chain of CHAIN_MIN or more alike closures, each the only one shown
 * below the one before, is elided: one "… N levels …" node for all but the last, which is drawn
 * under it, so that the culprit at the end of a chain 100,000 deep (or whatever the chain turns
 * into) is in the picture, in every format. Returns that last, with *node the elision's node;
 * NULL: no chain to elide.
 */
static struct gl *chain(struct builder *b, struct gl *g, Agnode_t *gnode, Agnode_t **node)
{
	struct gl *first = only_child(g), *last = first, *before = NULL, *next;
	size_t n = 1;
	int64_t refs = 0;

	if (b->opts->no_fold || !first || !chain_alike(first, first))
		return NULL;
	while ((next = only_child(last)) && chain_alike(next, first)) {
		before = last;
		last = next;
		n++;
	}
	if (n - 1 < CHAIN_MIN)
		return NULL;
	for (struct gl *c = first; c != last; c = only_child(c))
		refs += c->l->remaining > 0 ? c->l->remaining : 0;
	*node = graph_chain_node(b, first, before, n - 1, refs);
	for (struct gl *c = first; c != last; c = only_child(c))
		c->node = *node;
	graph_edge(b, gnode, *node, first->l);
	return last;
}

/* What is below g, drawn as node: a chain elided (then its last as a level of one), or g's
 * children as a level. False when there is nothing below. */
static bool below_of(struct builder *b, struct gl *g, Agnode_t *node, struct level *f)
{
	Agnode_t *elided;
	struct gl *last = chain(b, g, node, &elided);

	if (!last)
		return level_of(b, g, node, f);
	if (!level_alloc(b, f, elided, 1))
		return false;
	f->v[f->n++] = last;
	f->apart = !gtree_foldable(last);
	return true;
}

/*
 * The lives of v[i..n) not drawn: one grey node for those that are no culprit, and a red one for
 * the culprits among them and below them (a root cause never hides in a fold of another colour).
 * The picture stays readable however wide.
 */
static void rest_nodes(struct builder *b, struct level *f)
{
	size_t lives = 0;
	unsigned below = 0, culprits = 0, suspects = 0;
	const struct model_life *example = NULL;
	Agnode_t *rest, *red;

	for (size_t k = f->i; k < f->n; k++) {
		const struct gl *g = f->v[k];
		const struct model_life *first = gtree_culprit(g->l) ? g->l : g->leak_example;

		if ((g->mark & MARK_FOLDED) && g->owner && g->owner->fold_node)
			continue; /* in a fold drawn already */
		lives += !gtree_culprit(g->l);
		culprits += gtree_culprit(g->l) + g->leaked_below;
		suspects += (g->l->verdict == VERDICT_SUSPECT) + g->suspects_below;
		below += g->below - g->leaked_below;
		if (first && (!example || first->seq < example->seq))
			example = first;
	}
	/* Closures folded away (model_fold_finished) whose kind's node was not drawn. */
	for (struct model_fold *fd =
		     model_folds(b->in->m, f->v[0]->parent ? f->v[0]->parent->l : NULL);
	     fd; fd = fd->next)
		if (fd->count && !fd->node) {
			lives += fd->count;
			below += (unsigned)fd->below;
		}
	rest = lives || below ? graph_rest_node(b, lives, below) : NULL;
	attach(b, f, rest, NULL, NULL);
	red = graph_culprits_node(b, f->parent, culprits, suspects, example,
				  "among the rest here and below");
	for (size_t k = f->i; k < f->n; k++)
		if (!f->v[k]->node)
			f->v[k]->node = gtree_culprit(f->v[k]->l) ? red : rest;
	f->i = f->n;
}

/* A fold of unfinished siblings, drawn where g stands. */
static void alike(struct builder *b, struct level *f, struct gl *g, const struct fold *fold)
{
	Agnode_t *node = graph_alike_node(b, g->l, fold);

	g->fold_node = node;
	if (!fold->example)
		g->node = node;
	attach(b, f, node, g->l, g);
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
			alike(b, f, g, fold);
		f->i++;
		return false;
	}
	if (g->mark & MARK_FOLDED) {
		f->i++;
		return false;
	}
	if (!b->opts->no_fold && f->ndrawn + f->nclustered >= MAX_SIBLINGS) {
		rest_nodes(b, f);
		return false;
	}
	if (fold && fold->count && !fold->example) {
		alike(b, f, g, fold);
		f->i++;
		return false;
	}
	if (!b->opts->no_fold && gtree_foldable(g))
		while (j < f->n && gtree_foldable(f->v[j]) && f->v[j]->l->kind == g->l->kind)
			j++;
	/* Roots of a kind fold from two: at the top a reader looks for kinds, not closures. */
	if (j - i >= (b->whole && b->depth == 1 ? 2 : GTREE_FOLD_MIN)) {
		attach(b, f, graph_fold_node(b, f->v + i, j - i), NULL, g);
		f->i = j;
		return false;
	}
	node = graph_life_node(b, g);
	attach(b, f, node, g->l, g);
	f->below_done = true;
	/* --no-fold's dot has every level: no layout runs on it. */
	if (b->depth >= MAX_DEPTH && shown_child(g) &&
	    !(b->opts->no_fold && !strcmp(b->opts->format, "dot"))) {
		graph_cut_node(b, node, g);
		return false;
	}
	return below_of(b, g, node, below);
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

/* The lives not drawn stand in the node drawn for them: their fold's, or what stands for their
 * parent's tree (a cut at the deepest level, or the parent's own node when it is folded). */
static void stand_ins(struct builder *b)
{
	for (size_t k = 0; k < b->t.n; k++) {
		struct gl *g = b->t.order[k], *p = g->parent;

		if (g->node || !(g->mark & MARK_SHOW))
			continue;
		if (g->owner)
			g->node = g->owner->fold_node;
		else if (p && (p->mark & MARK_SHOW))
			g->node = p->below_node ? p->below_node : p->node;
	}
}

int graph_walk(struct builder *b, struct gl *root)
{
	size_t depth = 0, cap = 16;
	struct level *stack = calloc(cap, sizeof(*stack));

	if (!stack)
		return -1;
	gtree_choose(&b->t, root, b->opts->leaks_only);
	b->whole = !root;
	depth = root ? below_of(b, root, graph_life_node(b, root), &stack[0])
		     : level_of(b, NULL, NULL, &stack[0]);
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
	stand_ins(b);
	return b->oom || b->lab.oom ? -1 : 0;
}
