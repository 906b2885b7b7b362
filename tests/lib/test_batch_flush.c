/*
 * When a thread's batch of records leaves (lib/batch.h, docs/probes.md "Batched events"): a call
 * that blocks (closure_sync, closure_return_sync, an idle workqueue worker) first waits until the
 * thread's records are due, its oldest record's time plus the age bound; a block that ends sooner
 * hands nothing over, one that lasts hands the records over while it is still blocked, not before
 * they are due.
 *
 * Batching is switched on as a tracer would (the batch semaphore raised), without a tracer: the
 * registry's handed total counts every record handed over. Linked with the static library, whose
 * private symbols the test reads. The brief cases assert only on blocks that ended before the
 * records were due (the clock decides which they were); the long ones wait for the handover.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <closure.h>

#include "batch.h"
#include "check.h"

#define BOUND_NS     (2 * 1000 * 1000ull)	  /* lib/batch.c's BATCH_MAX_AGE_NS */
#define PATIENCE_NS  (30 * 1000 * 1000 * 1000ull) /* a wait that is not a measurement */
#define BRIEF_WANTED 30
#define TRIES	     1000

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t handed(void)
{
	return __atomic_load_n(&closure_batch_registry.handed, __ATOMIC_RELAXED);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The scheduler state of one of our threads ('S': asleep, here always in a futex). */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CHECK(n > 0);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static void wait_asleep(pid_t tid)
{
	uint64_t start = now_ns();

	while (thread_state(tid) != 'S') {
		if (now_ns() - start > PATIENCE_NS)
			check_fail("thread %d never fell asleep", (int)tid);
		sched_yield();
	}
}

/* Waits until handed() reaches want (never past it); returns when it was seen. */
static uint64_t wait_handed(uint64_t want, const char *what)
{
	uint64_t start = now_ns(), h;

	while ((h = handed()) < want) {
		if (now_ns() - start > PATIENCE_NS)
			check_fail("%s: %ju records handed over, want %ju", what, (uintmax_t)h,
				   (uintmax_t)want);
		sched_yield();
	}
	CHECK_EQ(h, want);
	return now_ns();
}

/* ---- closure_sync and closure_return_sync, woken by a helper thread ---- */

enum wake_mode { WAKE_AT_ONCE, WAKE_AFTER_HANDOVER };

static struct {
	struct closure *cl;
	pid_t sleeper;
	enum wake_mode mode;
	uint64_t want; /* WAKE_AFTER_HANDOVER: the handed total to wait for */
	int go, ready, done;
	uint64_t seen_ns; /* when the handover was seen */
} waker;

static void *waker_main(void *arg)
{
	(void)arg;
	for (int round = 1;; round++) {
		while (__atomic_load_n(&waker.go, __ATOMIC_ACQUIRE) < round)
			sched_yield();
		if (!waker.cl)
			return NULL;
		closure_batch_flush(); /* nothing of this thread left from the last round */
		__atomic_store_n(&waker.ready, round, __ATOMIC_RELEASE);
		/* Acquire: want, written before the sleeper's sync, is visible from here. */
		while (!(__atomic_load_n(CLOSURE_WORD(waker.cl), __ATOMIC_ACQUIRE) &
			 CLOSURE_SLEEPING))
			sched_yield();
		wait_asleep(waker.sleeper);
		if (waker.mode == WAKE_AFTER_HANDOVER) {
			waker.seen_ns = wait_handed(waker.want, "blocked past the bound");
			/* The sleeper is still asleep: it handed over while blocked. */
			CHECK(closure_flags(waker.cl) & CLOSURE_SLEEPING);
		}
		closure_put(waker.cl);
		__atomic_store_n(&waker.done, round, __ATOMIC_RELEASE);
	}
}

static int round_;

/*
 * The waker's round: it empties its buffer, then waits for us to sleep on cl and wakes us (after
 * WAKE_AFTER_HANDOVER, when waker.want records are handed over: set it before sleeping).
 */
static void waker_arm(struct closure *cl, enum wake_mode mode)
{
	waker.cl = cl;
	waker.mode = mode;
	__atomic_store_n(&waker.go, ++round_, __ATOMIC_RELEASE);
	while (__atomic_load_n(&waker.ready, __ATOMIC_ACQUIRE) < round_)
		sched_yield();
}

static void waker_finish(void)
{
	while (__atomic_load_n(&waker.done, __ATOMIC_ACQUIRE) < round_)
		sched_yield();
}

/* A sync that sleeps briefly hands nothing over; the records stay with the thread. */
static void test_sync_brief(void)
{
	struct closure cl;
	int brief = 0, tries;

	closure_init_stack(&cl);
	for (tries = 0; tries < TRIES && brief < BRIEF_WANTED; tries++) {
		uint64_t h0, h1, t0;

		waker_arm(&cl, WAKE_AT_ONCE);
		closure_batch_flush();
		h0 = handed();
		t0 = now_ns();
		closure_get(&cl);
		closure_sync(&cl); /* asleep until the waker puts */
		h1 = handed();
		if (now_ns() < t0 + BOUND_NS) { /* h1 was read before any record was due */
			brief++;
			CHECK_EQ(h1, h0);
		}
		waker_finish();
	}
	if (brief < 1)
		check_fail("no sleep in closure_sync ended within 2 ms in %d tries", tries);
	printf("ok: %d brief sleeps in closure_sync of %d handed nothing over\n", brief, tries);
}

/* A sync that sleeps past the bound hands its records over while asleep, not before they are due.
 */
static void test_sync_long(void)
{
	struct closure cl;
	uint64_t h0, t0;

	closure_init_stack(&cl);
	waker_arm(&cl, WAKE_AFTER_HANDOVER);
	closure_batch_flush();
	h0 = handed();
	waker.want = h0 + 2; /* get and sync_begin */
	t0 = now_ns();
	closure_get(&cl);
	closure_sync(&cl);
	waker_finish();
	CHECK(waker.seen_ns >= t0 + BOUND_NS);
	CHECK_EQ(handed(), h0 + 2); /* sync_end stays with us, the put with the waker */
	printf("ok: closure_sync handed 2 records over while asleep, %.2f ms after the first\n",
	       (waker.seen_ns - t0) / 1e6);
}

/* A timeout longer than the bound: the records leave at the bound, the sync times out later. */
static void test_sync_timeout(void)
{
	struct closure cl;
	uint64_t h0;

	closure_init_stack(&cl);
	closure_batch_flush();
	h0 = handed();
	closure_get(&cl);
	CHECK_EQ(closure_sync_timeout(&cl, 50), -ETIME);
	CHECK_EQ(handed(), h0 + 2); /* get and sync_begin */
	closure_put(&cl);
	closure_sync(&cl);
	printf("ok: closure_sync_timeout(50 ms) handed its 2 records over before timing out\n");
}

static void test_return_sync_long(void)
{
	struct closure cl;
	uint64_t h0, t0;

	closure_init(&cl, NULL);
	waker_arm(&cl, WAKE_AFTER_HANDOVER);
	closure_batch_flush();
	h0 = handed();
	waker.want = h0 + 2; /* get and continue_at (return) */
	t0 = now_ns();
	closure_get(&cl);
	closure_return_sync(&cl); /* asleep until the waker puts */
	waker_finish();
	CHECK(waker.seen_ns >= t0 + BOUND_NS);
	printf("ok: closure_return_sync handed 2 records over while asleep\n");
}

/* ---- an idle workqueue worker ---- */

static int ran;

static void work(struct closure *cl)
{
	closure_return(cl); /* the worker's records: run, continue_at, finish */
	__atomic_store_n(&ran, 1, __ATOMIC_RELEASE);
}

static void run_on(struct workqueue *wq, struct closure *cl)
{
	uint64_t start = now_ns();

	__atomic_store_n(&ran, 0, __ATOMIC_RELAXED);
	closure_call(cl, work, wq, NULL); /* our records: init, continue_at */
	while (!__atomic_load_n(&ran, __ATOMIC_ACQUIRE)) {
		if (now_ns() - start > PATIENCE_NS)
			check_fail("the worker never ran the closure");
		sched_yield();
	}
}

static pid_t worker_tid;

static void learn_tid(struct closure *cl)
{
	closure_return(cl);
	__atomic_store_n(&worker_tid, gettid_(), __ATOMIC_RELEASE); /* after: cl may be reused */
}

/*
 * Work that comes before the worker's records are due costs no handover; an idle worker hands
 * its records over when they are due, while still idle (every round checks it).
 */
static void test_worker(void)
{
	struct workqueue *wq = workqueue_create("flush-test", 1);
	struct closure a, b;
	int brief = 0, tries;
	uint64_t h0;

	CHECK(wq != NULL);
	closure_batch_flush();
	h0 = handed();
	closure_call(&a, learn_tid, wq, NULL);
	while (!__atomic_load_n(&worker_tid, __ATOMIC_ACQUIRE))
		sched_yield();
	wait_asleep(worker_tid);
	closure_batch_flush();
	/* our 2, the worker's 3 and its 2 names (its thread's, its workqueue's: lib/batch.c) */
	wait_handed(h0 + 7, "the first closure's");
	for (tries = 0; tries < TRIES && brief < BRIEF_WANTED; tries++) {
		uint64_t h1, t0 = now_ns(), seen;

		h0 = handed();
		run_on(wq, &a);
		wait_asleep(worker_tid); /* idle between the two */
		run_on(wq, &b);
		h1 = handed();
		if (now_ns() < t0 + BOUND_NS) { /* h1 was read before any record was due */
			brief++;
			CHECK_EQ(h1, h0);
		}
		closure_batch_flush(); /* our 4; the worker hands its 6 over when they are due */
		seen = wait_handed(h0 + 10, "the idle worker's");
		CHECK(seen >= t0 + BOUND_NS);
	}
	if (brief < 1)
		check_fail("no two runs on the worker within 2 ms in %d tries", tries);
	workqueue_destroy(wq);
	printf("ok: %d brief idles of a worker handed nothing over; every idle handed over\n",
	       brief);
}

int main(void)
{
	pthread_t t;

	/* Batching on, as when a tracer arms closure:batch. */
	__atomic_add_fetch(&closure_batch_semaphore, 1, __ATOMIC_RELAXED);
	waker.sleeper = gettid_();
	CHECK_EQ(pthread_create(&t, NULL, waker_main, NULL), 0);
	test_sync_brief();
	test_sync_long();
	test_sync_timeout();
	test_return_sync_long();
	waker.cl = NULL;
	__atomic_store_n(&waker.go, ++round_, __ATOMIC_RELEASE);
	CHECK_EQ(pthread_join(t, NULL), 0);
	test_worker();
	return 0;
}
