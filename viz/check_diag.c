/* Diagnostics from the model's verdicts: see check_diag.h. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check_diag.h"
#include "source_path.h"
#include "trace_text.h"
#include "viz.h"

#define MAX_CHAIN 4 /* parents named, nearest first */

static void add_note(struct check_diag *d, struct model *m, uint64_t ip, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_note(struct check_diag *d, struct model *m, uint64_t ip, const char *fmt, ...)
{
	struct check_note *n;
	va_list ap;

	if (d->nnotes == CHECK_MAX_NOTES)
		return;
	n = &d->notes[d->nnotes++];
	n->at = check_site_at(m, ip);
	va_start(ap, fmt);
	text_vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
}

/* "the leaked closure (bio_endio) was initialised here, in request_dispatch" and its like. */
static void note_init(struct check_diag *d, struct model *m, const struct model_life *l,
		      const char *what)
{
	char fn[256];

	if (!l->init_ip) {
		add_note(d, m, 0, "%s (%s) was created before recording began", what,
			 model_life_function(m, l, fn, sizeof(fn)));
		return;
	}
	add_note(d, m, l->init_ip, "%s (%s) was initialised here%s%s", what,
		 model_life_function(m, l, fn, sizeof(fn)), d->init.func ? ", in " : "",
		 d->init.func ? d->init.func : "");
}

/* The unfinished parents this closure keeps alive, nearest first. */
static void note_parents(struct check_diag *d, struct model *m, const struct model_life *l)
{
	char fn[256];
	unsigned n = 0;

	for (const struct model_life *p = l->parent; p && p != l && !p->finished; p = p->parent) {
		if (n++ == MAX_CHAIN) {
			add_note(d, m, 0, "... and further parents up to its root");
			return;
		}
		add_note(d, m, p->init_ip, "it keeps alive %s parent (%s), %s",
			 n == 1 ? "its" : "that closure's",
			 model_life_function(m, p, fn, sizeof(fn)),
			 p->init_ip ? "initialised here" : "created before recording began");
	}
}

/*
 * A stuck closure that waits behind a root of the hang (leaks.h) and for no reference of its own
 * is a note under that root's error, where it waits: the error is where the fix goes.
 */
static bool told_under_root(const struct model_life *l)
{
	return l->stuck && l->behind && !leaks_stuck_culprit(l);
}

/* The stuck closures told under roots: by root, then by where they wait. */
struct waiter {
	const struct model_life *root;
	uint64_t site;
	bool syncing;
};
struct waiters {
	struct waiter *v;
	size_t n;
};

static int by_root(const void *pa, const void *pb)
{
	const struct waiter *a = pa, *b = pb;

	if (a->root != b->root)
		return (uintptr_t)a->root < (uintptr_t)b->root ? -1 : 1;
	if (a->syncing != b->syncing)
		return a->syncing ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

static int waiters_collect(struct model *m, struct waiters *w)
{
	size_t n = 0;

	for (struct model_life *l = model_lives(m); l; l = l->next)
		n += !l->finished && told_under_root(l);
	w->n = 0;
	w->v = n ? calloc(n, sizeof(*w->v)) : NULL;
	if (n && !w->v)
		return -1;
	for (struct model_life *l = model_lives(m); l && w->n < n; l = l->next)
		if (!l->finished && told_under_root(l))
			w->v[w->n++] =
				(struct waiter){l->behind, leaks_wait_site(l),
						l->state == MODEL_SYNCING && !l->on_waitlist};
	if (w->n > 1)
		qsort(w->v, w->n, sizeof(*w->v), by_root);
	return 0;
}

/* "5 stuck closures wait here, on a waitlist": one note per place the root's waiters wait. */
static void note_waiters(struct check_diag *d, struct model *m, const struct model_life *root,
			 const struct waiters *w)
{
	struct waiter key = {root, 0, true};
	size_t lo = 0, hi = w->n;

	while (lo < hi) { /* the first of root's */
		size_t mid = lo + (hi - lo) / 2;

		if (by_root(&w->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, j; i < w->n && w->v[i].root == root; i = j) {
		for (j = i; j < w->n && !by_root(&w->v[j], &w->v[i]); j++)
			;
		add_note(d, m, w->v[i].site, "%zu stuck closure%s wait%s here, %s", j - i,
			 j - i == 1 ? "" : "s", j - i == 1 ? "s" : "",
			 w->v[i].syncing ? "inside closure_sync" : "on a waitlist (closure_wait)");
	}
}

static void describe_leak(struct check_diag *d, struct model *m, const struct model_life *l,
			  const struct waiters *w)
{
	char why[512], quiet[32];

	d->rule = CHECK_LEAK;
	d->at = check_site_at(m, leaks_blamed_site(l));
	d->hang_root = l->hang_root;
	if (l->hang_root)
		text_snprintf(d->message, sizeof(d->message), "closure never finished, the %s: %s",
			      leaks_word_text(LEAKS_WORD_HANG_ROOT),
			      leaks_blame_text(m, &l->blames[0], why, sizeof(why)));
	else if (l->nblames)
		text_snprintf(d->message, sizeof(d->message), "closure leaked: %s",
			      leaks_blame_text(m, &l->blames[0], why, sizeof(why)));
	else if (l->remaining < 0) /* named as a parent only */
		snprintf(d->message, sizeof(d->message),
			 "closure leaked: created before recording, its count never seen");
	else
		snprintf(d->message, sizeof(d->message),
			 "closure leaked: %lld reference%s outstanding at exit",
			 (long long)l->remaining, l->remaining == 1 ? "" : "s");
	note_init(d, m, l, l->hang_root ? "the closure" : "the leaked closure");
	if (l->waiting_behind) { /* the count: other stuck closures may wait on something else */
		add_note(d, m, 0,
			 "%llu stuck closure%s wait%s behind it: quiet for %s before the process "
			 "was ended",
			 (unsigned long long)l->waiting_behind, l->waiting_behind == 1 ? "" : "s",
			 l->waiting_behind == 1 ? "s" : "",
			 model_duration_text(l->hang_quiet_ns, quiet, sizeof(quiet)));
		note_waiters(d, m, l, w);
	} else if (l->hang_root)
		add_note(d, m, 0,
			 "no closure is stuck: the program waits on something else; this closure "
			 "was "
			 "quiet for %s before the process was ended",
			 model_duration_text(l->hang_quiet_ns, quiet, sizeof(quiet)));
	for (unsigned i = 1; i < l->nblames; i++)
		add_note(d, m, l->blames[i].site, "also: %s",
			 leaks_blame_text(m, &l->blames[i], why, sizeof(why)));
	note_parents(d, m, l);
}

static void describe_stuck(struct check_diag *d, struct model *m, const struct model_life *l)
{
	char why[512], fn[256];
	const struct model_blame *culprit = leaks_stuck_culprit(l);
	/* A child's: "the child took ..." (get blames begin with a verb). */
	const char *whose = culprit && (culprit < l->blames || culprit >= l->blames + l->nblames)
				    ? "the child "
				    : "";
	uint64_t at = leaks_blamed_site(l);
	int64_t waits_for = l->held_other + l->held_children + l->held_waitlist;
	unsigned children = 0;

	d->rule = CHECK_STUCK;
	d->at = check_site_at(m, at);

	if (l->state == MODEL_SYNCING)
		snprintf(d->message, sizeof(d->message),
			 "closure stuck: inside closure_sync at exit, waiting for %lld %s%s%s%s",
			 (long long)waits_for, waits_for == 1 ? "reference" : "references",
			 culprit ? ": " : "", whose,
			 culprit ? leaks_blame_text(m, culprit, why, sizeof(why)) : "");
	else
		snprintf(d->message, sizeof(d->message),
			 "closure stuck: waits on a waitlist that was never woken%s%s%s",
			 culprit ? "; it holds references taken and never given back: " : "", whose,
			 culprit ? leaks_blame_text(m, culprit, why, sizeof(why)) : "");
	/* The error is where the reference was taken; where it waits is said beneath. */
	if (culprit)
		add_note(d, m, leaks_wait_site(l), "%s",
			 l->state == MODEL_SYNCING ? "it waits here, inside closure_sync"
						   : "it waits here, on the waitlist");
	note_init(d, m, l, "the stuck closure");
	for (const struct model_life *c = l->first_child; c; c = c->next_sibling) {
		if (c->finished || children++ >= MAX_CHAIN)
			continue;
		add_note(d, m, c->init_ip,
			 "it waits for an unfinished child (%s), initialised here",
			 model_life_function(m, c, fn, sizeof(fn)));
		/* the call site that holds the child: the put that never came (unless it is the
		 * error's own site) */
		if (c->nblames && c->blames[0].site != at)
			/* "the child took 2 references ...", "the child: the running reference
			 * ..." (a blame that starts with a noun) */
			add_note(d, m, c->blames[0].site,
				 c->blames[0].kind == BLAME_RUNNING ||
						 c->blames[0].kind == BLAME_WAITLIST
					 ? "the child: %s"
					 : "the child %s",
				 leaks_blame_text(m, &c->blames[0], why, sizeof(why)));
	}
	for (unsigned i = 0; i < l->nblames; i++)
		if (l->blames[i].site != at)
			add_note(d, m, l->blames[i].site, "%s",
				 leaks_blame_text(m, &l->blames[i], why, sizeof(why)));
	note_parents(d, m, l);
}

static struct check_diag *find_same(struct check_diags *out, const struct check_diag *d)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].rule == d->rule && !strcmp(out->v[i].key, d->key))
			return &out->v[i];
	return NULL;
}

/*
 * What makes two diagnostics the same: the places by file and line (by address when unknown: the
 * processes of one check each load the program at their own address) and what is said.
 */
static char *fold_key(struct model *m, const struct model_life *l, const struct check_diag *d)
{
	char at[512], init[512], *key;

	if (asprintf(&key, "%s|%s|%s|%s", model_site_text(m, leaks_blamed_site(l), at, sizeof(at)),
		     model_site_text(m, l->init_ip, init, sizeof(init)), d->closure,
		     d->message) < 0)
		return NULL;
	return key;
}

static int strcmp_null(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int by_place(const void *pa, const void *pb)
{
	const struct check_diag *a = pa, *b = pb;
	int c = strcmp_null(a->at.file, b->at.file);

	if (a->hang_root != b->hang_root) /* what the stuck ones wait behind: first */
		return a->hang_root ? -1 : 1;
	if (c)
		return c;
	if (a->at.line != b->at.line)
		return a->at.line < b->at.line ? -1 : 1;
	return strcmp(a->message, b->message);
}

int check_diags_collect(struct model *m, const struct leaks_summary *leaks, struct check_diags *out)
{
	struct waiters w;

	memset(out, 0, sizeof(*out));
	out->late = leaks->late;
	if (waiters_collect(m, &w))
		return -1;
	for (struct model_life *l = model_lives(m); l; l = l->next) {
		struct check_diag d = {0}, *same, *v;
		char fn[256];

		if (l->finished)
			continue;
		/* In flight: a recording cut short; told when stuck only. */
		if (!l->stuck && (l->verdict == VERDICT_IN_FLIGHT || l->verdict == VERDICT_SUSPECT))
			out->in_flight++;
		if ((!l->stuck && l->verdict != VERDICT_LEAKED) || told_under_root(l))
			continue;
		out->closures++;
		d.init = check_site_at(m, l->init_ip);
		d.count = 1;
		d.closure = model_life_function(m, l, fn, sizeof(fn));
		d.verdict = leaks_verdict_word(l);
		model_life_name(l, d.id, sizeof(d.id));
		if (l->stuck)
			describe_stuck(&d, m, l);
		else
			describe_leak(&d, m, l, &w);
		d.key = fold_key(m, l, &d);
		if (!d.key || check_diag_frames(&d, m, l)) {
			free(d.key);
			free(w.v);
			return -1;
		}
		same = find_same(out, &d);
		if (same) {
			same->count++;
			free(d.key);
			free(d.frames);
			continue;
		}
		d.closure = strdup(d.closure);
		v = realloc(out->v, (out->n + 1) * sizeof(*v));
		if (!v || !d.closure) {
			free(d.key);
			free(d.frames);
			free((char *)d.closure);
			free(w.v);
			return -1;
		}
		out->v = v;
		v[out->n++] = d;
	}
	free(w.v);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_place);
	return 0;
}

void check_verdict_begin(struct check_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->m = model_new(false); /* finished closures are folded into their kinds and forgotten */
}

int check_verdict_judge(struct check_verdict *v)
{
	/* Leaks only in a process that exited; a recording cut short has closures in flight. */
	viz_judge(v->m, &v->info, &v->leaks);
	if (check_diags_collect(v->m, &v->leaks, &v->diags)) {
		check_verdict_free(v);
		return -2;
	}
	return 0;
}

int check_judge(const char *path, struct check_verdict *v, struct trace_error *err)
{
	check_verdict_begin(v);
	if (trace_read(path, &model_sink, v->m, &v->info, err)) {
		check_verdict_free(v);
		return -1;
	}
	return check_verdict_judge(v);
}

void check_verdict_free(struct check_verdict *v)
{
	check_diags_free(&v->diags);
	model_free(v->m);
	trace_info_clear(&v->info);
	memset(v, 0, sizeof(*v));
}

void check_diags_free(struct check_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free((char *)d->v[i].closure);
		free(d->v[i].key);
		free(d->v[i].frames);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

void check_diags_suppress(struct check_diags *d, struct check_supp *supp)
{
	for (size_t i = 0; i < d->n; i++) {
		struct check_diag *g = &d->v[i];
		/* What an entry can name: the blamed site, the init site, the closure's function.
		 */
		struct check_site sites[3] = {g->at, g->init, {.func = g->closure}};
		struct supp_entry *e = check_supp_match(supp, g->rule, sites, 3);

		if (!e)
			continue;
		e->used += g->count - 1;
		g->suppressed = e;
		d->suppressed_closures += g->count;
	}
}

/* "file:line: ", "file: ", or "closuretrace: " where the place is not known. */
static void print_place(FILE *out, const struct check_site *s)
{
	if (!s->file)
		fputs("closuretrace: ", out);
	else if (s->line > 0)
		fprintf(out, "%s:%ld: ", check_site_file(s, false), s->line);
	else
		fprintf(out, "%s: ", check_site_file(s, false));
}

void check_diags_print(const struct check_diags *d, FILE *out)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct check_diag *g = &d->v[i];

		if (g->suppressed)
			continue;
		print_place(out, &g->at);
		fprintf(out, "error: %s", g->message);
		if (g->count > 1)
			fprintf(out, " [%u closures]", g->count);
		if (!g->at.file && g->at.func)
			fprintf(out, " (in %s)", g->at.func);
		fputc('\n', out);
		check_diag_print_frames(g, out);
		for (unsigned k = 0; k < g->nnotes; k++) {
			print_place(out, &g->notes[k].at);
			fprintf(out, "note: %s\n", g->notes[k].text);
		}
	}
}

/* A function name as a fun: pattern matches only itself: glob characters escaped. */
static void put_literal(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			fputc('\\', out);
		fputc(*s, out);
	}
}

unsigned check_diags_write_suppressions(const struct check_diags *d, FILE *out)
{
	unsigned n = 0;

	fputs("# closuretrace check --gen-suppressions: an entry for each error reported.\n"
	      "# Give this file to check with --suppressions FILE; keep the entries you mean.\n",
	      out);
	for (size_t i = 0; i < d->n; i++) {
		const struct check_diag *g = &d->v[i];
		const char *rule = g->rule == CHECK_STUCK ? "stuck" : "leak";
		const char *fun = g->at.func ? g->at.func : g->closure;

		if (g->suppressed)
			continue;
		fprintf(out, "# %s", g->message);
		if (g->count > 1)
			fprintf(out, " [%u closures]", g->count);
		fputc('\n', out);
		if (g->at.file && g->at.line > 0) {
			fprintf(out, "%s:site:%s:%ld\n", rule, check_site_file(&g->at, false),
				g->at.line);
		} else if (fun) {
			fprintf(out, "%s:fun:", rule);
			put_literal(out, fun);
			fputc('\n', out);
		} else {
			fputs("# (neither a line nor a function names it: not suppressible)\n",
			      out);
			continue;
		}
		n++;
	}
	return n;
}
