/* A trace as rows of the ClickHouse tables (export_rows.h). */
#include "export_rows.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check_diag.h"
#include "json_string.h"
#include "leaks.h"
#include "mem_limit.h"
#include "model.h"
#include "objects.h"
#include "viz.h"
#include "xalloc.h"

#define TXT 512
/* Modules named by the symbols, kept for the traces row; more are left out. */
#define MAX_MODULES 64

const char *export_table_name(enum export_table t)
{
	static const char *const names[] = {"events", "closures", "diagnostics", "traces"};
	return names[t];
}

struct export_trace {
	const char *path;
	char id[40];
	struct model *m; /* owned: the symbols from the first reading, the lives from the second */
	struct trace_info info;
	struct stat st;
	/* The trace's modules (its module records; in older traces, the objects its symbols name),
	 * each with the build id the recorder read, else the one its file has now. */
	char *modules[MAX_MODULES], *module_ids[MAX_MODULES];
	size_t nmodules;
	bool module_records; /* the modules come from module records */
	/* The second reading. */
	const struct export_meta *meta;
	export_row_fn *row;
	void *ctx;
	int stopped; /* row's non-zero */
	char host[256], run_id[64], build_id[OBJECT_BUILD_ID_MAX];
	uint64_t start_unix_ns;
	/* The row being written. */
	char *buf;
	size_t len, cap;
};

/* --- one JSON row, written by hand: every string as every name is shown (json_string.h,
 * JSON_SHOWN), so that ClickHouse holds the text report and check show, and the row is valid
 * JSON whatever bytes a name holds --- */

static void put(struct export_trace *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->buf = xrealloc(t->buf, t->cap);
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = 0;
}

static void put_s(struct export_trace *t, const char *s)
{
	put(t, s, strlen(s));
}

static void put_json(void *t, const char *s, size_t n)
{
	put(t, s, n);
}

static void put_string(struct export_trace *t, const char *s)
{
	json_string_write(put_json, t, s ? s : "", s ? strlen(s) : 0, JSON_SHOWN);
}

static void begin(struct export_trace *t)
{
	t->len = 0;
	put_s(t, "{\"trace_id\":");
	put_string(t, t->id);
}

/* ,"key": */
static void key(struct export_trace *t, const char *k)
{
	put(t, ",\"", 2);
	put_s(t, k);
	put(t, "\":", 2);
}

static void field_s(struct export_trace *t, const char *k, const char *v)
{
	key(t, k);
	put_string(t, v);
}

static void field_i(struct export_trace *t, const char *k, int64_t v)
{
	char num[32];

	key(t, k);
	put(t, num, (size_t)snprintf(num, sizeof(num), "%" PRId64, v));
}

static void field_u(struct export_trace *t, const char *k, uint64_t v)
{
	char num[32];

	key(t, k);
	put(t, num, (size_t)snprintf(num, sizeof(num), "%" PRIu64, v));
}

static void field_array(struct export_trace *t, const char *k, const char *const *v, size_t n)
{
	key(t, k);
	put(t, "[", 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(t, ",", 1);
		put_string(t, v[i]);
	}
	put(t, "]", 1);
}

static void end(struct export_trace *t, enum export_table table)
{
	put(t, "}", 1);
	if (!t->stopped)
		t->stopped = t->row(t->ctx, table, t->buf, t->len);
}

/* --- the facts --- */

/* A call site as the fleet's rows name it: "file:line" as report says it, the file relative to
 * its source root (source_path.h), so that checkouts in different places agree. */
static const char *site(struct model *m, uint64_t ip, char *buf, size_t len)
{
	if (!ip) {
		buf[0] = 0;
		return buf;
	}
	return model_site_text(m, ip, buf, len);
}

/* The source root a file is shown relative to, without its last '/' ("" when shown whole): with
 * a row's site, where its file lies on the host that recorded it. */
static void field_root(struct export_trace *t, const char *file, size_t root)
{
	key(t, "source_root");
	json_string_write(put_json, t, file ? file : "", file && root ? root - 1 : 0, JSON_SHOWN);
}

/* --- the first reading: the whole file checked, its symbols and modules kept --- */

/* Adds a module (once per path); build_id NULL: not known yet. */
static void add_module(struct export_trace *t, const char *path, const char *build_id)
{
	for (size_t i = 0; i < t->nmodules; i++)
		if (!strcmp(t->modules[i], path)) {
			if (!t->module_ids[i] && build_id && *build_id) {
				t->module_ids[i] = xcalloc(1, strlen(build_id) + 1);
				strcpy(t->module_ids[i], build_id);
			}
			return;
		}
	if (t->nmodules == MAX_MODULES)
		return;
	t->modules[t->nmodules] = xcalloc(1, strlen(path) + 1);
	strcpy(t->modules[t->nmodules], path);
	if (build_id && *build_id) {
		t->module_ids[t->nmodules] = xcalloc(1, strlen(build_id) + 1);
		strcpy(t->module_ids[t->nmodules], build_id);
	}
	t->nmodules++;
}

static void prepare_module(void *ctx, const struct trace_module *mod)
{
	struct export_trace *t = ctx;

	if (!t->module_records) { /* module records name every object: the symbols' go */
		for (size_t i = 0; i < t->nmodules; i++) {
			free(t->modules[i]);
			free(t->module_ids[i]);
			t->modules[i] = t->module_ids[i] = NULL;
		}
		t->nmodules = 0;
		t->module_records = true;
	}
	add_module(t, mod->path, mod->build_id);
}

static void prepare_sym(void *ctx, const struct trace_sym *sym)
{
	struct export_trace *t = ctx;

	model_sink.sym(t->m, sym);
	if (sym->obj && !t->module_records)
		add_module(t, sym->obj, NULL);
}

/* The build ids the trace does not give, from the files as they are now. */
static void fill_build_ids(struct export_trace *t)
{
	char id[OBJECT_BUILD_ID_MAX];

	for (size_t i = 0; i < t->nmodules; i++) {
		if (t->module_ids[i])
			continue;
		object_build_id(t->modules[i], id, sizeof(id));
		t->module_ids[i] = xcalloc(1, strlen(id) + 1);
		strcpy(t->module_ids[i], id);
	}
	t->build_id[0] = 0;
	for (size_t i = 0; i < t->nmodules && t->info.exe; i++)
		if (!strcmp(t->modules[i], t->info.exe))
			snprintf(t->build_id, sizeof(t->build_id), "%s", t->module_ids[i]);
	if (!t->build_id[0])
		object_build_id(t->info.exe, t->build_id, sizeof(t->build_id));
}

static void prepare_event(void *ctx, const struct trace_event *ev)
{
	(void)ctx;
	(void)ev;
}

/* FNV-1a over the file's bytes: the same trace file, the same id, wherever it is exported. */
static int hash_file(struct export_trace *t, struct trace_error *err)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned char buf[1 << 16];
	FILE *f = fopen(t->path, "rb");
	size_t n;

	if (!f || fstat(fileno(f), &t->st)) {
		trace_error_at(err, t->path, 0, "%s", strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ULL;
	if (ferror(f)) {
		trace_error_at(err, t->path, 0, "%s", strerror(errno));
		fclose(f);
		return -1;
	}
	fclose(f);
	snprintf(t->id, sizeof(t->id), "%016" PRIx64 "-%lld", h, (long long)t->st.st_size);
	return 0;
}

struct export_trace *export_prepare(const char *path, struct trace_error *err)
{
	static const struct trace_sink first = {
		.event = prepare_event, .sym = prepare_sym, .module = prepare_module};
	struct export_trace *t;

	if (!strcmp(path, "-")) {
		snprintf(err->text, sizeof(err->text),
			 "-: error: export reads its trace twice: give a file, not standard input");
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->path = path;
	t->m = model_new(false);
	if (hash_file(t, err) || trace_read(path, &first, t, &t->info, err)) {
		export_trace_free(t);
		return NULL;
	}
	return t;
}

void export_trace_free(struct export_trace *t)
{
	if (!t)
		return;
	model_free(t->m);
	trace_info_clear(&t->info);
	for (size_t i = 0; i < t->nmodules; i++) {
		free(t->modules[i]);
		free(t->module_ids[i]);
	}
	free(t->buf);
	free(t);
}

const char *export_trace_id(const struct export_trace *t)
{
	return t->id;
}

/* --- the second reading: the rows --- */

static void row_event(void *ctx, const struct trace_event *ev, struct model_life *l)
{
	struct export_trace *t = ctx;
	char buf[TXT], fl[8];

	begin(t);
	field_u(t, "seq", ev->seq);
	field_i(t, "ts", ev->ts);
	field_i(t, "pid", ev->pid ? ev->pid : t->info.pid);
	field_i(t, "tid", ev->tid);
	field_s(t, "op", trace_op_name(ev->op));
	field_s(t, "closure", l ? model_life_name(l, buf, sizeof(buf)) : "");
	field_i(t, "remaining", ev->remaining);
	field_s(t, "flags", ev->flags ? model_flags_text(ev->flags, fl) : "");
	field_s(t, "site", site(t->m, ev->ip, buf, sizeof(buf)));
	end(t, EXPORT_EVENTS);
}

/* The columns every row of a run carries, so that a query groups by them without a join. */
static void run_fields(struct export_trace *t)
{
	field_s(t, "host", t->host);
	field_s(t, "program", t->info.exe);
	field_s(t, "build_id", t->build_id);
	field_u(t, "start_unix_ns", t->start_unix_ns);
}

static void row_closure(struct export_trace *t, struct model_life *l)
{
	struct model *m = t->m;
	const struct model_sym *s;
	char buf[3 * TXT];
	bool blamed = !l->finished && (leaks_is_root_cause(l) || l->stuck);

	begin(t);
	field_u(t, "seq", l->seq);
	run_fields(t);
	field_i(t, "pid", l->pid ? l->pid : t->info.pid);
	field_s(t, "closure", model_life_name(l, buf, sizeof(buf)));
	field_s(t, "kind", l->kind ? model_kind_text(m, l->kind, buf, sizeof(buf)) : "");
	field_s(t, "init_site", site(m, l->init_ip, buf, sizeof(buf)));
	if ((s = model_sym(m, l->init_ip)) && s->file)
		field_root(t, s->file, model_sym_root(m, s));
	else
		field_root(t, NULL, 0);
	field_s(t, "continuation",
		l->first_fn ? model_func_text(m, l->first_fn, buf, sizeof(buf)) : "");
	/* The parent's name when it is known (joins with closures.closure), else its address. */
	if (l->parent)
		model_life_name(l->parent, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, l->parent_addr);
	field_s(t, "parent", l->parent_addr ? buf : "");
	field_i(t, "start_ns", l->start_ts);
	field_u(t, "lifetime_ns",
		l->finished ? (uint64_t)(l->end_ts - l->start_ts) : (uint64_t)l->age_ns);
	field_u(t, "finished", l->finished);
	field_s(t, "verdict", leaks_verdict_word(l));
	field_u(t, "stuck", !l->finished && l->stuck);
	field_s(t, "blame_site", blamed ? site(m, leaks_blamed_site(l), buf, sizeof(buf)) : "");
	field_s(t, "blame",
		blamed && l->nblames ? leaks_blame_name(l->blames[0].kind)
		: blamed	     ? "stuck"
				     : "");
	field_s(t, "sure", blamed && l->nblames ? leaks_sure_text(l->sure) : "");
	end(t, EXPORT_CLOSURES);
}

static void row_finished(void *ctx, struct model_life *l)
{
	row_closure(ctx, l);
}

static void row_diagnostics(struct export_trace *t, const struct check_diags *d)
{
	char buf[TXT];

	for (size_t i = 0; i < d->n; i++) {
		const struct check_diag *g = &d->v[i];

		begin(t);
		field_u(t, "seq", i);
		run_fields(t);
		field_s(t, "rule", g->rule == CHECK_LEAK ? "leak" : "stuck");
		if (g->at.file)
			snprintf(buf, sizeof(buf), "%s:%ld", check_site_file(&g->at, false),
				 g->at.line);
		field_s(t, "site", g->at.file ? buf : g->at.func ? g->at.func : "");
		field_root(t, g->at.file, g->at.root);
		field_s(t, "function", g->at.func ? g->at.func : "");
		if (g->init.file)
			snprintf(buf, sizeof(buf), "%s:%ld", check_site_file(&g->init, false),
				 g->init.line);
		field_s(t, "init_site", g->init.file ? buf : "");
		field_s(t, "closure", g->closure ? g->closure : "");
		field_s(t, "message", g->message);
		field_u(t, "closures", g->count);
		end(t, EXPORT_DIAGNOSTICS);
	}
}

static void row_trace(struct export_trace *t, const struct leaks_summary *s)
{
	const struct export_meta *meta = t->meta;
	const struct model_counts *n = model_counts(t->m);
	const char *keys[64], *values[64];
	size_t nl = meta->nlabels < 64 ? meta->nlabels : 64;

	for (size_t i = 0; i < nl; i++) {
		keys[i] = meta->labels[i].key;
		values[i] = meta->labels[i].value;
	}
	begin(t);
	field_u(t, "exported_at", (uint64_t)time(NULL));
	field_s(t, "host", t->host);
	field_s(t, "run_id", t->run_id);
	field_array(t, "label_keys", keys, nl);
	field_array(t, "label_values", values, nl);
	field_s(t, "program", t->info.exe);
	field_s(t, "build_id", t->build_id);
	field_array(t, "modules", (const char *const *)t->modules, t->nmodules);
	field_array(t, "module_build_ids", (const char *const *)t->module_ids, t->nmodules);
	field_i(t, "pid", t->info.pid);
	field_u(t, "start", t->start_unix_ns / 1000000000);
	field_u(t, "start_unix_ns", t->start_unix_ns);
	field_u(t, "duration_ns", (uint64_t)t->info.duration_ns);
	field_u(t, "events", n->events);
	field_u(t, "lost", (uint64_t)t->info.lost);
	field_s(t, "reason",
		t->info.reason	  ? t->info.reason
		: t->info.has_end ? trace_end_name(TRACE_END_EXIT)
				  : "");
	field_u(t, "complete", t->info.has_end && t->info.lost <= 0);
	field_u(t, "closures", n->lives);
	field_u(t, "finished", n->finished);
	field_u(t, "leaked", s->leaked);
	field_u(t, "hang_roots", s->hang_roots);
	field_u(t, "kept_alive", s->kept_alive);
	field_u(t, "stuck", s->stuck);
	field_u(t, "in_flight", s->in_flight);
	field_u(t, "suspects", s->suspects);
	field_u(t, "set_aside", s->late);
	end(t, EXPORT_TRACES);
}

/* When the recording started, on the wall clock: the trace holds monotonic times only, so the
 * file's last write (the end record, when the recording stopped) less the recording's length. */
static uint64_t start_unix_ns(const struct export_trace *t)
{
	uint64_t mtime =
		(uint64_t)t->st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)t->st.st_mtim.tv_nsec;
	uint64_t d = t->info.duration_ns > 0 ? (uint64_t)t->info.duration_ns : 0;

	return mtime > d ? mtime - d : 0;
}

static void skip_sym(void *ctx, const struct trace_sym *sym)
{
	(void)ctx;
	(void)sym;
}

static void feed_event(void *ctx, const struct trace_event *ev)
{
	model_sink.event(((struct export_trace *)ctx)->m, ev);
}

static void feed_header(void *ctx, const struct trace_info *info)
{
	model_sink.header(((struct export_trace *)ctx)->m, info);
}

int export_rows(struct export_trace *t, const struct export_meta *meta, export_row_fn *row,
		void *ctx, struct trace_error *err)
{
	static const struct trace_sink second = {
		.event = feed_event, .sym = skip_sym, .header = feed_header};
	static const struct model_observer observer = {.event = row_event,
						       .finished = row_finished};
	struct trace_info info = {0};
	struct leaks_summary leaks;
	struct check_diags diags = {0};
	struct stat now;

	t->meta = meta;
	t->row = row;
	t->ctx = ctx;
	t->stopped = 0;
	if (meta->host)
		snprintf(t->host, sizeof(t->host), "%s", meta->host);
	else if (gethostname(t->host, sizeof(t->host) - 1))
		snprintf(t->host, sizeof(t->host), "unknown");
	snprintf(t->run_id, sizeof(t->run_id), "%s", meta->run_id ? meta->run_id : t->id);
	fill_build_ids(t);
	t->start_unix_ns = start_unix_ns(t);

	/* What was checked is what is sent: a trace still being written is refused here. */
	if (stat(t->path, &now) || now.st_size != t->st.st_size ||
	    now.st_mtim.tv_sec != t->st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != t->st.st_mtim.tv_nsec) {
		trace_error_at(err, t->path, 0,
			       "the trace changed while it was read (is it still being recorded?)");
		return -1;
	}
	model_observe(t->m, &observer, t);
	if (trace_read(t->path, &second, t, &info, err)) {
		trace_info_clear(&info);
		return -1;
	}
	trace_info_clear(&info);
	if (t->stopped)
		return t->stopped;
	viz_judge(t->m, &t->info, &leaks);
	for (struct model_life *l = model_lives(t->m); l && !t->stopped; l = l->next)
		if (!l->finished)
			row_closure(t, l);
	if (check_diags_collect(t->m, &leaks, &diags)) {
		trace_error_at(err, t->path, 0, "out of memory%s", mem_limit_note());
		return -1;
	}
	row_diagnostics(t, &diags);
	check_diags_free(&diags);
	if (!t->stopped)
		row_trace(t, &leaks);
	return t->stopped;
}
