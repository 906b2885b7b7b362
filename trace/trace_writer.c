/*
 * JSON Lines out. Events are formatted by hand with fprintf (4-8x faster than jansson, measured
 * on record.bench.sh): their fields are integers and fixed names. Every string that comes from
 * outside (paths, function and file names, argv) goes through json_string_fputs (JSON_BYTES).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/types.h>

#include "closure_batch.h"
#include "event.h"
#include "trace_args.h"
#include "json_string.h"
#include "trace_writer.h"

static const char *const event_names[CT_NR_OPS] = {
#define EVENT_NAME(name, NAME, a4, a5, a6) [CT_##NAME] = #name,
	CLOSURE_PROBE_LIST(EVENT_NAME)
#undef EVENT_NAME
};

const char *trace_event_name(unsigned kind)
{
	return kind < CT_NR_OPS ? event_names[kind] : NULL;
}

void trace_write_header(FILE *f, pid_t pid, const char *exe, char *const *argv, uint64_t start_ns)
{
	fprintf(f,
		"{\"type\":\"header\",\"format\":\"" TRACE_FORMAT_NAME
		"\",\"version\":%d,\"pid\":%d,"
		"\"exe\":",
		TRACE_FORMAT_VERSION, (int)pid);
	json_string_fputs(f, exe, JSON_BYTES);
	if (argv) {
		fputs(",\"cmd\":[", f);
		for (int i = 0; argv[i]; i++) {
			if (i)
				putc(',', f);
			json_string_fputs(f, argv[i], JSON_BYTES);
		}
		putc(']', f);
	}
	fprintf(f, ",\"start_ns\":%" PRIu64 "}\n", start_ns);
}

/*
 * An event line, built by hand: it is the recorder's hot path (a million lines a second), and
 * the printf family parses its format string on every call.
 */
struct line {
	char *p;
	/* the longest event is under 300 bytes, and "frames" (at most CT_STACK_MAX) 21 a frame */
	char buf[320 + 11 + CT_STACK_MAX * 21];
};

#define PUT(l, lit) (memcpy((l)->p, lit, sizeof(lit) - 1), (l)->p += sizeof(lit) - 1)

static void put_str(struct line *l, const char *s)
{
	size_t n = strlen(s);

	memcpy(l->p, s, n);
	l->p += n;
}

static void put_u64(struct line *l, uint64_t v)
{
	char digits[20];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*l->p++ = digits[--n];
}

static void put_i64(struct line *l, int64_t v)
{
	if (v < 0) {
		*l->p++ = '-';
		put_u64(l, -(uint64_t)v);
	} else {
		put_u64(l, (uint64_t)v);
	}
}

/* An address: a JSON string of lower-case hex with 0x. */
static void put_addr(struct line *l, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	int shift = 60;

	PUT(l, "\"0x");
	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*l->p++ = hex[(v >> shift) & 0xf];
	*l->p++ = '"';
}

/* The flag letters of the contract (closure_probes.h), in its order; nothing when none is set. */
static void put_flags(struct line *l, uint64_t flags)
{
	static const uint32_t all = 0
#define FLAG_BIT(name, bit, letter) | (1u << (bit))
		CLOSURE_FLAG_LIST(FLAG_BIT)
#undef FLAG_BIT
		;

	if (!(flags & all))
		return;
	PUT(l, ",\"flags\":\"");
#define FLAG_LETTER(name, bit, letter)                                                             \
	if (flags & (1u << (bit)))                                                                 \
		*l->p++ = letter;
	CLOSURE_FLAG_LIST(FLAG_LETTER)
#undef FLAG_LETTER
	*l->p++ = '"';
}

/* ,"name": */
static void put_key(struct line *l, const struct trace_arg *a)
{
	PUT(l, ",\"");
	memcpy(l->p, a->name, a->len);
	l->p += a->len;
	PUT(l, "\":");
}

static void put_name(struct line *l, const char *s)
{
	*l->p++ = '"';
	put_str(l, s);
	*l->p++ = '"';
}

/* The fields of one operation after those every event has: named and written as the contract
 * types them (trace_args.h, docs/trace-format.md). */
static void put_args(struct line *l, const struct ct_event *e)
{
	const uint64_t raw[3] = {e->x4, e->x5, e->x6};

	for (size_t i = 0; i < 3; i++) {
		const struct trace_arg *a = &trace_op_args[e->kind][i];

		if (!a->name)
			continue;
		put_key(l, a);
		switch (a->type) {
		case TRACE_ARG_ADDR:
		case TRACE_ARG_FN:
			put_addr(l, raw[i]);
			break;
		case TRACE_ARG_BOOL:
			put_str(l, raw[i] ? "true" : "false");
			break;
		case TRACE_ARG_INT:
			put_i64(l, (int64_t)raw[i]);
			break;
		case TRACE_ARG_BUG:
			put_name(l, trace_bug_name(raw[i]));
			break;
		case TRACE_ARG_HOW:
			put_name(l, trace_how_name(raw[i]));
			break;
		case TRACE_ARG_NONE:
			break;
		}
	}
}

void trace_write_event(FILE *f, const struct ct_event *e, uint64_t start_ns, uint32_t pid)
{
	trace_write_event_frames(f, e, start_ns, pid, NULL, 0);
}

/* ,"frames":["0x..",...] (docs/trace-format.md) */
static void put_frames(struct line *l, const uint64_t *ips, unsigned n)
{
	PUT(l, ",\"frames\":[");
	for (unsigned i = 0; i < n && i < CT_STACK_MAX; i++) {
		if (i)
			*l->p++ = ',';
		put_addr(l, ips[i]);
	}
	*l->p++ = ']';
}

void trace_write_event_frames(FILE *f, const struct ct_event *e, uint64_t start_ns, uint32_t pid,
			      const uint64_t *ips, unsigned n)
{
	const char *name = trace_event_name(e->kind);
	struct line l;

	if (!name)
		return;
	l.p = l.buf;
	PUT(&l, "{\"type\":\"event\",\"ts\":");
	put_i64(&l, (int64_t)(e->ts - start_ns));
	PUT(&l, ",\"tid\":");
	put_u64(&l, e->tid);
	if (pid) {
		PUT(&l, ",\"pid\":");
		put_u64(&l, pid);
	}
	PUT(&l, ",\"ev\":\"");
	put_str(&l, name);
	PUT(&l, "\",\"cl\":");
	put_addr(&l, e->cl);
	PUT(&l, ",\"remaining\":");
	put_u64(&l, e->count);
	put_flags(&l, e->flags);
	PUT(&l, ",\"ip\":");
	put_addr(&l, e->ip);
	put_args(&l, e);
	if (e->kind == CT_INIT && (e->pad & CT_EVENT_SNAPSHOT))
		PUT(&l, ",\"snapshot\":true");
	if (n)
		put_frames(&l, ips, n);
	PUT(&l, "}\n");
	fwrite_unlocked(l.buf, 1, (size_t)(l.p - l.buf), f);
}

void trace_write_sym(FILE *f, uint64_t addr, const struct sym_info *s)
{
	fprintf(f, "{\"type\":\"sym\",\"addr\":\"0x%" PRIx64 "\"", addr);
	if (s->func) {
		fputs(",\"func\":", f);
		json_string_fputs(f, s->func, JSON_BYTES);
	}
	if (s->file) {
		fputs(",\"file\":", f);
		json_string_fputs(f, s->file, JSON_BYTES);
		fprintf(f, ",\"line\":%d", s->line);
		if (s->dir) {
			fputs(",\"dir\":", f);
			json_string_fputs(f, s->dir, JSON_BYTES);
		}
	}
	if (s->obj) {
		fputs(",\"obj\":", f);
		json_string_fputs(f, s->obj, JSON_BYTES);
	}
	fputs("}\n", f);
}

void trace_write_module(FILE *f, const char *path, uint64_t base, const char *build_id)
{
	fputs("{\"type\":\"module\",\"path\":", f);
	json_string_fputs(f, path, JSON_BYTES);
	fprintf(f, ",\"base\":\"0x%" PRIx64 "\"", base);
	if (build_id && *build_id)
		fprintf(f, ",\"build_id\":\"%s\"", build_id); /* hex digits only */
	fputs("}\n", f);
}

void trace_write_name(FILE *f, unsigned kind, uint32_t pid, uint64_t id, const char *name)
{
	if (kind == CLOSURE_NAME_THREAD && id <= INT32_MAX) /* what a reader takes as a tid */
		fprintf(f, "{\"type\":\"thread\",\"tid\":%" PRIu64, id);
	else if (kind == CLOSURE_NAME_WORKQUEUE)
		fprintf(f, "{\"type\":\"workqueue\",\"wq\":\"0x%" PRIx64 "\"", id);
	else
		return;
	if (pid)
		fprintf(f, ",\"pid\":%" PRIu32, pid);
	fputs(",\"name\":", f);
	json_string_fputs(f, name, JSON_BYTES);
	fputs("}\n", f);
}

void trace_write_end(FILE *f, const struct trace_end *end)
{
	fprintf(f,
		"{\"type\":\"end\",\"events\":%" PRIu64 ",\"lost\":%" PRIu64
		",\"duration_ns\":%" PRIu64,
		end->events, end->lost, end->duration_ns);
	if (end->complete_ns)
		fprintf(f, ",\"complete_ns\":%" PRIu64, end->complete_ns);
	fprintf(f, ",\"reason\":\"%s\"", end->reason);
	/* trace_end_has_status: one of these */
	if (end->exit_code >= 0)
		fprintf(f, ",\"exit_code\":%d", end->exit_code);
	if (end->signal > 0)
		fprintf(f, ",\"signal\":%d", end->signal);
	if (end->cut_short)
		fputs(",\"cut_short\":true", f);
	if (end->abrupt)
		fprintf(f, ",\"abrupt\":%u", end->abrupt);
	if (trace_end_sampled(end))
		fprintf(f, ",\"sample\":%" PRIu32, end->sample_every);
	if (end->trees_counted)
		fprintf(f, ",\"trees\":%" PRIu64 ",\"trees_left_out\":%" PRIu64, end->trees,
			end->trees_left_out);
	if (end->snapshot_missed)
		fprintf(f, ",\"snapshot_missed\":%" PRIu64, end->snapshot_missed);
	if (end->midlife_read)
		fprintf(f, ",\"midlife_read\":%" PRIu64, end->midlife_read);
	if (end->midlife_unread)
		fprintf(f, ",\"midlife_unread\":%" PRIu64, end->midlife_unread);
	if (end->midlife_limited)
		fprintf(f, ",\"midlife_limited\":%" PRIu64, end->midlife_limited);
	if (end->unread_why) {
		fputs(",\"unread_why\":", f);
		json_string_fputs(f, end->unread_why, JSON_BYTES);
	}
	if (end->lost_claimed)
		fprintf(f, ",\"lost_claimed\":%" PRIu64, end->lost_claimed);
	if (end->claims_refused)
		fprintf(f, ",\"claims_refused\":%" PRIu64, end->claims_refused);
	fputs("}\n", f);
}
