/* The numbers and the text of top's frames: see top_view.h. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "hashmap.h"
#include "leaks.h"
#include "model.h"
#include "objects.h"
#include "symbols.h"
#include "top_view.h"
#include "trace_text.h"
#include "trace_args.h"
#include "trace_reader.h"

/* The suspect rule is the verdicts' (viz/leaks.h: LEAKS_SUSPECT_*, docs/design.md "What a leak
 * is"). */

/* Events this much older than the newest are applied: none can still arrive before them. */
#define FLUSH_LAG_NS 250000000LL

/*
 * One row: the closures initialised on one source line (the compiler may put one line's call at
 * several addresses); the row without a label holds those created before top started (without
 * a live list: with one, top begins with the closures alive at attach, each on its own row).
 */
struct site_row {
	char label[256]; /* "file:line (func)"; "" for the closures created before top started */
	bool stack;	 /* closure_init_stack: left out (a stack closure may never finish) */
	uint64_t created, created_prev;
	uint64_t finished, finished_prev;
	uint64_t in_flight, suspects;
	int64_t oldest_ts; /* start of its oldest closure in flight; INT64_MAX: none */
	double new_rate, done_rate;
	const struct model_kind *kind; /* its kind with the most finished closures */
	uint64_t p50, p99;	       /* that kind's lifetimes */
	unsigned nkinds;	       /* kinds (continuations) of the row with finished ones */
	uint64_t live_fn; /* without a finished kind: a continuation of one in flight */
};

/* An init site's row: open addressing on the address. */
/* A kind's lifetimes, taken once per frame, with its row. */
struct kind_stat {
	const struct model_kind *k;
	const struct site_row *row;
	uint64_t p50, p99;
};

struct top_view {
	pid_t pid;
	uint32_t sample_every; /* --sample N: the frames are of one tree in N (0: every tree) */
	uint64_t start_ns, last_ns, now_ns;
	uint64_t seq, events, events_prev;
	double event_rate;
	struct model *model;
	struct objects objs;
	struct symbols *syms;
	bool rescanned; /* the maps were read again this frame */
	struct site_row **rows;
	size_t nrows, caprows;
	struct hashmap ips; /* init site -> its row (struct site_row *) */
	struct kind_stat *kinds;
	size_t nkinds, capkinds;
	uint64_t in_flight, suspects;
	int64_t horizon; /* the model is complete up to here (ns since start) */
};

static void site_label(struct top_view *v, uint64_t ip, char *buf, size_t size);

void top_view_sample(struct top_view *v, uint32_t every)
{
	v->sample_every = every;
}

struct top_view *top_view_new(pid_t pid, uint64_t start_ns)
{
	struct top_view *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->pid = pid;
	v->start_ns = v->last_ns = v->now_ns = start_ns;
	hashmap_init(&v->ips, sizeof(struct site_row *));
	v->model = model_new(false);
	v->syms = symbols_new();
	if (!v->model || !v->syms) {
		top_view_free(v);
		return NULL;
	}
	objects_scan_maps(&v->objs, pid);
	for (size_t i = 0; i < v->objs.n; i++)
		if (v->objs.v[i].elf)
			symbols_add_object(v->syms, v->objs.v[i].path, v->objs.v[i].file,
					   v->objs.v[i].bias);
	return v;
}

void top_view_free(struct top_view *v)
{
	if (!v)
		return;
	if (v->model)
		model_free(v->model);
	symbols_free(v->syms);
	objects_free(&v->objs);
	for (size_t i = 0; i < v->nrows; i++)
		free(v->rows[i]);
	free(v->rows);
	hashmap_free(&v->ips);
	free(v->kinds);
	free(v);
}

void top_view_begin(struct top_view *v, uint64_t now_ns)
{
	v->start_ns = v->last_ns = v->now_ns = now_ns;
}

/* The row of a label, made when new. */
static struct site_row *row_named(struct top_view *v, const char *label)
{
	struct site_row *r;

	for (size_t i = 0; i < v->nrows; i++)
		if (!strcmp(v->rows[i]->label, label))
			return v->rows[i];
	if (v->nrows == v->caprows) {
		size_t cap = v->caprows ? 2 * v->caprows : 32;
		struct site_row **rows = realloc(v->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		v->rows = rows;
		v->caprows = cap;
	}
	if (!(r = calloc(1, sizeof(*r))))
		return NULL;
	snprintf(r->label, sizeof(r->label), "%s", label);
	r->oldest_ts = INT64_MAX;
	return v->rows[v->nrows++] = r;
}

/* The row of an init site (0: created before top started), its label resolved once. */
static struct site_row *row_of(struct top_view *v, uint64_t ip)
{
	struct site_row **known = hashmap_get(&v->ips, ip, 0), *r;
	char label[256] = "";

	if (known)
		return *known;
	if (ip)
		site_label(v, ip, label, sizeof(label));
	if (!(r = row_named(v, label)))
		return NULL;
	*(struct site_row **)hashmap_put(&v->ips, ip, 0, NULL) = r;
	return r;
}

void top_view_event(void *ctx, const struct ct_event *e, uint32_t pid)
{
	struct top_view *v = ctx;
	struct trace_event t;

	if (!trace_event_from_record(e, v->start_ns, pid, &t))
		return; /* as the writer writes it, the reader reads */
	v->seq++;
	v->events++;
	if (e->kind == CT_INIT) {
		struct site_row *r = row_of(v, e->ip);

		if (r && e->x5)
			r->stack = true;
		else if (r && !(e->pad & CT_EVENT_SNAPSHOT))
			r->created++; /* a snapshot's init was alive at attach: created before */
	}
	t.seq = v->seq;
	model_sink.event(v->model, &t);
}

/* By row, then continuation, then most finished first: a lookup finds a kind's best peer. */
static int kind_cmp(const void *a, const void *b)
{
	const struct kind_stat *x = a, *y = b;

	if (x->row != y->row)
		return (uintptr_t)x->row < (uintptr_t)y->row ? -1 : 1;
	if (x->k->fn != y->k->fn)
		return x->k->fn < y->k->fn ? -1 : 1;
	return x->k->finished > y->k->finished ? -1 : x->k->finished < y->k->finished;
}

/* The kind of row with continuation fn that has the most finished closures, or NULL. */
static const struct kind_stat *kind_find(const struct top_view *v, const struct site_row *row,
					 uint64_t fn)
{
	size_t lo = 0, hi = v->nkinds;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct kind_stat *k = &v->kinds[mid];

		if ((uintptr_t)k->row < (uintptr_t)row || (k->row == row && k->k->fn < fn))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->nkinds && v->kinds[lo].row == row && v->kinds[lo].k->fn == fn ? &v->kinds[lo]
										     : NULL;
}

/* The kinds with their percentiles and rows, sorted for kind_find; each row's finished count. */
static void take_kinds(struct top_view *v)
{
	v->nkinds = 0;
	for (const struct model_kind *k = model_kinds(v->model); k; k = k->next) {
		struct kind_stat *s;
		struct site_row *r;

		if (!k->finished || !(r = row_of(v, k->init_ip)))
			continue;
		if (v->nkinds == v->capkinds) {
			size_t cap = v->capkinds ? 2 * v->capkinds : 32;

			if (!(s = realloc(v->kinds, cap * sizeof(*s))))
				break;
			v->kinds = s;
			v->capkinds = cap;
		}
		s = &v->kinds[v->nkinds++];
		*s = (struct kind_stat){k, r, model_kind_percentile(k, 50),
					model_kind_percentile(k, 99)};
		r->finished += k->finished;
		r->nkinds++;
		/* Named by the kind with a continuation (closures alive at attach have none known),
		 * the one with most finished among those. */
		if (!r->kind || (k->fn && !r->kind->fn) ||
		    (!k->fn == !r->kind->fn && k->finished > r->kind->finished)) {
			r->kind = k;
			r->p50 = s->p50;
			r->p99 = s->p99;
		}
	}
	if (v->nkinds) /* none yet: v->kinds is NULL, which qsort may not be given */
		qsort(v->kinds, v->nkinds, sizeof(*v->kinds), kind_cmp);
}

/* A closure in flight far longer than the finished closures of its kind (the verdicts' rule). */
static bool is_suspect(const struct top_view *v, const struct model_life *l,
		       const struct site_row *r, uint64_t age)
{
	const struct kind_stat *s;

	if (l->before_recording || !l->init_ip)
		return false;
	s = kind_find(v, r, l->first_fn);
	return s && leaks_outlived(age, s->k->finished, r->in_flight, s->p99, s->k->max_ns);
}

/*
 * The row of a closure in flight, or NULL for one that is not: reused (its address was
 * initialised again, so it is over, its end unseen), no_init (events that reached the trace after
 * their closure finished), a stack closure.
 */
static struct site_row *in_flight_row(struct top_view *v, const struct model_life *l)
{
	if (l->finished || l->reused || l->no_init || l->stack)
		return NULL;
	return row_of(v, l->before_recording ? 0 : l->init_ip);
}

/* Once every row knows its closures in flight (the rule compares them with the finished). */
static void judge_suspects(struct top_view *v, int64_t now)
{
	for (struct model_life *l = model_lives(v->model); l; l = l->next) {
		struct site_row *r = in_flight_row(v, l);

		if (r &&
		    is_suspect(v, l, r, now > l->start_ts ? (uint64_t)(now - l->start_ts) : 0)) {
			r->suspects++;
			v->suspects++;
		}
	}
}

static int row_cmp(const void *a, const void *b)
{
	const struct site_row *x = *(struct site_row *const *)a, *y = *(struct site_row *const *)b;

	if (x->in_flight != y->in_flight)
		return x->in_flight > y->in_flight ? -1 : 1;
	if (x->created != y->created)
		return x->created > y->created ? -1 : 1;
	return strcmp(x->label, y->label);
}

void top_view_update(struct top_view *v, uint64_t now_ns)
{
	double secs = (double)(now_ns - v->last_ns) / 1e9;
	/*
	 * The model is complete up to the horizon: a closure's age is taken there, or one that
	 * finished in the last FLUSH_LAG_NS would look that much older than it is.
	 */
	int64_t now = (int64_t)(now_ns - v->start_ns) - FLUSH_LAG_NS;

	model_flush(v->model, now);
	v->horizon = now;
	v->rescanned = false;
	for (size_t i = 0; i < v->nrows; i++) {
		struct site_row *r = v->rows[i];

		r->finished = r->in_flight = r->suspects = r->live_fn = 0;
		r->oldest_ts = INT64_MAX;
		r->kind = NULL;
		r->nkinds = 0;
	}
	take_kinds(v);
	v->in_flight = v->suspects = 0;
	for (struct model_life *l = model_lives(v->model); l; l = l->next) {
		struct site_row *r = in_flight_row(v, l);

		if (!r)
			continue;
		r->in_flight++;
		v->in_flight++;
		if (l->start_ts < r->oldest_ts)
			r->oldest_ts = l->start_ts;
		if (!r->live_fn)
			r->live_fn = l->first_fn;
	}
	judge_suspects(v, now);
	for (size_t i = 0; i < v->nrows; i++) {
		struct site_row *r = v->rows[i];

		r->new_rate = secs > 0 ? (double)(r->created - r->created_prev) / secs : 0;
		r->done_rate = secs > 0 && r->finished >= r->finished_prev
				       ? (double)(r->finished - r->finished_prev) / secs
				       : 0;
		r->created_prev = r->created;
		r->finished_prev = r->finished;
	}
	v->event_rate = secs > 0 ? (double)(v->events - v->events_prev) / secs : 0;
	v->events_prev = v->events;
	if (v->nrows)
		qsort(v->rows, v->nrows, sizeof(*v->rows), row_cmp);
	v->last_ns = v->now_ns = now_ns;
}

/* "850ns", "3.1us", "12ms", "1.2s", "3m05s": at most 6 characters. */
static const char *fmt_dur(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.*fus", ns < 10000 ? 1 : 0, (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.*fms", ns < 10000000 ? 1 : 0, (double)ns / 1e6);
	else if (ns < 60000000000ull)
		snprintf(buf, size, "%.*fs", ns < 10000000000ull ? 1 : 0, (double)ns / 1e9);
	else
		snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", ns / (uint64_t)60000000000,
			 ns / (uint64_t)1000000000 % 60);
	return buf;
}

/* "file:line (func)" with the file's last component, else "func", else the address. */
static void site_label(struct top_view *v, uint64_t ip, char *buf, size_t size)
{
	struct sym_info s;
	bool known = symbols_resolve(v->syms, ip, &s);
	char raw[4096];

	if (!known && !v->rescanned) {
		/* A library loaded since: learn the maps again, once a frame. */
		v->rescanned = true;
		if (objects_scan_maps(&v->objs, v->pid) > 0)
			for (size_t i = 0; i < v->objs.n; i++)
				if (v->objs.v[i].elf)
					symbols_add_object(v->syms, v->objs.v[i].path,
							   v->objs.v[i].file, v->objs.v[i].bias);
		known = symbols_resolve(v->syms, ip, &s);
	}
	if (known && s.file && s.line) {
		const char *base = strrchr(s.file, '/');

		snprintf(raw, sizeof(raw), "%s:%d (%s)", base ? base + 1 : s.file, s.line,
			 s.func ? s.func : "?");
	} else if (known && s.func) {
		snprintf(raw, sizeof(raw), "%s", s.func);
	} else {
		snprintf(raw, sizeof(raw), "0x%" PRIx64, ip);
	}
	text_visible(buf, size, raw); /* the process's names: nothing acts on the terminal */
}

/* The continuation of a row's kind: " -> fn", " -> fn +N" with other kinds, "" with none (yet). */
static void kind_text(struct top_view *v, const struct site_row *r, char *buf, size_t size)
{
	uint64_t fn = r->kind && r->kind->fn ? r->kind->fn : r->live_fn;
	struct sym_info s;
	char func[4096];

	buf[0] = '\0';
	/* No continuation: named by its init function alone, as in every presentation. */
	if (fn && symbols_resolve(v->syms, fn, &s) && s.func)
		text_snprintf(buf, size, " -> %s", text_visible(func, sizeof(func), s.func));
	else if (fn)
		snprintf(buf, size, " -> 0x%" PRIx64, fn);
	if (r->nkinds > 1)
		snprintf(buf + strlen(buf), size - strlen(buf), " +%u", r->nkinds - 1);
}

/*
 * A row's kind as every presentation names it (model_life_function): "init_func -> cont", then
 * its init site: "func -> cont (file:line)". The label is "file:line (func)" when both are known.
 */
static void name_of(const struct site_row *r, bool before, const char *kind, char *buf, size_t size)
{
	const char *open = strrchr(r->label, '(');
	size_t n = strlen(r->label);

	if (before)
		text_snprintf(buf, size, "(created before top started)%s", kind);
	else if (open && open > r->label + 1 && open[-1] == ' ' && r->label[n - 1] == ')')
		text_snprintf(buf, size, "%.*s%s (%.*s)", (int)(r->label + n - 1 - open - 1),
			      open + 1, kind, (int)(open - 1 - r->label), r->label);
	else
		text_snprintf(buf, size, "%s%s", r->label, kind);
}

/* Prints one line cut to cols characters (0: whole), never inside one. */
static void put_line(FILE *out, int cols, const char *line)
{
	size_t len = 0;

	for (int n = 0; line[len] && (cols <= 0 || n < cols); n++)
		do
			len++;
		while (((unsigned char)line[len] & 0xc0) == 0x80);
	fprintf(out, "%.*s\n", (int)len, line);
}

static void print_row(struct top_view *v, FILE *out, int cols, const struct site_row *r)
{
	char line[1024], oldest[16], p50[16], p99[16], kind[300], name[600];
	int64_t now = (int64_t)(v->now_ns - v->start_ns);
	bool before = !r->label[0];

	kind_text(v, r, kind, sizeof(kind));
	if (r->oldest_ts == INT64_MAX)
		snprintf(oldest, sizeof(oldest), "-");
	else if (before)
		/* created before top started: at least this old */
		snprintf(oldest, sizeof(oldest), ">%s",
			 fmt_dur(p50, sizeof(p50), (uint64_t)(now > 0 ? now : 0)));
	else
		fmt_dur(oldest, sizeof(oldest),
			(uint64_t)(v->horizon > r->oldest_ts ? v->horizon - r->oldest_ts : 0));
	/* Lives seen only after they began have no true lifetime: none is shown for them. */
	if (!before && r->kind) {
		fmt_dur(p50, sizeof(p50), r->p50);
		fmt_dur(p99, sizeof(p99), r->p99);
	} else {
		snprintf(p50, sizeof(p50), "-");
		snprintf(p99, sizeof(p99), "-");
	}
	name_of(r, before, kind, name, sizeof(name));
	text_snprintf(line, sizeof(line), "%c%9" PRIu64 " %8.0f %8.0f %7s %7s %7s %5" PRIu64 "  %s",
		      r->suspects ? '!' : ' ', r->in_flight, r->new_rate, r->done_rate, oldest, p50,
		      p99, r->suspects, name);
	put_line(out, cols, line);
}

static bool row_shown(const struct site_row *r)
{
	return !r->stack && (r->in_flight || r->created || r->finished);
}

void top_view_print(struct top_view *v, FILE *out, int rows, int cols)
{
	char line[512], up[16], sampled[64];
	size_t kinds = 0, shown = 0;
	double created = 0, finished = 0;
	int budget = rows > 0 ? rows - 4 : -1;

	for (size_t i = 0; i < v->nrows; i++) {
		if (!row_shown(v->rows[i]))
			continue;
		kinds++;
		created += v->rows[i]->new_rate;
		finished += v->rows[i]->done_rate;
	}
	if (v->sample_every) /* counts of the trees seen, never scaled */
		snprintf(sampled, sizeof(sampled), " (sampled: one tree in %u, not scaled)",
			 v->sample_every);
	snprintf(line, sizeof(line),
		 "closuretrace top - pid %d, %s, %" PRIu64 " events (%.0f/s), %zu kind%s",
		 (int)v->pid, fmt_dur(up, sizeof(up), v->now_ns - v->start_ns), v->events,
		 v->event_rate, kinds, kinds == 1 ? "" : "s");
	put_line(out, cols, line);
	snprintf(line, sizeof(line),
		 "in flight %" PRIu64 ", created %.0f/s, finished %.0f/s, suspects %" PRIu64 "%s",
		 v->in_flight, created, finished, v->suspects, v->sample_every ? sampled : "");
	put_line(out, cols, line);
	put_line(out, cols, "");
	put_line(out, cols,
		 " IN FLIGHT    NEW/s   DONE/s  OLDEST     P50     P99  SUSP  KIND (init function "
		 "-> "
		 "continuation, init site)");
	for (size_t i = 0; i < v->nrows && (budget < 0 || (int)shown < budget); i++) {
		if (!row_shown(v->rows[i]))
			continue;
		print_row(v, out, cols, v->rows[i]);
		shown++;
	}
	if (v->suspects && (budget < 0 || (int)shown < budget)) {
		snprintf(line, sizeof(line),
			 "! suspects: in flight over %dx the p99 and %dx the max lifetime of %d or "
			 "more finished closures of their kind (no fewer than in flight)",
			 LEAKS_SUSPECT_P99, LEAKS_SUSPECT_MAX, LEAKS_SUSPECT_MIN_FINISHED);
		put_line(out, cols, line);
	}
}
