/*
 * check's live consumer (cli/check_live.c) without BPF:
 *   check_live_test same TRACE   records fed live give the verdict the trace file gives read back
 *   check_live_test memory       memory follows the closures alive, not the events
 *
 * same: seeded arbitrary records (every operation and one the contract lacks, unknown flag bits,
 * how and bug codes, snapshot inits, three processes, times out of order and before the start,
 * symbols with quotes, control and non-UTF-8 bytes) go both ways: through the trace writer into
 * TRACE, read back by check_judge (the reader), and through check_live_consumer straight into the
 * model. The diagnostics, the verdict counts and the model's counts must be equal, for each way
 * the recording can end (exit, timeout with the command ended, stopped while it ran on).
 *
 * memory: check's model fed 1 M then 8 M events of closures that finish (64 alive at a time, at
 * reused addresses): its peak resident memory (VmHWM) grows by less than 4 MiB between them.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h" /* CHECK */
#include "check_diag.h"
#include "check_live.h"
#include "closure_batch.h"
#include "event.h"
#include "model.h"
#include "trace_live.h"
#include "trace_writer.h"

#define START_NS 1000000000000ull

static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (rng_state >> 33) % n;
}

/* Where the records go: the writer's file, and the live consumer. */
struct both {
	FILE *f;
	struct check_live live;
};

static void emit(struct both *b, const struct ct_event *e, uint32_t pid)
{
	trace_write_event(b->f, e, START_NS, pid);
	check_live_consumer.event(&b->live, e, pid);
}

static void emit_sym(struct both *b, uint64_t addr, const struct sym_info *s)
{
	trace_write_sym(b->f, addr, s);
	check_live_consumer.sym(&b->live, addr, s);
}

static void emit_name(struct both *b, unsigned kind, uint32_t pid, uint64_t id, const char *name)
{
	trace_write_name(b->f, kind, pid, id, name);
	check_live_consumer.name(&b->live, kind, pid, id, name);
}

/* Threads and workqueues named, one name too long, one of a kind the contract lacks. */
static void names(struct both *b)
{
	emit_name(b, CLOSURE_NAME_THREAD, 100, 100, "worker\x01\"0\"");
	emit_name(b, CLOSURE_NAME_THREAD, 0, 101,
		  "a name far longer than the sixty-four bytes a reader keeps of one, cut");
	emit_name(b, CLOSURE_NAME_WORKQUEUE, 200, 0x7f0000001040ull, "io\xff wq");
	emit_name(b, 3, 0, 102, "of no kind");
}

/* The names as the model has them, for the comparison. */
static void names_text(struct model *m, FILE *f)
{
	for (uint64_t tid = 100; tid < 104; tid++)
		for (int64_t pid = 0; pid <= 200; pid += 100) {
			const char *n = model_name(m, TRACE_NAME_THREAD, pid, tid);

			fprintf(f, "thread %" PRIu64 " of %" PRId64 ": %s\n", tid, pid,
				n ? n : "-");
		}
	for (int64_t pid = 0; pid <= 200; pid += 100) {
		const char *n = model_name(m, TRACE_NAME_WORKQUEUE, pid, 0x7f0000001040ull);

		fprintf(f, "wq of %" PRId64 ": %s\n", pid, n ? n : "-");
	}
}

#define NSITES 6

/* Call sites and continuations with names that must survive the file's escaping. */
static void symbols(struct both *b)
{
	static const char *const funcs[NSITES] = {"request_submit", "bio_\"endio\"",   "work\tfn",
						  "caf\xc3\xa9",    "bad\xff\x01name", NULL};
	static const char *const files[NSITES] = {"/src/a.c",  "/src/dir with space/b.c",
						  NULL,	       "/src/\xe2\x82\xac.c",
						  "rel/\\x.c", "/src/a.c"};

	for (int i = 0; i < NSITES; i++) {
		struct sym_info s = {.obj = i % 2 ? "/lib/x.so" : NULL,
				     .func = funcs[i],
				     .file = files[i],
				     .line = 10 * (i + 1)};

		emit_sym(b, 0x401000 + 0x10 * (uint64_t)i, &s);
	}
}

/* One arbitrary record: any operation (or none of the contract's), any closure of a few. */
static void arbitrary(struct both *b, uint64_t *ts)
{
	struct ct_event e = {0};
	uint64_t r = rnd(100);

	e.kind = (uint8_t)(r < 2 ? CT_NR_OPS + rnd(3) : r < 30 ? CT_INIT : rnd(CT_NR_OPS));
	e.tid = (uint32_t)(100 + rnd(4));
	*ts += rnd(3) ? rnd(2000) : 0;		   /* equal times: the order of the file decides */
	e.ts = rnd(20) ? *ts : *ts - rnd(5000000); /* a few out of order, some before the start */
	e.cl = 0x7f0000001000ull + 0x40 * rnd(24);
	e.count = (uint32_t)(rnd(10) ? rnd(4) : 0xffffffu);
	e.flags = (uint32_t)(rnd(4) ? 1u << 30 : rnd(1u << 31));
	e.ip = 0x401000 + 0x10 * rnd(NSITES + 1); /* one site without a sym record */
	e.x4 = rnd(3) ? 0x401000 + 0x10 * rnd(NSITES) : rnd(16);
	e.x5 = rnd(3) ? 0 : rnd(5) ? 1 : 0x7f0000001000ull + 0x40 * rnd(24);
	e.x6 = (uint8_t)rnd(6); /* how: three codes of the contract, three not */
	if (e.kind == CT_INIT)
		e.pad = rnd(8) ? 0 : CT_EVENT_SNAPSHOT;
	if (e.kind == CT_BUG)
		e.x4 = rnd(12);
	if (e.kind == CT_SYNC_BEGIN || e.kind == CT_SYNC_END || e.kind == CT_SUB)
		e.x4 = (uint64_t)(int64_t)(rnd(5) - 2);
	emit(b, &e, (uint32_t)(rnd(3) * 100));
}

/* What a verdict says, as text: the diagnostics, the summary counts, the model's counts. */
static char *verdict_text(struct check_verdict *v)
{
	const struct model_counts *n = model_counts(v->m);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	check_diags_print(&v->diags, f);
	names_text(v->m, f);
	fprintf(f,
		"closures %lu, in flight %lu, late %lu; leaks: end %d, unfinished %" PRIu64
		", leaked %" PRIu64 ", kept %" PRIu64 ", stuck %" PRIu64 ", suspects %" PRIu64
		", roots %" PRIu64 ", end_ts %" PRId64 "; model: lives %" PRIu64
		", finished %" PRIu64 ", events %" PRIu64 ", reordered %" PRIu64 ", late %" PRIu64
		", last %" PRId64 "\n",
		v->diags.closures, v->diags.in_flight, v->diags.late, (int)v->leaks.end,
		v->leaks.unfinished, v->leaks.leaked, v->leaks.kept_alive, v->leaks.stuck,
		v->leaks.suspects, v->leaks.hang_roots, v->leaks.end_ts, n->lives, n->finished,
		n->events, n->reordered, n->late, n->last_ts);
	fclose(f);
	return text;
}

static const struct trace_end ends[] = {
	{.reason = "exit", .exit_code = 0, .signal = 0},
	{.reason = "timeout", .exit_code = -1, .signal = 15, .cut_short = true},
	{.reason = "signal",
	 .exit_code = -1,
	 .signal = 0,
	 .cut_short = false,
	 .sample_every = 10,
	 .trees_counted = true,
	 .trees = 7,
	 .trees_left_out = 3},
};

/* One seed, one end: both ways, compared. */
static void same_once(const char *path, uint64_t seed, const struct trace_end *how)
{
	struct check_verdict live, file;
	struct trace_end end = *how;
	struct trace_error err = {0};
	struct both b = {.live = {.v = &live}};
	uint64_t ts = START_NS - 3000;
	char *a, *c;

	rng_state = seed;
	b.f = fopen(path, "w");
	if (!b.f) {
		perror(path);
		exit(2);
	}
	check_verdict_begin(&live);
	trace_write_header(b.f, 4242, "/bin/prog", NULL, START_NS);
	check_live_consumer.start(&b.live, 4242, "/bin/prog", START_NS);
	symbols(&b);
	names(&b);
	for (int i = 0; i < 3000; i++)
		arbitrary(&b, &ts);
	end.events = 3000;
	end.duration_ns = ts - START_NS + 1000;
	trace_write_end(b.f, &end);
	check_live_consumer.end(&b.live, &end);
	fclose(b.f);
	EXPECT(!b.live.out_of_memory, "out of memory");
	EXPECT(!check_verdict_judge(&live), "live: no verdict");
	if (check_judge(path, &file, &err)) {
		EXPECT(0, "seed %" PRIu64 ": the trace does not read back: %s", seed, err.text);
		check_verdict_free(&live);
		return;
	}
	a = verdict_text(&live);
	c = verdict_text(&file);
	EXPECT(!strcmp(a, c),
	       "seed %" PRIu64 " end %s: live and read back differ\n--- live\n%s--- file\n%s", seed,
	       how->reason, a, c);
	EXPECT(strstr(a, ": error: ") || !strcmp(how->reason, "signal"),
	       "seed %" PRIu64 " end %s: nothing judged (the test feeds too little)", seed,
	       how->reason);
	free(a);
	free(c);
	check_verdict_free(&live);
	check_verdict_free(&file);
}

static void same(const char *path)
{
	struct trace_name tn;
	char buf[TRACE_NAME_MAX + 1];

	/* What the reader refuses is not handed on: a thread id past INT32_MAX. */
	EXPECT(!trace_live_name(CLOSURE_NAME_THREAD, 0, 1ull << 32, "x", &tn, buf),
	       "a thread id the reader refuses was handed on");
	for (uint64_t seed = 1; seed <= 20; seed++)
		for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
			same_once(path, seed, &ends[i]);
}

/* ---- memory ---- */

static long peak_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

#define ALIVE 64

/* lives closures (4 events each: init, get, put, finish), ALIVE at a time at reused addresses, of
 * 8 kinds; returns the diagnostics shown (none: every one finished). */
static size_t closures(uint64_t lives)
{
	struct check_verdict v;
	struct check_live live = {.v = &v};
	uint64_t ts = START_NS;
	size_t n;

	check_verdict_begin(&v);
	check_live_consumer.start(&live, 1, "/bin/prog", START_NS);
	for (uint64_t i = 0; i < lives + ALIVE; i++) {
		/* Each step: the finish of closure i - ALIVE, a get and a put of i - ALIVE/2, the
		 * init of i at the address the finished one left (so ALIVE are alive). */
		struct ct_event e = {.tid = 7};

		e.ts = ts += 100;
		if (i >= ALIVE) {
			e.cl = 0x10000 + 0x40 * ((i - ALIVE) % ALIVE);
			e.kind = CT_FINISH;
			e.count = 0;
			e.ip = 0x403000;
			check_live_consumer.event(&live, &e, 0);
		}
		if (i >= ALIVE / 2 && i - ALIVE / 2 < lives) {
			e.cl = 0x10000 + 0x40 * ((i - ALIVE / 2) % ALIVE);
			e.kind = CT_GET;
			e.count = 2;
			e.flags = 1u << 30;
			e.ip = 0x402000;
			check_live_consumer.event(&live, &e, 0);
			e.kind = CT_PUT;
			e.count = 1;
			check_live_consumer.event(&live, &e, 0);
		}
		if (i < lives) {
			e.kind = CT_INIT;
			e.cl = 0x10000 + 0x40 * (i % ALIVE);
			e.ip = 0x401000 + 0x10 * (i % 8);
			e.count = 1;
			e.flags = 1u << 30;
			check_live_consumer.event(&live, &e, 0);
		}
	}
	check_live_consumer.end(&live, &(struct trace_end){.reason = "exit",
							   .exit_code = 0,
							   .events = 4 * lives,
							   .duration_ns = ts - START_NS});
	EXPECT(!check_verdict_judge(&v), "no verdict");
	EXPECT(model_counts(v.m)->finished == lives, "%" PRIu64 " of %" PRIu64 " finished",
	       model_counts(v.m)->finished, lives);
	n = v.diags.n;
	check_verdict_free(&v);
	return n;
}

static void memory(void)
{
	long small, large;

	EXPECT(closures(250000) == 0, "diagnostics on closures that all finished");
	small = peak_kb();
	EXPECT(closures(2000000) == 0, "diagnostics on closures that all finished");
	large = peak_kb();
	printf("peak RSS: %ld KiB after 1 M events, %ld KiB after 8 M more\n", small, large);
	EXPECT(small > 0 && large - small < 4096,
	       "the model grew by %ld KiB with 8 M events of closures that finished",
	       large - small);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "same"))
		same(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "memory"))
		memory();
	else {
		fprintf(stderr, "usage: check_live_test same TRACE | memory\n");
		return 2;
	}
	if (!check_failures)
		printf("PASS %s\n", argv[1]);
	return check_failures ? 1 : 0;
}
