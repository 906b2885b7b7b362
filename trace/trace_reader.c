/*
 * The trace reader: JSON Lines in, one record at a time. Every line is parsed on its own, so an
 * error names its line and memory does not grow with the trace.
 * A line is split into its fields by trace_line.c (a fast strict parser, jansson for the rest).
 */
#include "trace_input.h"
#include "trace_reader.h"
#include "trace_args.h"
#include "trace_frames.h"
#include "trace_line.h"
#include "trace_text.h"

#include "mem_limit.h"

#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	const char *path;
	uint64_t line;
	const struct trace_sink *sink;
	void *ctx;
	struct trace_info *info;
	struct trace_error *err;
	bool seen_header;
	bool cut_tail; /* the input ended inside a line */
	uint64_t seq;
};

static const char *const op_names[TRACE_NR_OPS] = {
#define OP_NAME(name, NAME, a4, a5, a6) [TRACE_##NAME] = #name,
	CLOSURE_PROBE_LIST(OP_NAME)
#undef OP_NAME
};

const char *trace_op_name(enum trace_op op)
{
	return op < TRACE_NR_OPS ? op_names[op] : "?";
}

static __attribute__((format(printf, 2, 3))) int fail(struct reader *r, const char *fmt, ...)
{
	char msg[sizeof(r->err->text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return trace_error_at(r->err, r->path, (unsigned long)r->line, "%s", msg);
}

/* ---- decoding records ---- */

static bool key_is(const struct field *f, const char *key)
{
	return f->klen == strlen(key) && !memcmp(f->key, key, f->klen);
}

static const struct field *find(const struct field *fields, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (key_is(&fields[i], key))
			return &fields[i];
	return NULL;
}

static bool str_is(const struct field *f, const char *s)
{
	return f->kind == V_STR && f->slen == strlen(s) && !memcmp(f->s, s, f->slen);
}

static int want_int(struct reader *r, const struct field *f, long long *out)
{
	if (f->kind != V_INT)
		return fail(r, "\"%.*s\" must be an integer", (int)f->klen, f->key);
	*out = f->i;
	return 0;
}

static int want_addr(struct reader *r, const struct field *f, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (f->kind != V_STR || f->slen < 3 || f->slen > 18 || f->s[0] != '0' || f->s[1] != 'x')
		goto bad;
	for (i = 2; i < f->slen; i++) {
		char c = f->s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			goto bad;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
bad:
	return fail(r, "\"%.*s\" must be an address string like \"0x7ffc5e2a0010\"", (int)f->klen,
		    f->key);
}

static int want_bool(struct reader *r, const struct field *f, bool *out)
{
	if (f->kind != V_BOOL)
		return fail(r, "\"%.*s\" must be true or false", (int)f->klen, f->key);
	*out = f->i;
	return 0;
}

static enum trace_op op_from(const struct field *f)
{
	for (int op = 0; op < TRACE_NR_OPS; op++)
		if (str_is(f, op_names[op]))
			return (enum trace_op)op;
	return TRACE_NR_OPS;
}

static unsigned flags_from(const struct field *f)
{
	unsigned flags = 0;

	for (size_t i = 0; i < f->slen; i++) {
#define FLAG_FROM(name, bit, letter)                                                               \
	if (f->s[i] == letter)                                                                     \
		flags |= TRACE_FLAG_##name;
		CLOSURE_FLAG_LIST(FLAG_FROM)
#undef FLAG_FROM
	}
	return flags;
}

/* continue_at's "how"; a name this reader does not know reads as a plain continue_at. */
static enum trace_how how_from(const struct field *f)
{
#define HOW_FROM(name, code, trace_name)                                                           \
	if (str_is(f, trace_name))                                                                 \
		return TRACE_HOW_##name;
	CLOSURE_HOW_LIST(HOW_FROM)
#undef HOW_FROM
	return TRACE_HOW_CONTINUE_AT;
}

static int want_i64(struct reader *r, const struct field *f, int64_t *out)
{
	long long v = 0;
	int rc = want_int(r, f, &v);

	*out = v;
	return rc;
}

/* The fields an event must have (error messages name them in this order after "ev"). */
enum { HAVE_EV = 1, HAVE_TS = 2, HAVE_CL = 4, HAVE_REMAINING = 8 };

/*
 * The fields every event has (docs/trace-format.md) into ev; 1 when f is none of them. Both this
 * and event_arg() dispatch on the first letter: they run for every field of a big trace.
 */
static int event_common(struct reader *r, const struct field *f, struct trace_event *ev,
			unsigned *have)
{
	switch (f->key[0]) {
	case 't':
		if (key_is(f, "type"))
			return 0;
		if (key_is(f, "tid"))
			return want_i64(r, f, &ev->tid);
		if (!key_is(f, "ts"))
			break;
		*have |= HAVE_TS;
		return want_i64(r, f, &ev->ts);
	case 'p':
		if (key_is(f, "pid"))
			return want_i64(r, f, &ev->pid);
		break;
	case 'e':
		if (!key_is(f, "ev"))
			break;
		*have |= HAVE_EV;
		ev->op = op_from(f);
		return f->kind == V_STR ? 0 : fail(r, "\"ev\" must be a string");
	case 'c':
		if (!key_is(f, "cl"))
			break;
		*have |= HAVE_CL;
		return want_addr(r, f, &ev->cl);
	case 'r':
		if (!key_is(f, "remaining"))
			break;
		*have |= HAVE_REMAINING;
		if (want_i64(r, f, &ev->remaining))
			return -1;
		return ev->remaining < 0 ? fail(r, "\"remaining\" must not be negative") : 0;
	case 'f':
		if (!key_is(f, "flags"))
			break;
		if (f->kind != V_STR)
			return fail(r, "\"flags\" must be a string of letters");
		ev->flags = flags_from(f);
		return 0;
	case 'i':
		if (key_is(f, "ip"))
			return want_addr(r, f, &ev->ip);
		break;
	}
	return 1;
}

/* The fields of each operation's own (closure_probes.h, trace_args.h) into ev; others are
 * ignored. */
static int event_arg(struct reader *r, const struct field *f, struct trace_event *ev)
{
	const struct trace_arg *a = trace_arg_find(f->key, f->klen);
	void *field = a ? (char *)ev + a->offset : NULL;

	/* The recorder's own mark of an init (not a probe's argument): docs/trace-format.md. */
	if (f->klen == 8 && !memcmp(f->key, "snapshot", 8))
		return want_bool(r, f, &ev->snapshot);
	if (!a)
		return 0;
	switch (a->type) {
	case TRACE_ARG_ADDR:
	case TRACE_ARG_FN:
		return want_addr(r, f, field);
	case TRACE_ARG_BOOL:
		return want_bool(r, f, field);
	case TRACE_ARG_INT:
		return want_i64(r, f, field);
	case TRACE_ARG_HOW:
		*(enum trace_how *)field = how_from(f);
		return 0;
	case TRACE_ARG_BUG:
		if (f->kind == V_STR)
			snprintf(field, sizeof(ev->bug), "%.*s", (int)f->slen, f->s);
		return 0;
	case TRACE_ARG_NONE:
		break;
	}
	return 0;
}

/* An event's "frames" into ips (TRACE_FRAMES_MAX of room), *n of them: 0 or -1 (bad). */
static int want_frames(struct reader *r, const struct field *f, uint64_t *ips, unsigned *n)
{
	char why[160];

	return trace_frames_parse(f, ips, n, why, sizeof(why)) ? fail(r, "%s", why) : 0;
}

static int decode_event(struct reader *r, const struct field *fields, int n)
{
	struct trace_event ev = {.remaining = -1, .timeout_ms = -1};
	uint64_t frames[TRACE_FRAMES_MAX];
	unsigned have = 0, nframes = 0;

	for (int i = 0; i < n; i++) {
		int rc = event_common(r, &fields[i], &ev, &have);

		if (rc == 1 && key_is(&fields[i], "frames")) {
			if (want_frames(r, &fields[i], frames, &nframes))
				return -1;
			continue;
		}
		if (rc == 1)
			rc = event_arg(r, &fields[i], &ev);
		if (rc)
			return -1;
	}
	if (!(have & HAVE_EV))
		return fail(r, "event without \"ev\"");
	if (ev.op == TRACE_NR_OPS)
		return 0; /* an operation added later: not ours to judge */
	if (!(have & HAVE_TS))
		return fail(r, "event without \"ts\"");
	if (!(have & HAVE_CL))
		return fail(r, "event without \"cl\"");
	if (!(have & HAVE_REMAINING))
		return fail(r, "event without \"remaining\"");
	ev.seq = r->seq++;
	ev.line = r->line;
	r->info->events_read++;
	if (nframes && r->sink->frames)
		r->sink->frames(r->ctx, &ev, frames, nframes);
	if (r->sink->event)
		r->sink->event(r->ctx, &ev);
	return 0;
}

static char *dup_field(const struct field *f)
{
	return f && f->kind == V_STR ? strndup(f->s, f->slen) : NULL;
}

static int decode_sym(struct reader *r, const struct field *fields, int n)
{
	const struct field *addr = find(fields, n, "addr"), *line = find(fields, n, "line");
	struct trace_sym sym = {.line = 0};
	char *func, *file, *obj, *dir;
	long long v = 0;

	if (!addr)
		return fail(r, "sym record without \"addr\"");
	if (want_addr(r, addr, &sym.addr))
		return -1;
	if (line && line->kind != V_NULL && want_int(r, line, &v))
		return -1;
	sym.line = (long)v;
	func = dup_field(find(fields, n, "func"));
	file = dup_field(find(fields, n, "file"));
	obj = dup_field(find(fields, n, "obj"));
	dir = dup_field(find(fields, n, "dir"));
	sym.func = func;
	sym.file = file;
	sym.obj = obj;
	sym.dir = file ? dir : NULL; /* a folder says nothing without its file */
	if (r->sink->sym)
		r->sink->sym(r->ctx, &sym);
	free(func);
	free(file);
	free(obj);
	free(dir);
	return 0;
}

static int decode_module(struct reader *r, const struct field *fields, int n)
{
	const struct field *path = find(fields, n, "path");
	char *p, *id;

	if (!r->sink->module || !path || path->kind != V_STR)
		return 0; /* nothing to say without a path */
	p = dup_field(path);
	id = dup_field(find(fields, n, "build_id"));
	if (!p)
		return fail(r, "out of memory%s", mem_limit_note());
	r->sink->module(r->ctx, &(struct trace_module){.path = p, .build_id = id});
	free(p);
	free(id);
	return 0;
}

/* "thread" (tid) or "workqueue" (wq): a name given by the traced process, hostile as the rest. */
static int decode_name(struct reader *r, const struct field *fields, int n, bool thread)
{
	const struct field *id = find(fields, n, thread ? "tid" : "wq"),
			   *name = find(fields, n, "name"), *pid = find(fields, n, "pid");
	struct trace_name tn = {.kind = thread ? TRACE_NAME_THREAD : TRACE_NAME_WORKQUEUE};
	long long v = 0;
	char *text;

	if (!id || !name || name->kind != V_STR)
		return fail(r, "a %s record needs \"%s\" and a \"name\" string",
			    thread ? "thread" : "workqueue", thread ? "tid" : "wq");
	if (thread ? want_int(r, id, &v) : want_addr(r, id, &tn.id))
		return -1;
	if (thread && (v < 0 || v > INT32_MAX))
		return fail(r, "\"tid\" must be a thread id (0 to 2147483647)");
	if (thread)
		tn.id = (uint64_t)v;
	if (pid && want_int(r, pid, &tn.pid))
		return -1;
	if (!r->sink->name)
		return 0;
	text = dup_field(name);
	if (!text)
		return fail(r, "out of memory%s", mem_limit_note());
	if (strlen(text) > TRACE_NAME_MAX)
		text[TRACE_NAME_MAX] = '\0'; /* a bound on what a hostile name costs downstream */
	tn.name = text;
	r->sink->name(r->ctx, &tn);
	free(text);
	return 0;
}

static int decode_header(struct reader *r, const struct field *fields, int n)
{
	const struct field *format = find(fields, n, "format"),
			   *version = find(fields, n, "version");
	const struct field *pid = find(fields, n, "pid");
	long long v = 0;

	if (!format || !str_is(format, TRACE_FORMAT_NAME))
		return fail(r, "not a closuretrace trace: the header's \"format\" is not "
			       "\"" TRACE_FORMAT_NAME "\"");
	if (!version)
		return fail(r, "the header has no \"version\"");
	if (want_int(r, version, &v))
		return -1;
	if (v > TRACE_FORMAT_VERSION)
		return fail(r,
			    "trace format version %lld is newer than this closuretrace reads "
			    "(version %d); use a newer closuretrace",
			    v, TRACE_FORMAT_VERSION);
	r->info->version = (long)v;
	if (pid && pid->kind == V_INT)
		r->info->pid = pid->i;
	r->info->exe = dup_field(find(fields, n, "exe"));
	if (r->sink->header)
		r->sink->header(r->ctx, r->info);
	return 0;
}

/* record -p's closures first seen mid-life, and why those from before could not be read. */
static int decode_midlife(struct reader *r, const struct field *fields, int n)
{
	const char *const keys[] = {"midlife_read", "midlife_unread", "midlife_limited"};
	long long *const to[] = {&r->info->midlife_read, &r->info->midlife_unread,
				 &r->info->midlife_limited};
	const struct field *f;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!(f = find(fields, n, keys[i])))
			continue;
		if (want_int(r, f, to[i]))
			return -1;
		if (*to[i] < 0)
			return fail(r, "\"%s\" (%lld) must be 0 or more", keys[i], *to[i]);
	}
	if ((f = find(fields, n, "unread_why"))) {
		if (f->kind != V_STR)
			return fail(r, "\"unread_why\" must be a string");
		free(r->info->unread_why);
		r->info->unread_why = dup_field(f);
	}
	return 0;
}

static int decode_end(struct reader *r, const struct field *fields, int n)
{
	const struct field *f;
	struct trace_info *info = r->info;

	info->has_end = true;
	if ((f = find(fields, n, "events")) && want_int(r, f, &info->end_events))
		return -1;
	if ((f = find(fields, n, "lost")) && want_int(r, f, &info->lost))
		return -1;
	if ((f = find(fields, n, "duration_ns")) && want_int(r, f, &info->duration_ns))
		return -1;
	free(info->reason);
	info->reason = dup_field(find(fields, n, "reason"));
	info->has_status = find(fields, n, "exit_code") || find(fields, n, "signal");
	if ((f = find(fields, n, "cut_short")) && want_bool(r, f, &info->cut_short))
		return -1;
	if ((f = find(fields, n, "sample"))) {
		if (want_int(r, f, &info->sample))
			return -1;
		if (info->sample < 2)
			return fail(r, "\"sample\" must be 2 or more (one tree in N)");
	}
	if ((f = find(fields, n, "trees"))) {
		const struct field *l = find(fields, n, "trees_left_out");

		if (want_int(r, f, &info->trees) || !l || want_int(r, l, &info->trees_left_out))
			return l ? -1 : fail(r, "\"trees\" without \"trees_left_out\"");
		if (info->trees < 0 || info->trees_left_out < 0 ||
		    info->trees_left_out > info->trees)
			return fail(r,
				    "\"trees_left_out\" (%lld) must be from 0 to \"trees\" (%lld)",
				    info->trees_left_out, info->trees);
		info->has_trees = true;
	}
	if ((f = find(fields, n, "snapshot_missed"))) {
		if (want_int(r, f, &info->snapshot_missed))
			return -1;
		if (info->snapshot_missed < 0)
			return fail(r, "\"snapshot_missed\" (%lld) must be 0 or more",
				    info->snapshot_missed);
	}
	if (decode_midlife(r, fields, n))
		return -1;
	if ((f = find(fields, n, "lost_claimed"))) {
		if (want_int(r, f, &info->lost_claimed))
			return -1;
		if (info->lost_claimed < 0 || info->lost_claimed > info->lost)
			return fail(r, "\"lost_claimed\" (%lld) must be from 0 to \"lost\" (%lld)",
				    info->lost_claimed, info->lost);
	}
	if ((f = find(fields, n, "claims_refused"))) {
		if (want_int(r, f, &info->claims_refused))
			return -1;
		if (info->claims_refused < 0)
			return fail(r, "\"claims_refused\" (%lld) must be 0 or more",
				    info->claims_refused);
	}
	return 0;
}

static int decode(struct reader *r, const struct field *fields, int n)
{
	const struct field *type = NULL;

	for (int i = 0; i < n; i++)
		if (key_is(&fields[i], "type"))
			type = &fields[i];
	if (!type || type->kind != V_STR)
		return fail(r, "a record without a \"type\" string");
	if (!r->seen_header) {
		if (!str_is(type, "header"))
			return fail(r, "not a closuretrace trace: the first line is not a header");
		r->seen_header = true;
		return decode_header(r, fields, n);
	}
	if (str_is(type, "event"))
		return decode_event(r, fields, n);
	if (str_is(type, "sym"))
		return decode_sym(r, fields, n);
	if (str_is(type, "end"))
		return decode_end(r, fields, n);
	if (str_is(type, "module"))
		return decode_module(r, fields, n);
	if (str_is(type, "thread") || str_is(type, "workqueue"))
		return decode_name(r, fields, n, str_is(type, "thread"));
	if (str_is(type, "header"))
		return fail(r, "a second header");
	return 0; /* a record type added later */
}

static bool blank(const char *p, const char *end)
{
	return trace_line_skip_ws(p, end) == end;
}

/* One line. tail: the file's last line, without a newline; returns 1 when it is cut short. */
static int read_line(struct reader *r, char *line, size_t len, bool tail)
{
	struct field fields[MAX_FIELDS];
	char why[sizeof(r->err->text)];
	json_t *root = NULL;
	int n, rc;

	r->line++;
	if (blank(line, line + len))
		return 0;
	n = trace_line_fast(line, line + len, fields);
	if (n >= 0)
		trace_line_fast_decode(fields, n);
	if (n < 0) {
		if (tail && !r->info->has_end) {
			/* A killed recorder leaves half a line: that is truncation, not bad input.
			 */
			json_error_t err;

			root = json_loadb(line, len, 0, &err);
			if (!root) {
				r->line--; /* not a line: the last full one came before */
				return 1;
			}
			json_decref(root);
		}
		n = trace_line_slow(line, len, fields, &root, why, sizeof(why));
		if (n < 0) {
			json_decref(root);
			return fail(r, "%s", why);
		}
	}
	rc = decode(r, fields, n);
	json_decref(root);
	return rc;
}

static int read_stream(struct reader *r, struct trace_input *f)
{
	size_t cap = 1 << 20, len = 0, start;
	char *buf = malloc(cap);
	int rc = 0;

	if (!buf)
		return fail(r, "out of memory%s", mem_limit_note());
	for (;;) {
		long got;
		char *nl;

		if (len == cap) {
			char *bigger;

			if (cap > TRACE_MAX_LINE) {
				r->line++; /* the line being read */
				rc = fail(r,
					  "line longer than 16 MiB (%d bytes), the format's limit",
					  TRACE_MAX_LINE);
				goto out;
			}
			/* Room for the longest line and its newline, no more. */
			size_t want = cap * 2 > TRACE_MAX_LINE ? TRACE_MAX_LINE + 1 : cap * 2;

			bigger = realloc(buf, want);
			if (!bigger) {
				rc = fail(r, "out of memory (a line longer than %zu bytes)", cap);
				goto out;
			}
			buf = bigger;
			cap = want;
		}
		got = trace_input_read(f, buf + len, cap - len, r->err);
		if (got < 0) {
			rc = -1;
			goto out;
		}
		if (!got)
			break;
		len += (size_t)got;
		/* Lines that end inside what was just read; the rest waits for more. */
		start = 0;
		while ((nl = memchr(buf + start, '\n', len - start))) {
			if ((rc = read_line(r, buf + start, (size_t)(nl - buf) - start, false)))
				goto out;
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	if (len) {
		r->cut_tail = true;
		rc = read_line(r, buf, len, true);
		if (rc > 0) {
			r->info->has_end = false;
			rc = 0;
		}
	}
out:
	free(buf);
	return rc;
}

int trace_read(const char *path, const struct trace_sink *sink, void *ctx, struct trace_info *info,
	       struct trace_error *err)
{
	struct reader r = {.path = path, .sink = sink, .ctx = ctx, .info = info, .err = err};
	struct trace_input in;
	int rc;

	memset(info, 0, sizeof(*info));
	*err = (struct trace_error){0};
	if (trace_input_open(&in, path, err))
		return -1;
	rc = read_stream(&r, &in);
	info->lines = r.line;
	if (!rc && !r.seen_header && !r.line && !r.cut_tail) {
		rc = trace_error_at(err, path, 0, "empty file: not a closuretrace trace");
	} else if (!rc && !r.seen_header) {
		/* Only an unfinished first line: the recording ended while writing its header. */
		rc = trace_error_at(err, path, 1,
				    "the trace ends inside its header line (cut short before any "
				    "event was written)");
	}
	trace_input_close(&in);
	return rc ? -1 : 0;
}

void trace_info_clear(struct trace_info *info)
{
	free(info->exe);
	free(info->reason);
	free(info->unread_why);
	memset(info, 0, sizeof(*info));
}
