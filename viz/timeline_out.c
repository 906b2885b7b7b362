/* Trace-event JSON out, one event a line, and the process and thread tracks that name it. */
#define _GNU_SOURCE /* fputs_unlocked */
#include "timeline_out.h"
#include "hashmap.h"
#include "model.h"
#include "json_string.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void tlo_begin(struct tl_out *o, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	fputs("{\"traceEvents\":[\n", f);
}

/*
 * A timeline has tens of millions of events (24 M for a trace of 2 M closures), and printf's
 * parsing of its format was most of the time: numbers are made here, and written unlocked (the
 * stream is this thread's alone).
 */
static void put(FILE *f, const char *s)
{
	fputs_unlocked(s, f);
}

/* v's decimal digits, ending at end (not terminated); returns where they start. */
static char *digits(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

static void put_int(FILE *f, int64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *p;

	p = digits(end, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	if (v < 0)
		*--p = '-';
	fwrite_unlocked(p, 1, (size_t)(end - p), f);
}

/* ns in µs with three decimals: exact, and what every reader of the format expects. */
static void write_us(FILE *f, int64_t ns)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char buf[32], *end = buf + sizeof(buf), *p = end - 4;

	p[0] = '.';
	p[1] = (char)('0' + mag % 1000 / 100);
	p[2] = (char)('0' + mag % 100 / 10);
	p[3] = (char)('0' + mag % 10);
	p = digits(p, mag / 1000);
	if (ns < 0)
		*--p = '-';
	fwrite_unlocked(p, 1, (size_t)(end - p), f);
}

void tlo_open(struct tl_out *o, char ph, const char *cat, const char *name, int64_t pid,
	      int64_t tid, int64_t ts_ns)
{
	FILE *f = o->f;

	char head[] = "{\"ph\":\"?\"";

	head[7] = ph;
	put(f, o->events ? ",\n" : "");
	put(f, head);
	if (cat) {
		put(f, ",\"cat\":");
		json_string_fputs(f, cat, JSON_SHOWN);
	}
	put(f, ",\"name\":");
	json_string_fputs(f, name, JSON_SHOWN);
	put(f, ",\"pid\":");
	put_int(f, pid);
	put(f, ",\"tid\":");
	put_int(f, tid);
	if (ph != 'M') {
		put(f, ",\"ts\":");
		write_us(f, ts_ns);
	}
	o->events++;
	o->in_args = false;
	o->nargs = 0;
}

void tlo_id(struct tl_out *o, uint64_t id)
{
	static const char hex[] = "0123456789abcdef";
	char buf[24], *end = buf + sizeof(buf), *p = end;

	do
		*--p = hex[id & 15];
	while (id >>= 4);
	put(o->f, ",\"id\":\"0x");
	fwrite_unlocked(p, 1, (size_t)(end - p), o->f);
	put(o->f, "\"");
}

void tlo_dur(struct tl_out *o, int64_t dur_ns)
{
	put(o->f, ",\"dur\":");
	write_us(o->f, dur_ns < 0 ? 0 : dur_ns);
}

void tlo_raw(struct tl_out *o, const char *text)
{
	put(o->f, text);
}

static void arg_key(struct tl_out *o, const char *key)
{
	if (!o->in_args) {
		put(o->f, ",\"args\":{");
		o->in_args = true;
	}
	put(o->f, o->nargs++ ? ",\"" : "\"");
	put(o->f, key);
	put(o->f, "\":");
}

void tlo_arg_str(struct tl_out *o, const char *key, const char *val)
{
	arg_key(o, key);
	json_string_fputs(o->f, val, JSON_SHOWN);
}

void tlo_arg_int(struct tl_out *o, const char *key, long long val)
{
	arg_key(o, key);
	put_int(o->f, val);
}

void tlo_close(struct tl_out *o)
{
	put(o->f, o->in_args ? "}}" : "}");
	o->in_args = false;
}

void tlo_end(struct tl_out *o, const char *other_data)
{
	/* ns: closures live for microseconds, so the viewers should count in ns. */
	fputs("\n],\"displayTimeUnit\":\"ns\"", o->f);
	if (other_data)
		fprintf(o->f, ",\"otherData\":{%s}", other_data);
	fputs("}\n", o->f);
}

/* ---- tracks ---- */

#define THREAD_FNS 8 /* continuations counted per thread: enough to name it */

struct tl_thread {
	int64_t pid, tid;
	uint64_t seq; /* first seen: names come out in that order */
	uint64_t wq;
	bool mixed_wq;
	struct {
		uint64_t fn, runs;
	} fns[THREAD_FNS];
};

struct tl_tracks {
	struct hashmap threads; /* (tid, pid) -> struct tl_thread */
};

struct tl_tracks *tlt_new(void)
{
	struct tl_tracks *t = xcalloc(1, sizeof(struct tl_tracks));

	hashmap_init(&t->threads, sizeof(struct tl_thread));
	return t;
}

void tlt_free(struct tl_tracks *t)
{
	if (!t)
		return;
	hashmap_free(&t->threads);
	free(t);
}

static struct tl_thread *thread_of(struct tl_tracks *t, int64_t pid, int64_t tid)
{
	bool added;
	struct tl_thread *th = hashmap_put(&t->threads, (uint64_t)tid, (uint64_t)pid, &added);

	if (added) {
		th->pid = pid;
		th->tid = tid;
		th->seq = hashmap_count(&t->threads) - 1;
	}
	return th;
}

void tlt_thread_used(struct tl_tracks *t, int64_t pid, int64_t tid)
{
	thread_of(t, pid, tid);
}

void tlt_thread_ran(struct tl_tracks *t, int64_t pid, int64_t tid, uint64_t fn, uint64_t wq)
{
	struct tl_thread *th = thread_of(t, pid, tid);

	if (wq && th->wq && th->wq != wq)
		th->mixed_wq = true;
	if (wq)
		th->wq = wq;
	for (unsigned i = 0; i < THREAD_FNS && fn; i++) {
		if (!th->fns[i].fn)
			th->fns[i].fn = fn;
		if (th->fns[i].fn == fn) {
			th->fns[i].runs++;
			return;
		}
	}
}

/* By process, then in the order the threads were first seen. */
static int cmp_seq(const void *a, const void *b)
{
	const struct tl_thread *x = *(const struct tl_thread *const *)a;
	const struct tl_thread *y = *(const struct tl_thread *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "NAME TID FN (wq WQ)": the name the process gave the thread (when it gave one), its id, the
 * continuation it ran most, and its workqueue by name when it ran for one only. */
static void name_thread(const struct tl_thread *th, char *buf, size_t len, struct model *m)
{
	const char *given = model_name(m, TRACE_NAME_THREAD, th->pid, (uint64_t)th->tid);
	unsigned best = 0;
	char fn[256];
	size_t used;

	for (unsigned i = 1; i < THREAD_FNS; i++)
		if (th->fns[i].runs > th->fns[best].runs)
			best = i;
	used = (size_t)snprintf(buf, len, "%s%s%" PRId64, given ? given : "", given ? " " : "",
				th->tid);
	if (used < len && th->fns[best].runs)
		used += (size_t)snprintf(buf + used, len - used, " %s",
					 model_func_text(m, th->fns[best].fn, fn, sizeof(fn)));
	if (used < len && th->wq && !th->mixed_wq)
		snprintf(buf + used, len - used, " (wq %s)",
			 model_wq_text(m, th->pid, th->wq, fn, sizeof(fn)));
}

/* The last part of a path. */
static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "?";
}

void tlt_write_names(struct tl_tracks *t, struct tl_out *o, int64_t main_pid, const char *exe,
		     struct model *m)
{
	struct tl_thread **v = xcalloc(hashmap_count(&t->threads) + 1, sizeof(*v));
	struct tl_thread *th;
	size_t n = 0, pos = 0;
	char name[600];

	while ((th = hashmap_next(&t->threads, &pos, NULL, NULL)))
		v[n++] = th;
	qsort(v, n, sizeof(*v), cmp_seq);
	for (size_t i = 0; i < n; i++) {
		if (!i || v[i - 1]->pid != v[i]->pid) {
			if (v[i]->pid == main_pid)
				snprintf(name, sizeof(name), "%s", base_name(exe));
			else
				snprintf(name, sizeof(name), "%s (a process it started)",
					 base_name(exe));
			tlo_open(o, 'M', NULL, "process_name", v[i]->pid, 0, 0);
			tlo_arg_str(o, "name", name);
			tlo_close(o);
		}
		name_thread(v[i], name, sizeof(name), m);
		tlo_open(o, 'M', NULL, "thread_name", v[i]->pid, v[i]->tid, 0);
		tlo_arg_str(o, "name", name);
		tlo_close(o);
	}
	free(v);
}
