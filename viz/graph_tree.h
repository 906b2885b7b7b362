/*
 * The closure trees as the graph draws them: every life of the model indexed with the drawing's
 * own state (the model is only read), parents looping back cut (a closure that is its own parent,
 * A under B under A) so that every tree has a top, and an order with parents before children.
 */
#ifndef CLOSURETRACE_GRAPH_TREE_H
#define CLOSURETRACE_GRAPH_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leaks.h"
#include "model.h"

#define GTREE_FOLD_MIN 3 /* fewer siblings that look alike than this stay apart */

enum {
	MARK_SHOW = 1,
	MARK_OPEN = 2,
	MARK_BELOW = 4,	 /* an unfinished closure below */
	MARK_FOLDED = 8, /* drawn only as part of a folded node */
};

/*
 * A culprit, which the picture always draws red and never folds with closures of another verdict
 * (issue 40 item 3): a root cause (leaked, a root of a hang, a suspect: leaks_is_root_cause).
 */
static inline bool gtree_culprit(const struct model_life *l)
{
	return leaks_is_root_cause(l);
}

/* The drawing's own state for one life. */
struct gl {
	struct model_life *l; /* borrowed */
	struct gl *parent;    /* the one drawn above it; NULL: a top */
	struct gl *first_child, *last_child, *next_sibling; /* in creation order */
	unsigned below;					    /* lives below it */
	unsigned leaked_below;				    /* culprits (gtree_culprit) below it */
	unsigned suspects_below;			    /* of which suspects */
	const struct model_life *leak_example; /* the first of them, in creation order */
	unsigned mark;
	size_t walk; /* scratch: which walk up the parents reached it first */
	bool cut;    /* its parents loop back to it: drawn as a top (a cycle) */
	/* The node that stands for it in the picture (Agnode_t *, NULL: not drawn), and the one
	 * that stands for what is below it when that is not drawn (a cut at the deepest level). */
	void *node, *below_node;
	struct gl *owner; /* folded (MARK_FOLDED): the sibling its fold is drawn at */
	void *fold_node;  /* at an owner: the fold's node */
};

struct gtree {
	struct gl *lives;     /* in the model's creation order */
	struct gl **order;    /* parents before their children */
	size_t n;
};

/* Index the lives of m (after leaks_analyze). Returns 0, or -1 when out of memory. */
int gtree_build(struct gtree *t, struct model *m);
/* Mark what is shown: root's tree (NULL: every tree); leaks_only: only the unfinished closures
 * and the path from them to the top. */
void gtree_choose(struct gtree *t, struct gl *root, bool leaks_only);
/* Alike unfinished siblings folded into one node, drawn where v[pos] stands. */
struct fold {
	size_t count;		/* lives in the node */
	bool example;		/* v[pos] is drawn too, with its tree: "×N more like" it */
	int64_t refs;		/* references they hold in all */
	int64_t oldest_ts;	/* the start of the oldest */
	uint64_t oldest_age_ns; /* its age at the end of the recording */
	unsigned below;		/* lives below them */
	unsigned leaked_below;	/* culprits below the folded ones: drawn red apart */
	unsigned suspects_below;	       /* of which suspects */
	const struct model_life *leak_example; /* the first of those */
};

/*
 * Fold the unfinished siblings v[0..n) (a level of the picture, in creation order): siblings alike
 * (kind, verdict, state, continuation, blamed site) in groups of GTREE_FOLD_MIN or more become one
 * fold, put in folds[pos] (indexed like v, zeroed by the caller). With a tree below one of them,
 * the oldest such is drawn too ("more like" it), unless culprits are below any of them: then none
 * is, so that the culprits below are all in one red node rather than one drawn apart and the rest
 * counted. The others are marked MARK_FOLDED. The culprits below the folded ones are counted
 * (leaked_below): the picture draws them in a red node of their own, never hidden in the fold's
 * colour. Returns 0, or -1 when out of memory.
 */
int gtree_fold_alike(struct gl **v, size_t n, struct fold *folds);

/* Alike as gtree_fold_alike folds them: kind, verdict, state, continuation, blamed site. */
bool gtree_alike(const struct model_life *x, const struct model_life *y);
/* Finished, nothing unfinished below, and of one kind: may fold with its siblings. */
bool gtree_foldable(const struct gl *g);
/* A level's order for qsort (struct gl *): those that stay apart first, in creation order; then
 * the foldable, by kind. */
int gtree_cmp_fold(const void *a, const void *b);

/* The entry of a life (kept in its model_life.node from gtree_build on); borrowed. */
struct gl *gtree_find(struct gtree *t, const struct model_life *l);
void gtree_free(struct gtree *t);

#endif
