/*
 * The closure trees as the graph draws them (graph_tree.h): the model is only read, every walk is
 * a loop over an order with parents first, so a trace's shape cannot exhaust the stack.
 */
#include "graph_tree.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each life's parent as a struct gl. A life's scratch pointer (model_life.node) names its entry:
 * no index of its own, which for a million lives was a table of tens of megabytes.
 */
static void find_parents(struct gtree *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->lives[i].l->node = &t->lives[i];
	for (size_t i = 0; i < t->n; i++) {
		const struct model_life *p = t->lives[i].l->parent;

		if (p)
			t->lives[i].parent = p->node;
	}
}

/*
 * A closure that is its own parent, or parents that loop (A under B under A), would make a tree
 * without a top. Walk up from every life; where a walk meets itself, the life it came from is
 * drawn as a top instead, and its label says the loop.
 */
static void cut_cycles(struct gtree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		for (struct gl *g = &t->lives[i]; g && !g->walk; g = g->parent) {
			g->walk = i + 1;
			if (g->parent && g->parent->walk == i + 1) {
				g->parent = NULL;
				g->cut = true;
			}
		}
	}
}

/* Children lists, an order with parents first, and what each life has below it. */
static void link_trees(struct gtree *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct gl *g = &t->lives[i], *p = g->parent;

		/* What was folded away below it (model_fold_finished) is below it all the same. */
		for (const struct model_fold *f = g->l->folds; f; f = f->next)
			g->below += (unsigned)(f->count + f->below);
		if (!p) {
			t->order[n++] = g;
			continue;
		}
		if (p->last_child)
			p->last_child->next_sibling = g;
		else
			p->first_child = g;
		p->last_child = g;
	}
	for (size_t k = 0; k < n; k++)
		for (struct gl *c = t->order[k]->first_child; c; c = c->next_sibling)
			t->order[n++] = c;
	for (size_t k = n; k-- > 0;) {
		struct gl *g = t->order[k], *p = g->parent;

		if (!p)
			continue;
		p->below += 1 + g->below;
		if (!g->l->finished || (g->mark & MARK_BELOW))
			p->mark |= MARK_BELOW;
		/* Children come later in the order: the last one written is the first created. */
		if (gtree_culprit(g->l)) {
			p->leaked_below++;
			p->suspects_below += g->l->verdict == VERDICT_SUSPECT;
			p->leak_example = g->l;
		}
		if (g->leaked_below) {
			p->leaked_below += g->leaked_below;
			p->suspects_below += g->suspects_below;
			p->leak_example = g->leak_example;
		}
	}
}

int gtree_build(struct gtree *t, struct model *m)
{
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	for (struct model_life *l = model_lives(m); l; l = l->next)
		n++;
	t->n = n;
	t->lives = calloc(n + 1, sizeof(*t->lives));
	t->order = calloc(n + 1, sizeof(*t->order));
	if (!t->lives || !t->order)
		return -1;
	n = 0;
	for (struct model_life *l = model_lives(m); l; l = l->next)
		t->lives[n++].l = l;
	find_parents(t);
	cut_cycles(t);
	link_trees(t);
	return 0;
}

void gtree_choose(struct gtree *t, struct gl *root, bool leaks_only)
{
	if (root) {
		/* root's subtree: in the order, every life comes after its parent. */
		root->mark |= MARK_SHOW;
		for (size_t k = 0; k < t->n; k++) {
			struct gl *g = t->order[k];

			if (g->parent && (g->parent->mark & MARK_SHOW))
				g->mark |= MARK_SHOW;
		}
	} else {
		for (size_t i = 0; i < t->n; i++)
			t->lives[i].mark |= MARK_SHOW;
	}
	if (!leaks_only)
		return;
	/* Only the unfinished closures and the path from them to their roots (or to root). */
	for (size_t k = t->n; k-- > 0;) {
		struct gl *g = t->order[k];

		if (!(g->mark & MARK_SHOW) || (g->l->finished && !(g->mark & MARK_OPEN)))
			continue;
		g->mark |= MARK_OPEN;
		if (g != root && g->parent)
			g->parent->mark |= MARK_OPEN;
	}
	for (size_t i = 0; i < t->n; i++)
		if (!(t->lives[i].mark & MARK_OPEN))
			t->lives[i].mark &= ~MARK_SHOW;
}

/* What makes unfinished siblings alike: kind, verdict, state, continuation, blamed site. */
static void alike_key(const struct model_life *l, uint64_t k[8])
{
	k[0] = l->kind ? l->kind->init_ip : l->init_ip;
	k[1] = l->kind ? l->kind->fn : l->first_fn;
	k[2] = (uint64_t)l->verdict << 1 | l->hang_root;
	k[3] = (uint64_t)l->state << 1 | l->stuck;
	k[4] = l->fn;
	k[5] = l->nblames ? l->blames[0].site : 0;
	k[6] = l->nblames ? l->blames[0].kind : 9;
	k[7] = l->before_recording;
}

/* Sorting entries of a level: alike ones together, oldest first. */
struct entry {
	struct gl *g;
	size_t pos; /* in the level */
};

static int cmp_alike(const void *a, const void *b)
{
	const struct model_life *x = ((const struct entry *)a)->g->l;
	const struct model_life *y = ((const struct entry *)b)->g->l;
	uint64_t kx[8], ky[8];

	alike_key(x, kx);
	alike_key(y, ky);
	for (int i = 0; i < 8; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

bool gtree_alike(const struct model_life *x, const struct model_life *y)
{
	uint64_t kx[8], ky[8];

	alike_key(x, kx);
	alike_key(y, ky);
	return !memcmp(kx, ky, sizeof(kx));
}

static bool has_shown_child(const struct gl *g)
{
	for (const struct gl *c = g->first_child; c; c = c->next_sibling)
		if (c->mark & MARK_SHOW)
			return true;
	return false;
}

int gtree_fold_alike(struct gl **v, size_t n, struct fold *folds)
{
	struct entry *s = calloc(n + 1, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < n; i++)
		s[i] = (struct entry){v[i], i};
	qsort(s, n, sizeof(*s), cmp_alike);
	for (size_t i = 0, j; i < n; i = j) {
		size_t keep = i; /* the one drawn: the oldest with a tree below it, if any */
		struct fold *f;

		bool culprits = false;

		for (j = i + 1; j < n && gtree_alike(s[j].g->l, s[i].g->l); j++)
			;
		if (j - i < GTREE_FOLD_MIN)
			continue;
		for (size_t k = i; k < j; k++)
			culprits |= s[k].g->leaked_below > 0;
		while (keep < j && (culprits || !has_shown_child(s[keep].g)))
			keep++;
		f = &folds[keep < j ? s[keep].pos : s[i].pos];
		f->example = keep < j;
		f->oldest_ts = INT64_MAX;
		for (size_t k = i; k < j; k++) {
			const struct model_life *l = s[k].g->l;

			if (k == keep)
				continue;
			/* Without an example, s[i] stands for all. */
			if (f->example || k != i)
				s[k].g->mark |= MARK_FOLDED;
			s[k].g->owner = v[keep < j ? s[keep].pos : s[i].pos];
			f->count++;
			f->refs += l->remaining > 0 ? l->remaining : 0;
			f->below += s[k].g->below;
			f->leaked_below += s[k].g->leaked_below;
			f->suspects_below += s[k].g->suspects_below;
			if (s[k].g->leak_example &&
			    (!f->leak_example || s[k].g->leak_example->seq < f->leak_example->seq))
				f->leak_example = s[k].g->leak_example;
			if (l->start_ts < f->oldest_ts) {
				f->oldest_ts = l->start_ts;
				f->oldest_age_ns = l->age_ns;
			}
		}
	}
	free(s);
	return 0;
}

struct gl *gtree_find(struct gtree *t, const struct model_life *l)
{
	(void)t;
	return l->node;
}

void gtree_free(struct gtree *t)
{
	free(t->lives);
	free(t->order);
	memset(t, 0, sizeof(*t));
}

/* Finished, nothing unfinished below, and of one kind: may fold with its siblings. */
bool gtree_foldable(const struct gl *g)
{
	return g->l->finished && !(g->mark & MARK_BELOW);
}

int gtree_cmp_fold(const void *a, const void *b)
{
	const struct gl *gx = *(struct gl *const *)a, *gy = *(struct gl *const *)b;
	const struct model_life *x = gx->l, *y = gy->l;
	bool fx = gtree_foldable(gx), fy = gtree_foldable(gy);

	if (fx != fy)
		return fx ? 1 : -1;
	if (fx && x->kind != y->kind)
		return x->kind->init_ip != y->kind->init_ip
			       ? (x->kind->init_ip < y->kind->init_ip ? -1 : 1)
			       : (x->kind->fn < y->kind->fn ? -1 : 1);
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}
