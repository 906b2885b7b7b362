/*
 * The closure trees as a Graphviz picture, laid out and rendered in-process by libgvc.
 *
 * dot's layout grows about quadratically with the nodes, so the picture is kept small: finished
 * siblings of the same kind fold into one counted node ("×128, p50 12 µs") with everything below
 * them. Leaked closures are red with the references they hold and where those were taken; the
 * closures they keep alive are orange; finished ones are quiet grey.
 */
#include <gvc.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "viz.h"

#define TXT	 512
#define FOLD_MIN 3 /* fewer finished siblings of a kind than this stay apart */

enum {
	MARK_SHOW = 1,
	MARK_OPEN = 2,
	MARK_BELOW = 4,	 /* an unfinished closure below */
	MARK_FOLDED = 8, /* shown only as part of a "×N more like" node */
};

/* This many unfinished siblings that look alike: one is drawn, the others are counted. */
#define LEAK_FOLD_MIN 20

struct builder {
	struct viz_input *in;
	const struct render_graph_opts *opts;
	Agraph_t *g;
	unsigned nodes, folded;
	char *label;
	size_t len, cap;
};

/* ---- labels: escString text, every user string escaped ---- */

static void grow(struct builder *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return;
	b->cap = (b->len + more + 1) * 2;
	b->label = realloc(b->label, b->cap);
	if (!b->label) {
		fprintf(stderr, "closuretrace: out of memory\n");
		exit(2);
	}
}

/* User text: a backslash would start an escape (\N, \G, \l) in a label, so it is doubled. */
static void put_text(struct builder *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		grow(b, 2);
		if (c == '\\')
			b->label[b->len++] = '\\';
		b->label[b->len++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	b->label[b->len] = 0;
}

static __attribute__((format(printf, 2, 3))) void put(struct builder *b, const char *fmt, ...)
{
	char buf[2 * TXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put_text(b, buf);
}

static void newline(struct builder *b)
{
	grow(b, 2);
	b->label[b->len++] = '\\';
	b->label[b->len++] = 'n';
	b->label[b->len] = 0;
}

static void label_reset(struct builder *b)
{
	b->len = 0;
	grow(b, 1);
	b->label[0] = 0;
}

/* ---- which lives to show ---- */

static void mark_subtree(struct model_life *l)
{
	l->mark |= MARK_SHOW;
	for (struct model_life *c = l->first_child; c; c = c->next_sibling)
		mark_subtree(c);
}

static void choose(struct builder *b, struct model_life *root)
{
	struct model *m = b->in->m;

	struct model_life *last = NULL;

	for (struct model_life *l = model_lives(m); l; l = l->next)
		l->mark = 0, l->node = NULL, last = l;
	/* Children come after their parents in creation order: one backward pass. */
	for (struct model_life *l = last; l; l = l->prev)
		if (l->parent && (!l->finished || (l->mark & MARK_BELOW)))
			l->parent->mark |= MARK_BELOW;
	if (root)
		mark_subtree(root);
	else
		for (struct model_life *l = model_lives(m); l; l = l->next)
			l->mark |= MARK_SHOW;
	if (!b->opts->leaks_only)
		return;
	/* Only the unfinished closures and the path from them to their roots. */
	for (struct model_life *l = model_lives(m); l; l = l->next) {
		if (!(l->mark & MARK_SHOW) || l->finished)
			continue;
		for (struct model_life *p = l; p; p = p->parent) {
			p->mark |= MARK_OPEN;
			if (p == root)
				break;
		}
	}
	for (struct model_life *l = model_lives(m); l; l = l->next)
		if (!(l->mark & MARK_OPEN))
			l->mark &= ~MARK_SHOW;
}

/* ---- nodes ---- */

static void life_label(struct builder *b, struct model_life *l)
{
	struct model *m = b->in->m;
	char func[TXT], site[TXT], name[64], state[2 * TXT], d[32];

	label_reset(b);
	put_text(b, model_life_function(m, l, func, sizeof(func)));
	newline(b);
	if (l->init_ip)
		put(b, "init %s", model_site_text(m, l->init_ip, site, sizeof(site)));
	else
		put_text(b, model_origin_text(l, site, sizeof(site)));
	newline(b);
	put_text(b, model_life_name(l, name, sizeof(name)));
	newline(b);
	if (l->stuck && !l->finished)
		put_text(b, "STUCK: ");
	put_text(b, model_state_text(m, l, state, sizeof(state)));
	newline(b);
	if (l->finished) {
		put(b, "lifetime %s",
		    model_duration_text((uint64_t)(l->end_ts - l->start_ts), d, sizeof(d)));
		return;
	}
	put(b, "alive %s at the end",
	    model_duration_text((uint64_t)(model_last_ts(m) - l->start_ts), d, sizeof(d)));
	newline(b);
	if (l->verdict == VERDICT_KEPT_ALIVE) {
		put(b, "kept alive by %u unfinished child%s", l->live_children,
		    l->live_children == 1 ? "" : "ren");
		return;
	}
	put(b, "LEAKED: holds %" PRId64 " ref%s", l->remaining, l->remaining == 1 ? "" : "s");
	for (unsigned i = 0; i < l->nblames; i++) {
		const struct model_sym *s = model_sym(m, l->blames[i].site);

		newline(b);
		put(b, "%s %s", i ? "also" : "blame:",
		    model_site_text(m, l->blames[i].site, site, sizeof(site)));
		if (s && s->func && s->file)
			put(b, " %s", s->func);
		put(b, ": %s", leaks_blame_short(&l->blames[i]));
		if (!i)
			put(b, " (sure: %s)", leaks_sure_text(l->sure));
	}
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

/* Finished: quiet grey; kept alive: orange; leaked: red. */
static void paint(Agnode_t *n, const struct model_life *l)
{
	if (l->finished) {
		set(n, "color", "gray60");
		set(n, "fontcolor", "gray35");
	} else if (l->verdict == VERDICT_KEPT_ALIVE) {
		set(n, "color", "darkorange");
		set(n, "fillcolor", "#ffe8c8");
	} else {
		set(n, "color", "red");
		set(n, "fillcolor", "#ffd8d8");
		set(n, "fontcolor", "#8b0000");
	}
}

static Agnode_t *life_node(struct builder *b, struct model_life *l)
{
	char name[32];
	Agnode_t *n;

	snprintf(name, sizeof(name), "c%" PRIu64, l->seq);
	n = new_node(b, name);
	life_label(b, l);
	set(n, "label", b->label);
	paint(n, l);
	if (!l->finished)
		set(n, "penwidth", l->verdict == VERDICT_KEPT_ALIVE ? "2" : "2.5");
	l->node = n;
	return n;
}

static uint64_t life_ns(const struct model_life *l)
{
	return l->end_ts > l->start_ts ? (uint64_t)(l->end_ts - l->start_ts) : 0;
}

static int cmp_ns(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static unsigned count_below(const struct model_life *l)
{
	unsigned n = 0;

	for (const struct model_life *c = l->first_child; c; c = c->next_sibling)
		n += 1 + count_below(c);
	return n;
}

/* One node for group[0..n): finished siblings of one kind. */
static Agnode_t *fold_node(struct builder *b, struct model_life **group, size_t n)
{
	struct model *m = b->in->m;
	uint64_t *ns = calloc(n, sizeof(*ns));
	char name[32], func[TXT], site[TXT], p50[32], max[32];
	unsigned below = 0;
	Agnode_t *node;

	if (!ns) {
		fprintf(stderr, "closuretrace: out of memory\n");
		exit(2);
	}
	for (size_t i = 0; i < n; i++) {
		ns[i] = life_ns(group[i]);
		below += count_below(group[i]);
	}
	qsort(ns, n, sizeof(*ns), cmp_ns);
	snprintf(name, sizeof(name), "f%u", ++b->folded);
	node = new_node(b, name);
	label_reset(b);
	put(b, "×%zu %s", n, model_life_function(m, group[0], func, sizeof(func)));
	newline(b);
	if (group[0]->init_ip)
		put(b, "init %s", model_site_text(m, group[0]->init_ip, site, sizeof(site)));
	else
		put_text(b, "created before recording");
	newline(b);
	put(b, "finished, p50 %s, max %s", model_duration_text(ns[(n - 1) / 2], p50, sizeof(p50)),
	    model_duration_text(ns[n - 1], max, sizeof(max)));
	if (below) {
		newline(b);
		put(b, "(+%u closures below)", below);
	}
	set(node, "label", b->label);
	set(node, "color", "gray60");
	set(node, "fontcolor", "gray35");
	set(node, "style", "rounded,filled");
	set(node, "fillcolor", "gray95");
	set(node, "peripheries", "2");
	free(ns);
	return node;
}

static void edge(struct builder *b, Agnode_t *from, Agnode_t *to, const struct model_life *child)
{
	Agedge_t *e = agedge(b->g, from, to, NULL, 1);

	if (child && !child->finished) {
		agset(e, "color", child->verdict == VERDICT_KEPT_ALIVE ? "darkorange" : "red");
		agset(e, "penwidth", "2");
	}
}

/* Finished, nothing unfinished below, and of one kind: may fold with its siblings. */
static bool foldable(const struct model_life *l)
{
	return l->finished && !(l->mark & MARK_BELOW);
}

static int cmp_fold(const void *a, const void *b)
{
	const struct model_life *x = *(struct model_life *const *)a;
	const struct model_life *y = *(struct model_life *const *)b;
	bool fx = foldable(x), fy = foldable(y);

	if (fx != fy)
		return fx ? 1 : -1;
	if (fx && x->kind != y->kind)
		return x->kind->init_ip != y->kind->init_ip
			       ? (x->kind->init_ip < y->kind->init_ip ? -1 : 1)
			       : (x->kind->fn < y->kind->fn ? -1 : 1);
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void add_level(struct builder *b, Agnode_t *parent, struct model_life **v, size_t n);

static void add_life(struct builder *b, Agnode_t *parent, struct model_life *l)
{
	Agnode_t *node = life_node(b, l);
	struct model_life **kids;
	size_t n = 0;

	if (parent)
		edge(b, parent, node, l);
	for (struct model_life *c = l->first_child; c; c = c->next_sibling)
		n += !!(c->mark & MARK_SHOW);
	if (!n)
		return;
	kids = calloc(n, sizeof(*kids));
	if (!kids) {
		fprintf(stderr, "closuretrace: out of memory\n");
		exit(2);
	}
	n = 0;
	for (struct model_life *c = l->first_child; c; c = c->next_sibling)
		if (c->mark & MARK_SHOW)
			kids[n++] = c;
	add_level(b, node, kids, n);
	free(kids);
}

/* Siblings: the ones that stay apart in creation order, then the folded groups by kind. */
/* Unfinished siblings look alike when of one kind, one verdict and one blamed site. */
static int cmp_alike(const void *a, const void *b)
{
	const struct model_life *x = *(struct model_life *const *)a;
	const struct model_life *y = *(struct model_life *const *)b;
	uint64_t kx[5] = {x->kind->init_ip, x->kind->fn, x->verdict,
			  x->nblames ? x->blames[0].site : 0, x->nblames ? x->blames[0].kind : 9};
	uint64_t ky[5] = {y->kind->init_ip, y->kind->fn, y->verdict,
			  y->nblames ? y->blames[0].site : 0, y->nblames ? y->blames[0].kind : 9};

	for (int i = 0; i < 5; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool alike(const struct model_life *x, const struct model_life *y)
{
	return x->kind == y->kind && x->verdict == y->verdict && x->nblames == y->nblames &&
	       (!x->nblames ||
		(x->blames[0].site == y->blames[0].site && x->blames[0].kind == y->blames[0].kind));
}

/* The node that stands for the alike siblings of example that are not drawn. */
static Agnode_t *more_node(struct builder *b, struct model_life *example, size_t more, int64_t refs)
{
	struct model *m = b->in->m;
	char name[32], func[TXT], site[TXT], ex[64];
	Agnode_t *node;

	snprintf(name, sizeof(name), "f%u", ++b->folded);
	node = new_node(b, name);
	label_reset(b);
	put(b, "×%zu more like %s", more, model_life_name(example, ex, sizeof(ex)));
	newline(b);
	put_text(b, model_life_function(m, example, func, sizeof(func)));
	newline(b);
	if (example->verdict == VERDICT_KEPT_ALIVE) {
		put_text(b, "kept alive by unfinished children");
	} else {
		put(b, "LEAKED: %" PRId64 " refs held in all", refs);
		if (example->nblames) {
			newline(b);
			put(b, "blame: %s: %s",
			    model_site_text(m, example->blames[0].site, site, sizeof(site)),
			    leaks_blame_short(&example->blames[0]));
		}
	}
	set(node, "label", b->label);
	set(node, "style", "rounded,filled");
	set(node, "peripheries", "2");
	paint(node, example);
	return node;
}

/*
 * Many unfinished siblings that look alike: the first of each such group is drawn, the others
 * marked MARK_FOLDED and counted in *more (indexed like v). Returns how many were folded.
 */
static size_t fold_alike(struct model_life **v, size_t n, size_t *more, int64_t *refs)
{
	struct model_life **s = calloc(n + 1, sizeof(*s));
	size_t folded = 0;

	if (!s)
		return 0;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_alike);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && alike(s[j], s[i]))
			j++;
		if (j - i >= LEAK_FOLD_MIN) {
			/* s[i] is the earliest of the group: the one drawn. */
			for (size_t k = i + 1; k < j; k++) {
				s[k]->mark |= MARK_FOLDED;
				s[i]->mark &= ~MARK_FOLDED;
			}
			for (size_t k = 0; k < n; k++)
				if (v[k] == s[i]) {
					more[k] = j - i - 1;
					refs[k] = 0;
					for (size_t q = i + 1; q < j; q++)
						refs[k] +=
							s[q]->remaining > 0 ? s[q]->remaining : 0;
				}
			folded += j - i - 1;
		}
		i = j;
	}
	free(s);
	return folded;
}

/* Siblings: the ones that stay apart in creation order, then the folded groups by kind. */
static void add_level(struct builder *b, Agnode_t *parent, struct model_life **v, size_t n)
{
	size_t i = 0, apart = 0, *more = NULL;
	int64_t *refs = NULL;

	qsort(v, n, sizeof(*v), cmp_fold);
	while (apart < n && !foldable(v[apart]))
		apart++;
	if (!b->opts->no_fold && apart >= LEAK_FOLD_MIN) {
		more = calloc(apart, sizeof(*more));
		refs = calloc(apart, sizeof(*refs));
		if (more && refs)
			fold_alike(v, apart, more, refs);
	}
	while (i < n) {
		size_t j = i + 1;

		if (!b->opts->no_fold && foldable(v[i]))
			while (j < n && foldable(v[j]) && v[j]->kind == v[i]->kind)
				j++;
		if (j - i >= FOLD_MIN) {
			Agnode_t *node = fold_node(b, v + i, j - i);

			if (parent)
				edge(b, parent, node, NULL);
			i = j;
			continue;
		}
		for (; i < j; i++) {
			if (v[i]->mark & MARK_FOLDED)
				continue;
			add_life(b, parent, v[i]);
			if (more && i < apart && more[i]) {
				Agnode_t *node = more_node(b, v[i], more[i], refs[i]);

				if (parent)
					edge(b, parent, node, v[i]);
			}
		}
	}
	free(more);
	free(refs);
}

static int build(struct builder *b, struct model_life *root)
{
	struct model *m = b->in->m;
	struct model_life **tops;
	size_t n = 0;

	choose(b, root);
	if (root) {
		add_life(b, NULL, root);
		return 0;
	}
	for (struct model_life *l = model_lives(m); l; l = l->next)
		n += l->parent == NULL && (l->mark & MARK_SHOW);
	tops = calloc(n + 1, sizeof(*tops));
	if (!tops)
		return -1;
	n = 0;
	for (struct model_life *l = model_lives(m); l; l = l->next)
		if (l->parent == NULL && (l->mark & MARK_SHOW))
			tops[n++] = l;
	add_level(b, NULL, tops, n);
	free(tops);
	return 0;
}

static void graph_attrs(struct builder *b)
{
	Agraph_t *g = b->g;
	char title[TXT + 64];
	const char *dir;
	size_t dirlen;

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
	label_reset(b);
	put_text(b, title);
	/* Long absolute paths crowd every node: the directory they share is said once. */
	dir = model_common_dir(b->in->m, &dirlen);
	if (dir) {
		snprintf(title, sizeof(title), "source files under %.*s", (int)dirlen, dir);
		newline(b);
		put_text(b, title);
		model_strip_files(b->in->m, dirlen);
	}
	agattr(g, AGRAPH, "label", b->label);
}

/* dot's position phase dominates on big graphs; these bound its work (tech-notes §3). */
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

int render_graph(struct viz_input *in, const struct render_graph_opts *opts, FILE *out)
{
	struct builder b = {.in = in, .opts = opts};
	struct model_life *root = NULL;
	GVC_t *gvc;
	int rc = 0;

	if (opts->root.addr) {
		char err[1024];

		root = viz_find_closure(in, &opts->root, err, sizeof(err));
		if (!root) {
			fprintf(stderr, "closuretrace graph: %s\n", err);
			return 2;
		}
	}
	gvc = gvContext();
	b.g = agopen("closures", Agdirected, NULL);
	graph_attrs(&b);
	if (build(&b, root)) {
		fprintf(stderr, "closuretrace: out of memory\n");
		rc = 2;
		goto out;
	}
	if (!strcmp(opts->format, "dot")) {
		/* Structure only, no layout: stable, for tools and tests. */
		agwrite(b.g, out);
		goto out;
	}
	big_graph_knobs(&b);
	if (gvLayout(gvc, b.g, "dot")) {
		fprintf(stderr, "closuretrace graph: Graphviz could not lay the graph out\n");
		rc = 2;
		goto out;
	}
	if (gvRender(gvc, b.g, opts->format, out)) {
		fprintf(stderr, "closuretrace graph: Graphviz cannot write '%s'\n", opts->format);
		rc = 2;
	}
	gvFreeLayout(gvc, b.g);
out:
	agclose(b.g);
	gvFreeContext(gvc);
	free(b.label);
	return rc;
}
