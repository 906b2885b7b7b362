/*
 * The closure trees as a Graphviz picture, laid out and rendered in-process by libgvc: the
 * rendering (graph_walk.c walks the trees, graph_nodes.c makes their nodes and edges,
 * graph_wait.c draws what closures wait on).
 *
 * dot's layout grows about quadratically with the nodes, so the picture is kept small: finished
 * siblings of the same kind fold into one counted node ("×128, p50 12 µs") with everything below
 * them, and a long chain of alike closures is drawn as its ends and "… N levels …". Culprits
 * (leaked closures, roots of a hang, suspects) are red with the references they hold and where
 * those were taken, and never fold with closures of another verdict: a fold that hides culprits
 * below it has a red node beside it that counts them. The closures they keep alive are orange;
 * in flight blue; finished ones quiet grey.
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

#include "graph_internal.h"
#include "mem_limit.h"
#include "trace_text.h"
#include "viz.h"

#define TXT 512

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
	/* A recording that joined a program whose closures from before could not be read: once. */
	if (b->in->info.unread_why) {
		snprintf(title, sizeof(title),
			 "closures from before the recording not read (%.200s): those the trace "
			 "does not begin are drawn from their first event",
			 b->in->info.unread_why);
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

/*
 * agwrite writes subgraphs in the order of their IDs, which cgraph's own discipline makes the
 * address of its copy of their name: no order at all, and the clusters (graph_wait.c) would come
 * out in a different order from one run to the next. Clusters are given cgraph's anonymous IDs
 * instead, which count up as they are made; cgraph keeps their names in a map of its own.
 */
static long ordered_ids_map(void *state, int objtype, char *str, IDTYPE *id, int createflag)
{
	if (objtype == AGRAPH && str && !strncmp(str, "cluster", strlen("cluster")))
		return 0;
	return AgIdDisc.map(state, objtype, str, id, createflag);
}

int render_graph(struct viz_input *in, const struct render_graph_opts *opts, FILE *out,
		 struct trace_error *err)
{
	struct builder b = {.in = in, .opts = opts};
	Agiddisc_t ids;
	Agdisc_t disc = {&AgMemDisc, &ids, &AgIoDisc};
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
	ids = AgIdDisc;
	ids.map = ordered_ids_map;
	gvc = gvContext();
	b.g = agopen("closures", Agdirected, &disc);
	graph_attrs(&b);
	graph_waits_init(&b);
	if (gtree_build(&b.t, in->m)) {
		b.oom = true;
		goto out;
	}
	if (root)
		groot = gtree_find(&b.t, root);
	if (graph_walk(&b, groot))
		goto out;
	graph_wait_edges(&b);
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
	graph_waits_free(&b);
	gtree_free(&b.t);
	/* A failed write: the caller checks the stream when it closes it; errno says why. */
	errno = werr;
	return rc;
}
