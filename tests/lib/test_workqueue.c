/*
 * Workqueues: a pool of named threads that all run work at once, first queued first run on one
 * worker, and workqueue_destroy that runs everything queued, including work queued while it
 * drains, before it returns.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include <closure.h>

#include "check.h"

struct item {
	struct closure cl;
	int id, steps, steps_left;
	int *order, *next; /* shared by the items of one test; written by the one worker */
	pthread_barrier_t *barrier;
	char thread_name[16];
};

static void record_order(struct closure *cl)
{
	struct item *it = container_of(cl, struct item, cl);

	it->order[(*it->next)++] = it->id;
	closure_return(cl);
}

static void test_fifo_on_one_worker(void)
{
	enum { N = 50 };
	struct workqueue *wq = workqueue_create("fifo", 1);
	struct item it[N];
	struct closure parent;
	int order[N], next = 0, i;

	CHECK(wq);
	closure_init_stack(&parent);
	for (i = 0; i < N; i++) {
		it[i] = (struct item){.id = i, .order = order, .next = &next};
		closure_call(&it[i].cl, record_order, wq, &parent);
	}
	closure_sync(&parent);
	CHECK_EQ(next, N);
	for (i = 0; i < N; i++)
		CHECK_EQ(order[i], i);
	workqueue_destroy(wq);
}

static void meet_then_return(struct closure *cl)
{
	struct item *it = container_of(cl, struct item, cl);

	pthread_getname_np(pthread_self(), it->thread_name, sizeof(it->thread_name));
	/* Returns only when every item is running: needs that many workers at once. */
	pthread_barrier_wait(it->barrier);
	closure_return(cl);
}

static void test_threads_run_at_once(void)
{
	enum { THREADS = 4 };
	struct workqueue *wq = workqueue_create("a-rather-long-pool-name", THREADS);
	pthread_barrier_t barrier;
	struct item it[THREADS];
	struct closure parent;
	int i;

	CHECK(wq);
	CHECK_EQ(pthread_barrier_init(&barrier, NULL, THREADS), 0);
	closure_init_stack(&parent);
	for (i = 0; i < THREADS; i++) {
		it[i] = (struct item){.id = i, .barrier = &barrier};
		closure_call(&it[i].cl, meet_then_return, wq, &parent);
	}
	closure_sync(&parent);
	for (i = 0; i < THREADS; i++)
		CHECK_STR_EQ(it[i].thread_name, "a-rather-long-p"); /* 15 characters at most */
	CHECK_EQ(pthread_barrier_destroy(&barrier), 0);
	workqueue_destroy(wq);
}

static void test_at_least_one_thread(void)
{
	struct workqueue *wq = workqueue_create(NULL, 0);
	struct item it = {.id = 7};
	struct closure parent;
	int order[1], next = 0;

	CHECK(wq);
	it.order = order;
	it.next = &next;
	closure_init_stack(&parent);
	closure_call(&it.cl, record_order, wq, &parent);
	closure_sync(&parent);
	CHECK_EQ(next, 1);
	CHECK_EQ(order[0], 7);
	workqueue_destroy(wq);
	workqueue_destroy(NULL); /* a no-op */
}

/* The drain test: each item requeues itself on the workqueue until its steps are done. */
static struct workqueue *drain_wq;
static int gate; /* atomic: the blocker waits for it */
static int steps_run;

static void step(struct closure *cl)
{
	struct item *it = container_of(cl, struct item, cl);

	__atomic_add_fetch(&steps_run, 1, __ATOMIC_RELAXED);
	it->steps++;
	if (--it->steps_left) {
		continue_at(cl, step, drain_wq); /* queued again, possibly while draining */
		return;
	}
	closure_return(cl);
}

static void blocker(struct closure *cl)
{
	while (!__atomic_load_n(&gate, __ATOMIC_ACQUIRE))
		sched_yield();
	closure_return(cl);
}

static void *destroy_in_thread(void *arg)
{
	workqueue_destroy(arg);
	return NULL;
}

static void test_destroy_drains(void)
{
	enum { ITEMS = 100, STEPS = 10 };
	struct item *it = calloc(ITEMS, sizeof(*it));
	struct closure blocking[2];
	struct timespec ms20 = {0, 20 * 1000000L};
	pthread_t t;
	int i;

	CHECK(it);
	drain_wq = workqueue_create("drain", 2);
	CHECK(drain_wq);
	/* Both workers held, so that everything below is still queued when destroy begins. */
	closure_call(&blocking[0], blocker, drain_wq, NULL);
	closure_call(&blocking[1], blocker, drain_wq, NULL);
	for (i = 0; i < ITEMS; i++) {
		it[i].steps_left = STEPS;
		closure_call(&it[i].cl, step, drain_wq, NULL);
	}
	CHECK_EQ(pthread_create(&t, NULL, destroy_in_thread, drain_wq), 0);
	nanosleep(&ms20, NULL); /* let destroy start draining */
	__atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
	CHECK_EQ(pthread_join(t, NULL), 0); /* destroy returned: everything ran */
	CHECK_EQ(__atomic_load_n(&steps_run, __ATOMIC_RELAXED), ITEMS * STEPS);
	for (i = 0; i < ITEMS; i++) {
		CHECK_EQ(it[i].steps, STEPS);
		CHECK_EQ(closure_nr_remaining(&it[i].cl), 0);
	}
	CHECK_EQ(closure_nr_remaining(&blocking[0]), 0);
	CHECK_EQ(closure_nr_remaining(&blocking[1]), 0);
	free(it);
}

int main(void)
{
	test_fifo_on_one_worker();
	test_threads_run_at_once();
	test_at_least_one_thread();
	test_destroy_drains();
	printf("test_workqueue: ok\n");
	return 0;
}
