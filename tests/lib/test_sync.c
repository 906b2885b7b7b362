/*
 * closure_sync sleeps (SLEEPING set, the running reference given up) until a put from another
 * thread wakes it, and returns only once every child has written its data; closure_sync_timeout
 * returns 0 when synced and -ETIME on timeout, handing the running reference back so that
 * closure_sync works afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <closure.h>

#include "check.h"

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

struct putter {
	struct closure *cl;
	int refs;	  /* puts it makes */
	bool wait_asleep; /* first wait until the owner sleeps in closure_sync */
	int done;	  /* the puts are made (read after join) */
	unsigned count_seen_asleep;
};

static void *put_refs(void *arg)
{
	struct putter *p = arg;
	int i;

	if (p->wait_asleep) {
		while (!(closure_flags(p->cl) & CLOSURE_SLEEPING))
			sched_yield();
		/* Asleep: only the outstanding references remain, the running one is given up. */
		p->count_seen_asleep = closure_nr_remaining(p->cl);
	}
	for (i = 0; i < p->refs; i++)
		closure_put(p->cl);
	p->done = 1;
	return NULL;
}

static void test_sync_nothing_outstanding(void)
{
	struct closure cl, zeroed;

	closure_init_stack(&cl);
	closure_sync(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK_EQ(closure_sync_timeout(&cl, 0), 0);
	CHECK_EQ(closure_nr_remaining(&cl), 1);

	memset(&zeroed, 0, sizeof(zeroed)); /* never initialised: sync is a no-op */
	closure_sync(&zeroed);
	CHECK_EQ(zeroed.remaining.counter, 0);
}

static void test_sync_woken_by_put(void)
{
	struct closure cl;
	struct putter p = {.cl = &cl, .refs = 3, .wait_asleep = true};
	pthread_t t;

	closure_init_stack(&cl);
	closure_get(&cl);
	closure_get(&cl);
	closure_get(&cl);
	CHECK_EQ(pthread_create(&t, NULL, put_refs, &p), 0);
	closure_sync(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(p.count_seen_asleep, 3);
}

static void test_sync_many_putters(void)
{
	enum { THREADS = 8, REFS = 100 };
	struct closure cl;
	struct putter p[THREADS];
	pthread_t t[THREADS];
	int i;

	closure_init_stack(&cl);
	for (i = 0; i < THREADS; i++) {
		int j;

		p[i] = (struct putter){.cl = &cl, .refs = REFS};
		for (j = 0; j < REFS; j++)
			closure_get(&cl);
	}
	CHECK_EQ(closure_nr_remaining(&cl), 1 + THREADS * REFS);
	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, put_refs, &p[i]), 0);
	closure_sync(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	for (i = 0; i < THREADS; i++) {
		CHECK_EQ(pthread_join(t[i], NULL), 0);
		CHECK_EQ(p[i].done, 1);
	}
}

static int continuation_runs;

static void must_not_run(struct closure *cl)
{
	(void)cl;
	continuation_runs++;
}

static void test_sync_keeps_continuation(void)
{
	struct closure cl;
	struct putter p = {.cl = &cl, .refs = 1, .wait_asleep = true};
	pthread_t t;

	/* The last put wakes the sleeper instead of running fn, and leaves fn and wq alone. */
	closure_init(&cl, NULL);
	set_closure_fn(&cl, must_not_run, NULL);
	closure_get(&cl);
	CHECK_EQ(pthread_create(&t, NULL, put_refs, &p), 0);
	closure_sync(&cl);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(continuation_runs, 0);
	CHECK_PTR_EQ(cl.fn, must_not_run);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	closure_return(&cl);
	CHECK_EQ(continuation_runs, 0);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
}

static void test_sync_waits_for_children(void)
{
	enum { CHILDREN = 5 };
	struct closure parent, child[CHILDREN];
	struct workqueue *wq = workqueue_create("sync-wq", 2);
	int i;

	CHECK(wq);
	closure_init_stack(&parent);
	for (i = 0; i < CHILDREN; i++) {
		closure_init(&child[i], &parent);
		continue_at_nobarrier(&child[i], closure_return, wq);
	}
	closure_sync(&parent);
	for (i = 0; i < CHILDREN; i++)
		CHECK_EQ(closure_nr_remaining(&child[i]), 0);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	workqueue_destroy(wq);
}

/*
 * closure_sync returns only once every child's continuation has written its data and returned:
 * plain writes, checked after each sync (ThreadSanitizer sees the order too, make test-tsan).
 */
struct data_child {
	struct closure cl;
	unsigned round;
	unsigned data[16];
};

static void write_data(struct closure *cl)
{
	struct data_child *c = container_of(cl, struct data_child, cl);
	unsigned i;

	for (i = 0; i < 16; i++)
		c->data[i] = c->round * 16 + i;
	closure_return(cl);
}

static void test_sync_sees_children_writes(void)
{
	enum { ROUNDS = 2000, CHILDREN = 8 };
	static struct data_child child[CHILDREN];
	struct workqueue *wq = workqueue_create("sync-data", 4);
	unsigned round, i, j, wrong = 0;

	CHECK(wq);
	for (round = 1; round <= ROUNDS; round++) {
		struct closure parent;

		closure_init_stack(&parent);
		for (i = 0; i < CHILDREN; i++) {
			child[i].round = round;
			closure_call(&child[i].cl, write_data, wq, &parent);
		}
		closure_sync(&parent);
		CHECK_EQ(closure_nr_remaining(&parent), 1);
		for (i = 0; i < CHILDREN; i++) {
			CHECK_EQ(closure_nr_remaining(&child[i].cl), 0);
			for (j = 0; j < 16; j++)
				wrong += child[i].data[j] != round * 16 + j;
		}
	}
	CHECK_EQ(wrong, 0);
	workqueue_destroy(wq);
}

static void test_sync_timeout_synced(void)
{
	struct closure cl;
	struct putter p = {.cl = &cl, .refs = 2, .wait_asleep = true};
	pthread_t t;

	closure_init_stack(&cl);
	closure_get(&cl);
	closure_get(&cl);
	CHECK_EQ(pthread_create(&t, NULL, put_refs, &p), 0);
	CHECK_EQ(closure_sync_timeout(&cl, 60 * 1000), 0);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(p.count_seen_asleep, 2);
}

static void test_sync_timeout_expires(void)
{
	struct closure cl;
	struct putter p = {.cl = &cl, .refs = 2};
	pthread_t t;
	long start;

	closure_init_stack(&cl);
	closure_get(&cl);
	closure_get(&cl);
	start = now_ms();
	CHECK_EQ(closure_sync_timeout(&cl, 30), -ETIME);
	CHECK(now_ms() - start >= 30); /* it did wait the time out */
	/* The other references are still out and we own the running one again. */
	CHECK_EQ(closure_nr_remaining(&cl), 3);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK_EQ(closure_sync_timeout(&cl, 0), -ETIME);
	CHECK_EQ(closure_nr_remaining(&cl), 3);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);

	/* Still usable: a plain sync is woken by the puts. */
	CHECK_EQ(pthread_create(&t, NULL, put_refs, &p), 0);
	closure_sync(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK_EQ(pthread_join(t, NULL), 0);
}

struct late_putter {
	struct closure *cl;
	int go; /* atomic */
};

static void *put_when_told(void *arg)
{
	struct late_putter *p = arg;

	while (!__atomic_load_n(&p->go, __ATOMIC_ACQUIRE))
		;
	closure_put(p->cl);
	return NULL;
}

static void test_sync_timeout_races_last_put(void)
{
	int round, timeouts = 0;

	/* The put lands around the time out: either outcome must leave a consistent closure. */
	for (round = 0; round < 200; round++) {
		struct closure cl;
		struct late_putter p = {.cl = &cl};
		pthread_t t;
		int ret;

		closure_init_stack(&cl);
		closure_get(&cl);
		CHECK_EQ(pthread_create(&t, NULL, put_when_told, &p), 0);
		__atomic_store_n(&p.go, 1, __ATOMIC_RELEASE);
		ret = closure_sync_timeout(&cl, round % 3);
		CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
		if (ret == -ETIME) {
			timeouts++;
			closure_sync(&cl); /* the put may still be on its way */
		} else {
			CHECK_EQ(ret, 0);
		}
		CHECK_EQ(closure_nr_remaining(&cl), 1);
		CHECK_EQ(pthread_join(t, NULL), 0);
	}
	printf("sync_timeout racing the last put: %d of 200 timed out\n", timeouts);
}

int main(void)
{
	test_sync_nothing_outstanding();
	test_sync_woken_by_put();
	test_sync_many_putters();
	test_sync_keeps_continuation();
	test_sync_waits_for_children();
	test_sync_sees_children_writes();
	test_sync_timeout_synced();
	test_sync_timeout_expires();
	test_sync_timeout_races_last_put();
	printf("test_sync: ok\n");
	return 0;
}
