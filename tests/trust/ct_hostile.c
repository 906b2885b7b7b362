/*
 * Hostile traced programs for tests/trust: an unprivileged process that lies to the root
 * recorder through what it controls (its probes' arguments, its memory, its names). One mode per
 * attack; each prints "ready" once the attack runs, then keeps it up until killed:
 *   names              closures whose continuation and source file are named with escape
 *                      sequences (hangs one closure in closure_sync for ps)
 *   module PATH        closure:module records naming PATH (a FIFO) every 5 ms
 *   paths              closure:module records naming distinct paths, as fast as it can
 *   streams N          N closure:batch hits, each naming a buffer address of its own
 *   gaps N S           N closure:batch hits a round over S buffers, each record's seq 2 past the
 *                      last: every hit leaves a gap in its stream
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
 * From here on, the call sites' file is named with escape sequences (the terminal's title, a
 * clear screen), and so is a continuation's symbol.
 */
#line 1 "\033]2;PWNED-FILE\007\033[2J.c"
static void evil_continuation(struct closure *cl) __asm__("\"evil\033]2;PWNED\007\033[31m\"");
static void evil_continuation(struct closure *cl)
{
	closure_return(cl);
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
			STAP_PROBE6(closure, batch, registry, &rec[i], 1L, (long)(i + 1),
				    round * n + i + 1, 0L);
		}
		if (!round)
			ready();
		nap_ms(100);
	}
}

/* Hits whose seqs skip one each: the recorder keeps the gaps open for late records, capped. */
static int gaps(long n, long nbufs)
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
			STAP_PROBE6(closure, batch, registry, r, 1L, (long)(i % nbufs + 1),
				    round * n + i + 1, 0L);
		}
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
	if (argc >= 4 && !strcmp(argv[1], "gaps"))
		return gaps(atol(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: ct_hostile names|module PATH|paths|streams N|gaps N S|faketid "
			"TID|victim|once\n");
	return 2;
}
