/*
 * Hostile traced programs for tests/suites/trust: an unprivileged process that lies to the root
 * recorder through what it controls (its probes' arguments, its memory, its names). One mode per
 * attack; each prints "ready" once the attack runs, then keeps it up until killed:
 *   names              closures whose continuation and source file are named with what a terminal
 *                      obeys: ESC and BEL sequences, a lone 0x9b (an 8-bit CSI), a byte 0x85,
 *                      U+202E (right-to-left override), C1 as UTF-8 (U+009B) and a byte that is
 *                      not UTF-8 (0xff) (hangs one closure in closure_sync for ps)
 *   leaks              three closures leaked, each in a function named with what a terminal
 *                      obeys (ct_hostile_leaks.c: bytes that are not UTF-8 among them), then
 *                      exit: three diagnostics for check
 *   module PATH        closure:module records naming PATH (a FIFO) every 5 ms
 *   paths              closure:module records naming distinct paths, as fast as it can
 *   streams N          N closure:batch hits, each naming a buffer address of its own (as its
 *                      own thread: the other modes too, unless said)
 *   gaps N S [R]       N closure:batch hits a round over S buffers, each record's seq 2 past the
 *                      last: every hit leaves a gap in its stream; with R, after the first round
 *                      it waits for a file named "go" in its folder, makes R rounds and exits
 *   bogus              batches of 64 records of random bytes (random ops, times, closures and
 *                      sequence numbers), every 10 ms, as its own thread
 *   many               batches of 256 well-formed get/put records, flat out
 *   cycle              closures whose parents make cycles (a closure its own parent; A under B
 *                      under A), every 10 ms
 *   tidlie TID         every 100 ms, a batch of one record naming thread TID, not one of its
 *                      own (another process's thread): its records must be refused
 *   namelie            every 10 ms, thread names: its own, thread 1's and thread 3000000000's
 *   claims D           every 100 ms, a batch of no record claiming D records dropped by the
 *                      library: its own count, which the recorder may only believe so far
 *   faketid TID        a buffer listed in its registry whose head names thread TID of another
 *                      process, at FAKE_BUF: were the recorder to believe it, BPF would read
 *                      FAKE_BUF in that thread when it exits
 *   victim             (run as root) a buffer-like page at FAKE_BUF in its own memory, a marker
 *                      in its record, its tid on standard output; exits at end of input
 *   once               one closure's life, then exit (installed setuid root by the test)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/sdt.h>
#include <time.h>

#include <closure.h>
#include <closure_batch.h>
#include <closure_probes.h>

/* The operations' numbers in a batch record, from the contract (closure_probes.h). */
enum {
#define OP_NUMBER(name, NAME, a4, a5, a6) CT_##NAME##_OP,
	CLOSURE_PROBE_LIST(OP_NUMBER)
#undef OP_NUMBER
};

void leak_\u202e_rlo(void);
void hostile_leaks(void); /* ct_hostile_leaks.c */

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};

	nanosleep(&ts, NULL);
}

static void ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

/*
 * From here on, the call sites' file is named with escape sequences (the terminal's title, an
 * 8-bit CSI that clears the screen, a right-to-left override, a byte that is not UTF-8), and so
 * are the symbols of a continuation and of three functions that leak.
 */
#line 1 "\033]2;PWNED-FILE\007\233[2J\205\342\200\256\302\233\377.c"
static void evil_continuation(struct closure *cl) __asm__("\"evil\033]2;PWNED\007\033[31m\"");
static void evil_continuation(struct closure *cl)
{
	closure_return(cl);
}

/*
 * A closure leaked in a function named with a right-to-left override (a C identifier may hold
 * it: its debug information names it so), in this file. Two more leak in ct_hostile_leaks.c.
 */
void leak_\u202e_rlo(void)
{
	closure_init(calloc(1, sizeof(struct closure)), NULL);
}

static void *hang_in_sync(void *arg)
{
	struct closure *child = arg;

	struct closure cl;

	closure_init_stack(&cl);
	closure_init(child, &cl); /* never finished: cl waits for it forever */
	closure_sync(&cl);
	return NULL;
}

static _Noreturn void names(void)
{
	static struct closure child;
	pthread_t t;
	bool said = false;

	pthread_create(&t, NULL, hang_in_sync, &child);
	for (;;) {
		struct closure cl;

		closure_init(&cl, NULL);
		continue_at(&cl, evil_continuation, NULL);
		if (!said) {
			ready();
			said = true;
		}
		nap_ms(1);
	}
}

static _Noreturn void module(const char *path)
{
	for (int i = 0;; i++) {
		STAP_PROBE2(closure, module, path, (uint64_t)0x400000);
		if (!i)
			ready();
		nap_ms(5);
	}
}

static _Noreturn void paths(void)
{
	char path[64];

	for (unsigned long i = 0;; i++) {
		snprintf(path, sizeof(path), "/nonexistent/module/%lu", i % 2000000);
		STAP_PROBE2(closure, module, path, (uint64_t)i << 12);
		if (!i)
			ready();
	}
}

/*
 * One batch hit per fake buffer: each names one record at an address of its own (readable, so
 * BPF copies it), as a thread of a number of its own.
 */
static int streams(long n)
{
	struct closure_batch_record *rec = calloc((size_t)n, sizeof(*rec));
	long registry = 0x1000;

	if (!rec)
		return 1;
	for (long round = 0;; round++) {
		for (long i = 0; i < n; i++) {
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			rec[i] = (struct closure_batch_record){
				.ts = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
				.cl = 0x7f0000000000ull + (uint64_t)i * 0x40,
				.seq = (uint32_t)round,
				.count = 1};
			STAP_PROBE6(closure, batch, registry, &rec[i], 1L,
				    (long)syscall(SYS_gettid), round * n + i + 1, 0L);
		}
		if (!round)
			ready();
		nap_ms(100);
	}
}

/* Hits whose seqs skip one each: the recorder keeps the gaps open for late records, capped. */
static int gaps(long n, long nbufs, long rounds)
{
	struct closure_batch_record *rec = calloc((size_t)nbufs, sizeof(*rec));
	long registry = 0x1000;
	uint32_t seq = 0;

	if (!rec || nbufs < 1)
		return 1;
	for (long round = 0;; round++) {
		for (long i = 0; i < n; i++) {
			struct closure_batch_record *r = &rec[i % nbufs];
			struct timespec now;

			if (i % nbufs == 0)
				seq += 2;
			clock_gettime(CLOCK_MONOTONIC, &now);
			*r = (struct closure_batch_record){
				.ts = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
				.cl = 0x7f0000000000ull,
				.seq = seq,
				.count = 1};
			STAP_PROBE6(closure, batch, registry, r, 1L, (long)syscall(SYS_gettid),
				    round * n + i + 1, 0L);
		}
		if (!round)
			ready();
		while (rounds && !round && access("go", F_OK))
			nap_ms(10); /* until the recorder is attached */
		if (rounds && round == rounds)
			return 0;
		nap_ms(rounds ? 10 : 100);
	}
}

/* xorshift64: the same bytes every run. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The batch modes below: n records of rec, handed over as this thread's, round by round. */
static void hand(long registry, struct closure_batch_record *rec, long n, long round)
{
	STAP_PROBE6(closure, batch, registry, rec, n, (long)syscall(SYS_gettid), round, 0L);
}

static uint64_t now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

_Noreturn static void bogus(void)
{
	static struct closure_batch_record rec[64];
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	for (long round = 0;; round++) {
		for (int i = 0; i < 64; i++) {
			uint64_t *w = (uint64_t *)&rec[i];

			for (size_t k = 0; k < sizeof(rec[i]) / 8; k++)
				w[k] = next_random(&seed);
			if (i % 2) /* half of them near now, the rest anywhere in time */
				rec[i].ts = now_ns() - (next_random(&seed) & 0xffffff);
		}
		hand(0x1000, rec, 64, round);
		if (!round)
			ready();
		nap_ms(10);
	}
}

_Noreturn static void many(void)
{
	static struct closure_batch_record rec[256];
	uint32_t seq = 0;

	for (long round = 0;; round++) {
		for (int i = 0; i < 256; i++)
			rec[i] = (struct closure_batch_record){.ts = now_ns(),
							       .cl = 0x7f0000001000ull,
							       .count = 2 - (uint32_t)(i % 2),
							       .seq = seq++,
							       .op = i % 2 ? CT_PUT_OP : CT_GET_OP};
		hand(0x1000, rec, 256, round);
		if (!round)
			ready();
	}
}

_Noreturn static void cycle(void)
{
	static struct closure_batch_record rec[3];
	const uint64_t a = 0x7f0000002000ull, b = 0x7f0000003000ull, c = 0x7f0000004000ull;
	uint32_t seq = 0;

	for (long round = 0;; round++) {
		uint64_t t = now_ns();

		rec[0] = (struct closure_batch_record){.ts = t, .cl = a, .x4 = b, .count = 1,
						       .seq = seq++, .op = CT_INIT_OP};
		rec[1] = (struct closure_batch_record){.ts = t + 1, .cl = b, .x4 = a, .count = 1,
						       .seq = seq++, .op = CT_INIT_OP};
		rec[2] = (struct closure_batch_record){.ts = t + 2, .cl = c, .x4 = c, .count = 1,
						       .seq = seq++, .op = CT_INIT_OP};
		hand(0x1000, rec, 3, round);
		if (!round)
			ready();
		nap_ms(10);
	}
}

/* Batches whose records say they are thread tid's, which is not a thread of this process. */
_Noreturn static void tidlie(long tid)
{
	static struct closure_batch_record rec[1];
	long registry = 0x1000;

	for (uint32_t round = 0;; round++) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		rec[0] = (struct closure_batch_record){.ts = (uint64_t)now.tv_sec * 1000000000u +
							     (uint64_t)now.tv_nsec,
						       .cl = 0x7f0000000000ull,
						       .seq = round,
						       .count = 1};
		STAP_PROBE6(closure, batch, registry, rec, 1L, tid, (long)round + 1, 0L);
		if (!round)
			ready();
		nap_ms(100);
	}
}

/*
 * Batches of thread names: its own, then one for thread 1 (init) and one for a thread id no
 * thread can have (3,000,000,000): only a thread's own name may name it.
 */
_Noreturn static void namelie(void)
{
	static struct closure_batch_name rec[3];
	const uint64_t ids[3] = {(uint64_t)syscall(SYS_gettid), 1, 3000000000ull};
	uint32_t seq = 0;

	for (long round = 0;; round++) {
		for (int i = 0; i < 3; i++) {
			rec[i] = (struct closure_batch_name){.ts = now_ns(),
							     .id = ids[i],
							     .seq = seq++,
							     .op = CLOSURE_BATCH_OP_NAME,
							     .kind = CLOSURE_NAME_THREAD};
			snprintf(rec[i].name, sizeof(rec[i].name), "name%d", i);
		}
		hand(0x1000, (struct closure_batch_record *)rec, 3, round);
		if (!round)
			ready();
		nap_ms(10);
	}
}

/* Batches that claim drops: the recorder believes them only up to what the CPU time allows. */
_Noreturn static void claims(unsigned long dropped)
{
	static struct closure_batch_record rec;
	long registry = 0x1000;

	for (long round = 0;; round++) {
		STAP_PROBE6(closure, batch, registry, &rec, 0L, (long)syscall(SYS_gettid), round,
			    (long)dropped);
		if (!round)
			ready();
		nap_ms(100);
	}
}

/* The same address in the victim and in the hostile process (free in both: nothing maps there). */
#define FAKE_BUF    ((void *)0x5e5e00000000ull)
#define ROOT_SECRET "ROOT-SECRET-7f3a9c"

/* A buffer at FAKE_BUF of this process; NULL when the address is taken. */
static struct closure_batch_buf *buffer_at_fake(void)
{
	struct closure_batch_buf *b =
		mmap(FAKE_BUF, sizeof(*b), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	return b == FAKE_BUF ? b : NULL;
}

/* What a root process could hold at that address: a head that passes for its thread's, a secret. */
static int victim(void)
{
	struct closure_batch_buf *b = buffer_at_fake();
	char line[16];

	if (!b)
		return 1;
	b->owner = 1;
	b->tid = (uint32_t)syscall(SYS_gettid);
	b->n = 1;
	memcpy(&b->rec[0], ROOT_SECRET, sizeof(ROOT_SECRET));
	printf("%u\n", b->tid);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}

/* The registry libclosure exports (docs/probes.md): the fake buffer joins its list. */
extern struct closure_batch_registry closure_batch_registry_public;

static int fake_tid(uint32_t tid)
{
	struct closure_batch_registry *g = &closure_batch_registry_public;
	struct closure_batch_buf *b = buffer_at_fake();
	struct closure cl;

	if (!b)
		return 1;
	closure_init(&cl, NULL); /* the registry is in use: a recorder finds it */
	closure_return(&cl);
	b->owner = 1;
	b->tid = tid;
	b->n = 1;
	b->first_ts = 1;
	b->rec[0].seq = 0;
	b->next = __atomic_load_n(&g->head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&g->head, b, __ATOMIC_RELEASE);
	ready();
	for (;;)
		nap_ms(100);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "once")) {
		struct closure cl;

		closure_init(&cl, NULL);
		closure_return(&cl);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "names"))
		names();
	if (argc >= 2 && !strcmp(argv[1], "leaks")) {
		leak_\u202e_rlo();
		hostile_leaks();
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "module"))
		module(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "paths"))
		paths();
	if (argc >= 3 && !strcmp(argv[1], "streams"))
		return streams(atol(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "victim"))
		return victim();
	if (argc >= 3 && !strcmp(argv[1], "faketid"))
		return fake_tid((uint32_t)atol(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "bogus"))
		bogus();
	if (argc >= 2 && !strcmp(argv[1], "many"))
		many();
	if (argc >= 2 && !strcmp(argv[1], "cycle"))
		cycle();
	if (argc >= 3 && !strcmp(argv[1], "tidlie"))
		tidlie(atol(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "namelie"))
		namelie();
	if (argc >= 3 && !strcmp(argv[1], "claims"))
		claims(strtoul(argv[2], NULL, 0));
	if (argc >= 4 && !strcmp(argv[1], "gaps"))
		return gaps(atol(argv[2]), atol(argv[3]), argc >= 5 ? atol(argv[4]) : 0);
	fprintf(stderr, "usage: ct_hostile names|leaks|module PATH|paths|streams N|gaps N S [R]|"
			"bogus|many|cycle|tidlie TID|namelie|claims D|faketid TID|victim|once\n");
	return 2;
}
