/*
 * The graph's parts (graph.c the nodes and the rendering, graph_walk.c the walk over the trees,
 * graph_wait.c what closures wait on): the builder they share. Not for the other presentations.
 */
#ifndef CLOSURETRACE_GRAPH_INTERNAL_H
#define CLOSURETRACE_GRAPH_INTERNAL_H

#include <gvc.h>

#include "graph_label.h"
#include "graph_tree.h"
#include "hashmap.h"
#include "viz.h"

/*
 * Levels laid out at most, in every format (-T dot too, but for --no-fold, whose dot has every
 * level: no layout runs on it): Graphviz's layout of a deeper chain takes minutes and gigabytes
 * (250,000 levels: 3.3 GB, then a crash inside libgvc; 70,000: over 200 s). Long chains of alike
 * closures are elided before (graph_chain_node); below this depth, one node says how many closures
 * are left out, and a red one beside it the culprits among them.
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
	/* graph_wait.c: the waitlists drawn ((pid, address) -> struct gwait), their count, and the
	 * kinds of edge drawn beside the trees (GEDGE_* bits: the legend's entries) */
	struct hashmap waits;
	unsigned nwaits, edges;
	Agnode_t *more_waits; /* "+N more waitlists", once there are too many */
	Agraph_t *sync_cluster;
};

/* ---- graph.c ---- */
Agnode_t *graph_new_node(struct builder *b, const char *name);
void graph_set(void *obj, const char *attr, const char *value);
/* Finished: grey; in flight: blue; kept alive: orange; culprits (gtree_culprit): red. */
void graph_paint(Agnode_t *n, const struct model_life *l);
/* An edge from parent to child, coloured as child is (NULL: grey). */
void graph_edge(struct builder *b, Agnode_t *from, Agnode_t *to, const struct model_life *child);
/* A life's own node. */
Agnode_t *graph_life_node(struct builder *b, struct gl *g);
/* One node for group[0..n): finished siblings of one kind. */
Agnode_t *graph_fold_node(struct builder *b, struct gl **group, size_t n);
/* The node for a fold of unfinished siblings like l (and the red node of the culprits below). */
Agnode_t *graph_alike_node(struct builder *b, const struct model_life *l, const struct fold *f);
/*
 * Culprits left out of the picture above them (below a fold, past a cap, past the deepest
 * level): count of them, suspects of which, example the first, in a red node of their own under
 * from ("×3 LEAKED below them, first like ..."), where saying where they are. Returns the node.
 */
Agnode_t *graph_culprits_node(struct builder *b, Agnode_t *from, unsigned count, unsigned suspects,
			      const struct model_life *example, const char *where);
/* Siblings not drawn past the cap: lives of them (none a culprit), and the closures below them
 * (and below culprits among them) that are no culprit. */
Agnode_t *graph_rest_node(struct builder *b, size_t lives, unsigned below);
/* Below node (g's), past MAX_DEPTH: the closures left out, and the culprits among them. */
void graph_cut_node(struct builder *b, Agnode_t *node, struct gl *g);
/* A chain of n alike closures from first to last, elided: "… n levels …". */
Agnode_t *graph_chain_node(struct builder *b, const struct gl *first, const struct gl *last,
			   size_t n, int64_t refs);

/* ---- graph_walk.c ---- */
/* Draw root's tree (NULL: every tree), a level of siblings at a time. Returns -1: out of memory. */
int graph_walk(struct builder *b, struct gl *root);

/* ---- graph_wait.c ---- */
enum {
	GEDGE_WAITS = 1,  /* a waiter to the waitlist it waits on */
	GEDGE_WAKES = 2,  /* a waitlist to the closure whose continuation would wake it */
	GEDGE_QUEUED = 4, /* a closure to the waitlist whose closure_wake_up queued it */
};
void graph_waits_init(struct builder *b);
void graph_waits_free(struct builder *b);
/* A top of the picture (g: the life it stands for): in a cluster with what it waits on (a
 * waitlist, closure_sync) or was woken from, not in the rows of the others. Returns whether it
 * went in one. */
bool graph_wait_cluster(struct builder *b, Agnode_t *node, const struct gl *g);
/* After the walk: the waitlists, the edges to and from them, and their legend. */
void graph_wait_edges(struct builder *b);

#endif
