/*
 * The closure trees as the graph draws them (graph_tree.h): the model is only read, every walk is
 * a loop over an order with parents first, so a trace's shape cannot exhaust the stack.
 */
#include "graph_tree.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(const void *p, size_t mask)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 29;
	x *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(x >> 32) & mask;
}

/* Each life's parent as a struct gl, through a table from model lives to their index. */
static int find_parents(struct gtree *t)
{
	size_t mask = 1, *table;

	while (mask < 2 * t->n)
		mask <<= 1;
	table = calloc(mask, sizeof(*table)); /* index + 1; 0: empty */
	if (!table)
		return -1;
	mask--;
	for (size_t i = 0; i < t->n; i++) {
		size_t s = slot_of(t->lives[i].l, mask);

		while (table[s])
			s = (s + 1) & mask;
		table[s] = i + 1;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct model_life *p = t->lives[i].l->parent;
		size_t s;

		if (!p)
			continue;
		for (s = slot_of(p, mask); table[s]; s = (s + 1) & mask)
			if (t->lives[table[s] - 1].l == p) {
				t->lives[i].parent = &t->lives[table[s] - 1];
				break;
			}
	}
	free(table);
	return 0;
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
	if (find_parents(t))
		return -1;
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

struct gl *gtree_find(struct gtree *t, const struct model_life *l)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->lives[i].l == l)
			return &t->lives[i];
	return NULL;
}

void gtree_free(struct gtree *t)
{
	free(t->lives);
	free(t->order);
	memset(t, 0, sizeof(*t));
}
