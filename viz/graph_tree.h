/*
 * The closure trees as the graph draws them: every life of the model indexed with the drawing's
 * own state (the model is only read), parents looping back cut (a closure that is its own parent,
 * A under B under A) so that every tree has a top, and an order with parents before children.
 */
#ifndef CLOSURETRACE_GRAPH_TREE_H
#define CLOSURETRACE_GRAPH_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

enum {
	MARK_SHOW = 1,
	MARK_OPEN = 2,
	MARK_BELOW = 4,	 /* an unfinished closure below */
	MARK_FOLDED = 8, /* drawn only as part of a folded node */
};

/* The drawing's own state for one life. */
struct gl {
	struct model_life *l; /* borrowed */
	struct gl *parent;    /* the one drawn above it; NULL: a top */
	struct gl *first_child, *last_child, *next_sibling; /* in creation order */
	unsigned below;					    /* lives below it */
	unsigned mark;
	size_t walk; /* scratch: which walk up the parents reached it first */
	bool cut;    /* its parents loop back to it: drawn as a top (a cycle) */
};

struct gtree {
	struct gl *lives;  /* in the model's creation order */
	struct gl **order; /* parents before their children */
	size_t n;
};

/* Index the lives of m (after leaks_analyze). Returns 0, or -1 when out of memory. */
int gtree_build(struct gtree *t, struct model *m);
/* Mark what is shown: root's tree (NULL: every tree); leaks_only: only the unfinished closures
 * and the path from them to the top. */
void gtree_choose(struct gtree *t, struct gl *root, bool leaks_only);
/* The entry of a life; borrowed, NULL when not in the model. */
struct gl *gtree_find(struct gtree *t, const struct model_life *l);
void gtree_free(struct gtree *t);

#endif
