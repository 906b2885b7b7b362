/*
 * Waitlists: closure_wait takes a reference and sets WAITING, once per list; closure_wake_up
 * puts them back first come first woken; closure_wait_event waits for a condition that another
 * thread makes true.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include <closure.h>

#include "check.h"

static void test_wait_and_wake_one(void)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	struct closure cl;

	closure_init(&cl, NULL);
	CHECK(closure_wait(&list, &cl));
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING | CLOSURE_WAITING);
	CHECK_PTR_EQ(cl.waitlist, &list);
	CHECK_PTR_EQ(list.list.first, &cl.list);

	/* Already on this list: false, and nothing changes. */
	CHECK(!closure_wait(&list, &cl));
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING | CLOSURE_WAITING);
	CHECK_PTR_EQ(list.list.first, &cl.list);
	CHECK_PTR_EQ(cl.list.next, NULL);

	closure_wake_up(&list);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK_PTR_EQ(list.list.first, NULL);

	/* Woken, it may wait again, on this list or another. */
	struct closure_waitlist other = CLOSURE_WAITLIST_INIT;

	CHECK(closure_wait(&other, &cl));
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	CHECK_PTR_EQ(cl.waitlist, &other);
	closure_wake_up(&list); /* the wrong list: nothing happens */
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	closure_wake_up(&other);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	closure_wake_up(&other); /* empty */
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	closure_return(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
}

enum { WAITERS = 16 };

struct waiter {
	struct closure cl;
	int id;
	int *order, *next;
	pthread_t thread;
};

static void woken(struct closure *cl)
{
	struct waiter *w = container_of(cl, struct waiter, cl);

	w->order[(*w->next)++] = w->id;
	w->thread = pthread_self();
	closure_return(cl);
}

static void test_wake_many_fifo(void)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	struct waiter w[WAITERS];
	struct closure parent;
	int order[WAITERS], next = 0, i;
	/* A shuffled waiting order, so that FIFO is not confused with address order. */
	static const int wait_order[WAITERS] = {5, 0, 12, 3, 15, 9,  1, 14,
						7, 2, 11, 4, 8,	 13, 6, 10};

	closure_init_stack(&parent);
	for (i = 0; i < WAITERS; i++) {
		struct waiter *x = &w[wait_order[i]];

		x->id = i;
		x->order = order;
		x->next = &next;
		closure_init(&x->cl, &parent);
		CHECK(closure_wait(&list, &x->cl));
		continue_at(&x->cl, woken, NULL); /* the list's reference keeps it waiting */
		CHECK_EQ(closure_nr_remaining(&x->cl), 1);
		CHECK_EQ(closure_flags(&x->cl), CLOSURE_WAITING);
	}
	CHECK_EQ(next, 0);
	CHECK_EQ(closure_nr_remaining(&parent), 1 + WAITERS);
	closure_wake_up(&list); /* every fn runs inline, here */
	CHECK_EQ(next, WAITERS);
	for (i = 0; i < WAITERS; i++) {
		CHECK_EQ(order[i], i);
		CHECK(pthread_equal(w[i].thread, pthread_self()));
		CHECK_EQ(closure_nr_remaining(&w[i].cl), 0);
	}
	CHECK_PTR_EQ(list.list.first, NULL);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	closure_sync(&parent);
}

/* A woken continuation that waits on the same list again: it is not woken twice by one call. */
struct rewaiter {
	struct closure cl;
	struct closure_waitlist *list;
	int runs;
};

static void rewait(struct closure *cl)
{
	struct rewaiter *r = container_of(cl, struct rewaiter, cl);

	if (++r->runs == 3) {
		closure_return(cl);
		return;
	}
	closure_wait(r->list, cl);
	continue_at(cl, rewait, NULL);
}

static void test_wait_again_from_continuation(void)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	struct rewaiter r = {.list = &list};

	closure_init(&r.cl, NULL);
	closure_wait(&list, &r.cl);
	continue_at(&r.cl, rewait, NULL);
	closure_wake_up(&list);
	CHECK_EQ(r.runs, 1);
	CHECK_PTR_EQ(list.list.first, &r.cl.list);
	closure_wake_up(&list);
	CHECK_EQ(r.runs, 2);
	closure_wake_up(&list);
	CHECK_EQ(r.runs, 3);
	CHECK_EQ(closure_nr_remaining(&r.cl), 0);
	CHECK_PTR_EQ(list.list.first, NULL);
}

static void test_wake_onto_workqueue(void)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	struct workqueue *wq = workqueue_create("wake-wq", 1);
	struct waiter w[4];
	struct closure parent;
	int order[4], next = 0, i;

	CHECK(wq);
	closure_init_stack(&parent);
	for (i = 0; i < 4; i++) {
		w[i].id = i;
		w[i].order = order;
		w[i].next = &next;
		closure_init(&w[i].cl, &parent);
		closure_wait(&list, &w[i].cl);
		continue_at(&w[i].cl, woken, wq);
	}
	closure_wake_up(&list);
	closure_sync(&parent);
	CHECK_EQ(next, 4);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(order[i], i); /* one worker, queued in wake-up order */
		CHECK(!pthread_equal(w[i].thread, pthread_self()));
	}
	workqueue_destroy(wq);
}

struct event {
	struct closure_waitlist list;
	int ready;	    /* the condition; atomic */
	int spurious_wakes; /* wake-ups sent before the condition was true */
};

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void *make_ready(void *arg)
{
	struct event *e = arg;
	int i;

	for (i = 0; i < e->spurious_wakes; i++) {
		sleep_ms(2);
		closure_wake_up(&e->list);
	}
	sleep_ms(10);
	__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
	closure_wake_up(&e->list);
	return NULL;
}

static int evaluations;

static int is_ready(struct event *e)
{
	evaluations++;
	return __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE);
}

static void test_wait_event(int spurious_wakes)
{
	struct event e = {.list = CLOSURE_WAITLIST_INIT, .spurious_wakes = spurious_wakes};
	pthread_t t;

	evaluations = 0;
	CHECK_EQ(pthread_create(&t, NULL, make_ready, &e), 0);
	closure_wait_event(&e.list, is_ready(&e));
	CHECK_EQ(__atomic_load_n(&e.ready, __ATOMIC_RELAXED), 1);
	CHECK(evaluations >= 2); /* false at first: it waited */
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_PTR_EQ(e.list.list.first, NULL); /* it left the list */

	/* Already true: returns at once, never on the list. */
	evaluations = 0;
	closure_wait_event(&e.list, is_ready(&e));
	CHECK_EQ(evaluations, 1);
	CHECK_PTR_EQ(e.list.list.first, NULL);
}

int main(void)
{
	test_wait_and_wake_one();
	test_wake_many_fifo();
	test_wait_again_from_continuation();
	test_wake_onto_workqueue();
	test_wait_event(0);
	test_wait_event(3);
	printf("test_waitlist: ok\n");
	return 0;
}
