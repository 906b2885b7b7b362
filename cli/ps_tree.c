/* The tree of live closures, as text or JSON: see ps_tree.h. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "json_value.h"
#include "model.h"
#include "trace_text.h"
#include "ps_tree.h"
#include "source_path.h"

/* Deeper chains continue as roots of their own (the printing recurses). */
#define MAX_DEPTH 1000
/* Indentation stops growing here, so that deep trees stay on the screen. */
#define MAX_INDENT 32

/* A resolved address, cached: the same call sites recur across thousands of closures. */
struct rsym {
	uint64_t addr;
	char *func, *file; /* owned; NULL when unknown */
	const char *obj;   /* the object's path, owned by the symbolizer; NULL: in no object */
	int line;
};

struct tree {
	const struct ps_view *v;
	const struct live_closure *c;
	size_t n;
	long *parent, *first_child, *next_sibling; /* indices into c, -1 for none */
	size_t *nchildren;
	bool *done;
	struct hashmap cache; /* (addr, 0) -> struct rsym * (they do not move: callers keep them) */
};

static const struct rsym unknown_sym = {0};

static const struct rsym *resolve(struct tree *t, uint64_t addr)
{
	struct sym_info info;
	struct rsym **r;
	bool added;

	if (!addr)
		return &unknown_sym;
	r = hashmap_put(&t->cache, addr, 0, &added);
	if (!added)
		return *r;
	*r = calloc(1, sizeof(**r));
	if (!*r) {
		hashmap_del(&t->cache, addr, 0);
		return &unknown_sym;
	}
	(*r)->addr = addr;
	if (symbols_resolve(t->v->syms, addr, &info)) {
		(*r)->obj = info.obj;
		/* The process's names: no escape sequence reaches the terminal. */
		(*r)->func = text_visible_dup(info.func);
		(*r)->file = source_path_show(info.dir, info.file); /* as every command shows it */
		(*r)->line = info.line;
	}
	return *r;
}

/* A call site: the closures store return addresses, so the call is at addr - 1. */
static const struct rsym *call_site(struct tree *t, uint64_t ret)
{
	return ret ? resolve(t, ret - 1) : &unknown_sym;
}

static int tree_build(struct tree *t, const struct ps_view *v)
{
	struct hashmap by_addr; /* (addr, 0) -> index in c: the first closure listed there */
	size_t n = v->list->n;

	memset(t, 0, sizeof(*t));
	hashmap_init(&t->cache, sizeof(struct rsym *));
	t->v = v;
	t->c = v->list->v;
	t->n = n;
	t->parent = malloc((n + 1) * sizeof(long));
	t->first_child = malloc((n + 1) * sizeof(long));
	t->next_sibling = malloc((n + 1) * sizeof(long));
	t->nchildren = calloc(n + 1, sizeof(size_t));
	t->done = calloc(n + 1, sizeof(bool));
	if (!t->parent || !t->first_child || !t->next_sibling || !t->nchildren || !t->done)
		return -1;
	hashmap_init(&by_addr, sizeof(size_t));
	for (size_t i = n; i-- > 0;) /* backwards: the first closure listed at an address stays */
		*(size_t *)hashmap_put(&by_addr, t->c[i].addr, 0, NULL) = i;
	for (size_t i = 0; i < n; i++) {
		const size_t *at = t->c[i].parent ? hashmap_get(&by_addr, t->c[i].parent, 0) : NULL;
		long p = at ? (long)*at : -1;

		t->parent[i] = p == (long)i ? -1 : p;
		t->first_child[i] = -1;
	}
	for (size_t i = n; i-- > 0;) {
		long p = t->parent[i];

		if (p < 0)
			continue;
		t->next_sibling[i] = t->first_child[p];
		t->first_child[p] = (long)i;
		t->nchildren[p]++;
	}
	hashmap_free(&by_addr);
	return 0;
}

static void tree_free(struct tree *t)
{
	struct rsym **r;
	size_t pos = 0;

	while ((r = hashmap_next(&t->cache, &pos, NULL, NULL))) {
		free((*r)->func);
		free((*r)->file);
		free(*r);
	}
	hashmap_free(&t->cache);
	free(t->parent);
	free(t->first_child);
	free(t->next_sibling);
	free(t->nchildren);
	free(t->done);
}

static uint32_t count_of(const struct tree *t, size_t i)
{
	return live_count(t->v->list, &t->c[i]);
}

static bool has_flag(const struct tree *t, size_t i, uint32_t flag)
{
	return t->c[i].remaining & flag;
}

static int str_cmp(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

/* Sites compare by what is printed (an unrolled loop has one line at several addresses). */
static int site_cmp(struct tree *t, uint64_t x, uint64_t y)
{
	const struct rsym *a = call_site(t, x), *b = call_site(t, y);
	int k;

	if (!a->file || !b->file || !a->line || !b->line)
		return x < y ? -1 : x > y;
	if ((k = str_cmp(a->file, b->file)) || (k = a->line - b->line))
		return k;
	return str_cmp(a->func, b->func);
}

/* Two leaves fold into one line when everything the line shows is the same. */
static int leaf_key_cmp(struct tree *t, const struct live_closure *x, const struct live_closure *y)
{
	uint64_t kx[] = {x->fn, x->remaining, x->stack, x->queued};
	uint64_t ky[] = {y->fn, y->remaining, y->stack, y->queued};

	for (size_t k = 0; k < sizeof(kx) / sizeof(kx[0]); k++)
		if (kx[k] != ky[k])
			return kx[k] < ky[k] ? -1 : 1;
	return site_cmp(t, x->ip, y->ip);
}

/* By what the line shows, then by address: each group lists its lowest address first. */
static int leaf_cmp(const void *a, const void *b, void *arg)
{
	struct tree *t = arg;
	const struct live_closure *x = &t->c[*(const size_t *)a], *y = &t->c[*(const size_t *)b];
	int k = leaf_key_cmp(t, x, y);

	return k ? k : x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A closure with nothing below it and nothing to wait for: it may fold with its twins. */
static bool is_leaf(const struct tree *t, size_t i)
{
	return !t->nchildren[i] && !t->c[i].sync_ip && !t->c[i].waitlist;
}

/* The children of p not shown yet, in list order (the roots when p < 0) into v. */
static size_t children_of(const struct tree *t, long p, size_t *v)
{
	size_t n = 0;

	if (p < 0) {
		for (size_t i = 0; i < t->n; i++)
			if (t->parent[i] < 0 && !t->done[i])
				v[n++] = i;
		return n;
	}
	for (long k = t->first_child[p]; k >= 0; k = t->next_sibling[k])
		if (!t->done[k])
			v[n++] = (size_t)k;
	return n;
}

/* --- text --- */

/* "FILE:LINE (FUNC)", "FUNC in OBJ", or the address. */
static void fmt_site(char *buf, size_t size, const struct rsym *s, uint64_t addr)
{
	char obj[PATH_MAX * TEXT_ESCAPE_MAX];

	text_visible(obj, sizeof(obj), s->obj ? s->obj : "?"); /* a path the process mapped */
	if (s->file && s->line)
		text_snprintf(buf, size, "%s:%d (%s)", s->file, s->line, s->func ? s->func : "?");
	else if (s->func)
		text_snprintf(buf, size, "%s in %s", s->func, obj);
	else if (s->obj)
		text_snprintf(buf, size, "0x%" PRIx64 " in %s", addr, obj);
	else
		snprintf(buf, size, "0x%" PRIx64, addr);
}

static void fmt_flags(char *buf, const struct tree *t, size_t i)
{
	const struct closure_debug_info *d = &t->v->list->info;
	char *p = buf;

	if (t->c[i].queued)
		*p++ = 'Q';
	if (has_flag(t, i, d->flag_running))
		*p++ = 'R';
	if (has_flag(t, i, d->flag_sleeping))
		*p++ = 'S';
	if (has_flag(t, i, d->flag_waiting))
		*p++ = 'W';
	if (has_flag(t, i, d->flag_destructor))
		*p++ = 'D';
	if (p == buf)
		*p++ = '-';
	*p = '\0';
}

/* Time from a library time stamp to when the list was read; 0 when not known. */
static uint64_t since(const struct tree *t, uint64_t at)
{
	return at && t->v->now_ns > at ? t->v->now_ns - at : 0;
}

/* ", waiting 3.00 s" (nothing when the time is not known). */
static void print_waited(FILE *out, const struct tree *t, uint64_t at)
{
	char d[32];

	if (at)
		fprintf(out, "; waiting %s", model_duration_text(since(t, at), d, sizeof(d)));
}

/*
 * "r COUNT FLAGS [-> FN] [stack] last at SITE, init at SITE, alive AGE": what a closure and its
 * folded twins share (for twins, oldest_ns is the oldest's init).
 */
static void print_body(FILE *out, struct tree *t, size_t i, uint64_t oldest_ns, bool group)
{
	const struct live_closure *c = &t->c[i];
	char flags[8], site[4200], d[32];

	fmt_flags(flags, t, i);
	fprintf(out, "r %" PRIu32 " %s", count_of(t, i), flags);
	if (c->fn) {
		const struct rsym *fn = resolve(t, c->fn);

		if (fn->func)
			fprintf(out, " -> %s", fn->func);
		else
			fprintf(out, " -> 0x%" PRIx64, c->fn);
	}
	fmt_site(site, sizeof(site), call_site(t, c->ip), c->ip);
	fprintf(out, "%s last at %s", c->stack ? " stack" : "", site);
	if (c->init_ip) {
		fmt_site(site, sizeof(site), call_site(t, c->init_ip), c->init_ip);
		fprintf(out, ", init at %s", site);
	}
	if (oldest_ns)
		fprintf(out, ", %salive %s", group ? "oldest " : "",
			model_duration_text(since(t, oldest_ns), d, sizeof(d)));
	fputc('\n', out);
}

/* What the closure waits for, on lines of its own below it. */
static void print_waits(FILE *out, struct tree *t, size_t i, int indent)
{
	const struct live_closure *c = &t->c[i];
	const struct closure_debug_info *d = &t->v->list->info;
	char site[4200];

	if (c->sync_ip && has_flag(t, i, d->flag_sleeping)) {
		uint32_t refs = count_of(t, i);
		size_t kids = t->nchildren[i];

		fmt_site(site, sizeof(site), call_site(t, c->sync_ip), c->sync_ip);
		fprintf(out,
			"%*s  sleeps in closure_sync at %s, thread %" PRIu32 ", for %" PRIu32
			" reference%s",
			indent, "", site, c->sync_tid, refs, refs == 1 ? "" : "s");
		if (kids)
			fprintf(out, ": %zu held by the child%s below", kids,
				kids == 1 ? "" : "ren");
		if (refs > kids)
			fprintf(out, "%s%" PRIu32 " by other gets", kids ? ", " : ": ",
				refs - (uint32_t)kids);
		print_waited(out, t, c->sync_ns);
		fputc('\n', out);
	}
	if (c->waitlist && has_flag(t, i, d->flag_waiting)) {
		fmt_site(site, sizeof(site), call_site(t, c->waiting_on), c->waiting_on);
		fprintf(out, "%*s  waits on waitlist 0x%" PRIx64 ", closure_wait at %s", indent, "",
			c->waitlist, site);
		print_waited(out, t, c->wait_ns);
		fputc('\n', out);
	}
}

static void print_node(FILE *out, struct tree *t, size_t i, int depth);

/* The children of p (the roots when p < 0): inner nodes in list order, then folded leaves. */
static void print_children(FILE *out, struct tree *t, long p, int depth)
{
	int indent = 2 * (depth < MAX_INDENT ? depth : MAX_INDENT);
	size_t *kids = malloc(((p < 0 ? t->n : t->nchildren[p]) + 1) * sizeof(*kids));
	size_t n, nleaves = 0;

	if (!kids)
		return;
	n = children_of(t, p, kids);
	for (size_t k = 0; k < n; k++) {
		if (!is_leaf(t, kids[k]))
			print_node(out, t, kids[k], depth);
		else
			kids[nleaves++] = kids[k]; /* nleaves <= k: the inner ones are done */
	}
	qsort_r(kids, nleaves, sizeof(*kids), leaf_cmp, t);
	for (size_t g = 0, e; g < nleaves; g = e) {
		uint64_t oldest = 0;

		for (e = g + 1; e < nleaves && !leaf_key_cmp(t, &t->c[kids[g]], &t->c[kids[e]]);
		     e++)
			t->done[kids[e]] = true;
		t->done[kids[g]] = true;
		for (size_t k = g; k < e; k++)
			if (t->c[kids[k]].init_ns && (!oldest || t->c[kids[k]].init_ns < oldest))
				oldest = t->c[kids[k]].init_ns;
		if (e - g == 1)
			fprintf(out, "%*s0x%" PRIx64 " ", indent, "", t->c[kids[g]].addr);
		else
			fprintf(out, "%*s[%zu closures, first 0x%" PRIx64 "] ", indent, "", e - g,
				t->c[kids[g]].addr);
		print_body(out, t, kids[g], oldest, e - g > 1);
	}
	free(kids);
}

static void print_node(FILE *out, struct tree *t, size_t i, int depth)
{
	int indent = 2 * (depth < MAX_INDENT ? depth : MAX_INDENT);

	t->done[i] = true;
	fprintf(out, "%*s0x%" PRIx64 " ", indent, "", t->c[i].addr);
	print_body(out, t, i, t->c[i].init_ns, false);
	print_waits(out, t, i, indent);
	if (t->nchildren[i] && depth < MAX_DEPTH)
		print_children(out, t, (long)i, depth + 1);
}

static void print_header(FILE *out, const struct ps_view *v)
{
	const struct live_list *l = v->list;
	char shown[PATH_MAX * TEXT_ESCAPE_MAX];

	fprintf(out, "process %d (%s): %zu live closure%s", (int)v->pid,
		text_visible(shown, sizeof(shown), v->exe), l->n, l->n == 1 ? "" : "s");
	if (strcmp(l->library, v->exe))
		fprintf(out, ", listed by %s", text_visible(shown, sizeof(shown), l->library));
	fputc('\n', out);
	if (l->too_long)
		fprintf(out,
			"note: the list is longer than closuretrace reads: only the first %zu "
			"closures are shown\n",
			l->n);
	else if (!l->complete)
		fprintf(out, "note: the list changed faster than it could be followed: only the "
			     "closures shown were read\n");
	else if (!l->consistent)
		fprintf(out, "note: the list changed while it was read: closures initialised or "
			     "finished meanwhile may be missing or shown\n");
}

void ps_print_text(FILE *out, const struct ps_view *v)
{
	struct tree t;

	print_header(out, v);
	if (tree_build(&t, v)) {
		tree_free(&t);
		fprintf(out, "(out of memory)\n");
		return;
	}
	print_children(out, &t, -1, 0);
	/* What no root leads to: a cycle of parents (a list read while it changed), deep chains. */
	for (size_t i = 0; i < t.n; i++)
		if (!t.done[i])
			print_node(out, &t, i, 0);
	tree_free(&t);
}

/* --- JSON --- */

static json_t *hex(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

static json_t *or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* {"addr","func","file","line"}; addr is the address stored (a return address for sites). */
static json_t *sym_json(struct tree *t, uint64_t addr, bool is_return)
{
	const struct rsym *s = is_return ? call_site(t, addr) : resolve(t, addr);

	return json_pack("{s:o,s:o,s:o,s:o}", "addr", hex(addr), "func", or_null(s->func), "file",
			 or_null(s->file), "line", s->line ? json_integer(s->line) : json_null());
}

static json_t *flags_json(const struct tree *t, size_t i)
{
	const struct closure_debug_info *d = &t->v->list->info;
	json_t *a = json_array();

	if (t->c[i].queued)
		json_array_append_new(a, json_string("queued"));
	if (has_flag(t, i, d->flag_running))
		json_array_append_new(a, json_string("running"));
	if (has_flag(t, i, d->flag_sleeping))
		json_array_append_new(a, json_string("sleeping"));
	if (has_flag(t, i, d->flag_waiting))
		json_array_append_new(a, json_string("waiting"));
	if (has_flag(t, i, d->flag_destructor))
		json_array_append_new(a, json_string("destructor"));
	return a;
}

/* Nanoseconds since a library time stamp, or null when not known. */
static json_t *ns_json(const struct tree *t, uint64_t at)
{
	return at ? json_integer((json_int_t)since(t, at)) : json_null();
}

static json_t *node_json(struct tree *t, size_t i, int depth)
{
	const struct live_closure *c = &t->c[i];
	const struct closure_debug_info *d = &t->v->list->info;
	json_t *kids = json_array(), *sync = json_null(), *wait = json_null();

	t->done[i] = true;
	json_t *o;

	if (c->sync_ip && has_flag(t, i, d->flag_sleeping))
		sync = json_pack("{s:o,s:I,s:o}", "site", sym_json(t, c->sync_ip, true), "tid",
				 (json_int_t)c->sync_tid, "waiting_ns", ns_json(t, c->sync_ns));
	if (c->waitlist && has_flag(t, i, d->flag_waiting))
		wait = json_pack("{s:o,s:o,s:o}", "addr", hex(c->waitlist), "site",
				 sym_json(t, c->waiting_on, true), "waiting_ns",
				 ns_json(t, c->wait_ns));
	for (long k = t->first_child[i]; depth < MAX_DEPTH && k >= 0; k = t->next_sibling[k])
		if (!t->done[k])
			json_array_append_new(kids, node_json(t, (size_t)k, depth + 1));
	o = json_pack("{s:o,s:I,s:o,s:b,s:o,s:o,s:o,s:o,s:o,s:o}", "addr", hex(c->addr), "count",
		      (json_int_t)count_of(t, i), "flags", flags_json(t, i), "stack", c->stack,
		      "parent", c->parent ? hex(c->parent) : json_null(), "fn",
		      c->fn ? sym_json(t, c->fn, false) : json_null(), "site",
		      sym_json(t, c->ip, true), "sync", sync, "waitlist", wait, "children", kids);
	/* "site" is the last one (init or continuation); "init" where it was initialised. */
	if (o) {
		json_object_set_new(o, "init",
				    c->init_ip ? sym_json(t, c->init_ip, true) : json_null());
		json_object_set_new(o, "age_ns", ns_json(t, c->init_ns));
		json_object_set_new(o, "last_ns", ns_json(t, c->ip_ns));
	}
	return o;
}

int ps_print_json(FILE *out, const struct ps_view *v)
{
	const struct live_list *l = v->list;
	json_t *roots = json_array(), *doc;
	struct tree t;
	int ret = -1;

	if (!tree_build(&t, v)) {
		for (size_t i = 0; i < t.n; i++)
			if (t.parent[i] < 0 && !t.done[i])
				json_array_append_new(roots, node_json(&t, i, 0));
		for (size_t i = 0; i < t.n; i++)
			if (!t.done[i])
				json_array_append_new(roots, node_json(&t, i, 0));
		/* The paths the process chose, any bytes: shown as every name is (json_value.h). */
		doc = json_pack("{s:i,s:o,s:o,s:I,s:b,s:b,s:o}", "pid", (int)v->pid, "exe",
				json_text(v->exe), "library", json_text(l->library), "count",
				(json_int_t)l->n, "consistent", l->consistent, "complete",
				l->complete, "closures", roots);
		roots = NULL;
		/* On one line: indentation grows with the depth, a deep chain's with its square (a
		 * 40,000 chain took 2.3 GB); `jq .` shows it indented. */
		if (doc && !json_value_write(out, doc, 0, 0) && fputc('\n', out) != EOF)
			ret = 0;
		json_decref(doc);
	}
	json_decref(roots);
	tree_free(&t);
	return ret;
}
