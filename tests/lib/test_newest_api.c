/*
 * The newest kernel API (Linux 6.8 and later, bcachefs) next to the older one, in one program
 * with no adapter: CLOSURE_CALLBACK and closure_type continuations mixed with
 * void fn(struct closure *) ones, a callback called directly with &cl->work,
 * closure_return_sync, closure_wait_event_timeout, closure_init_stack_release,
 * __closure_wake_up, closure_set_stopped, closure_sync_unbounded and closure_debug_destroy.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <closure.h>

#include "check.h"

static struct workqueue *wq;

struct request {
	int steps[4]; /* which step ran in which order: 1 old, 2 new, ... */
	int nsteps;
	struct closure cl;
	bool freed;
};

static void note(struct request *r, int step)
{
	r->steps[r->nsteps++] = step;
}

static CLOSURE_CALLBACK(new_last);

/* The older form. */
static void old_step(struct closure *cl)
{
	struct request *r = container_of(cl, struct request, cl);

	note(r, 1);
	continue_at(cl, new_last, wq); /* an old-style function hands on to a new-style one */
}

/* The newest form: closure_type gives both cl and the request. */
static CLOSURE_CALLBACK(new_first)
{
	closure_type(r, struct request, cl);

	note(r, 2);
	continue_at(cl, old_step, NULL);
}

static CLOSURE_CALLBACK(new_last)
{
	closure_type(r, struct request, cl);

	note(r, 3);
	closure_return(cl);
}

static void test_mixed_forms(void)
{
	struct closure parent;
	struct request r = {.nsteps = 0};

	closure_init_stack(&parent);
	closure_init(&r.cl, &parent);
	continue_at(&r.cl, new_first, wq);
	closure_sync(&parent);
	CHECK_EQ(r.nsteps, 3);
	CHECK_EQ(r.steps[0], 2);
	CHECK_EQ(r.steps[1], 1);
	CHECK_EQ(r.steps[2], 3);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	/* set_closure_fn records either form as it is */
	closure_init(&r.cl, NULL);
	set_closure_fn(&r.cl, new_first, NULL);
	CHECK_PTR_EQ(r.cl.fn, new_first);
	CHECK_EQ(r.cl.fn_takes_closure, 0);
	set_closure_fn(&r.cl, old_step, NULL);
	CHECK_PTR_EQ((void *)r.cl.fn, (void *)old_step);
	CHECK_EQ(r.cl.fn_takes_closure, 1);
	closure_return(&r.cl);
	printf("ok: mixed forms\n");
}

/* bcache calls a callback directly, fn(&cl->work): the callback gets its own closure. */
static CLOSURE_CALLBACK(direct)
{
	closure_type(r, struct request, cl);

	note(r, 4);
	CHECK_PTR_EQ(cl, &r->cl);
	closure_return(cl);
}

static void test_direct_call(void)
{
	struct request r = {.nsteps = 0};

	closure_init(&r.cl, NULL);
	direct(&r.cl.work);
	CHECK_EQ(r.nsteps, 1);
	CHECK_EQ(r.steps[0], 4);
	CHECK_EQ(closure_nr_remaining(&r.cl), 0);
	printf("ok: direct call\n");
}

/* A destructor in the newest form runs, before the parent is put. */
static struct closure *destructor_parent;
static unsigned parent_count_in_destructor;

static CLOSURE_CALLBACK(free_request)
{
	closure_type(r, struct request, cl);

	parent_count_in_destructor = closure_nr_remaining(destructor_parent);
	r->freed = true;
}

static void test_new_destructor(void)
{
	struct closure parent;
	struct request r = {.nsteps = 0};

	closure_init_stack(&parent);
	destructor_parent = &parent;
	closure_init(&r.cl, &parent);
	closure_return_with_destructor(&r.cl, free_request);
	CHECK(r.freed);
	CHECK_EQ(parent_count_in_destructor, 2);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	printf("ok: destructor in the newest form\n");
}

static void *put_later(void *arg)
{
	usleep(50 * 1000);
	closure_put(arg);
	return NULL;
}

/* closure_return_sync: waits for the count to reach 0, then puts the parent; get_not_zero fails. */
static void test_return_sync(void)
{
	struct closure parent, cl;
	pthread_t t;

	closure_init_stack(&parent);
	closure_init(&cl, &parent);
	CHECK_EQ(closure_nr_remaining(&parent), 2);
	closure_get(&cl);
	CHECK_EQ(pthread_create(&t, NULL, put_later, &cl), 0);
	closure_return_sync(&cl); /* returns only after put_later's put */
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK_EQ(closure_flags(&cl), CLOSURE_DESTRUCTOR); /* as the kernel leaves it */
	CHECK(!closure_get_not_zero(&cl));
	CHECK_EQ(closure_nr_remaining(&parent), 1); /* the parent was put, in this thread */
	CHECK_EQ(pthread_join(t, NULL), 0);

	/* Nothing outstanding: returns at once. */
	closure_init(&cl, NULL);
	closure_return_sync(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK(!closure_get_not_zero(&cl));
	printf("ok: closure_return_sync\n");
}

static struct closure_waitlist event_list = CLOSURE_WAITLIST_INIT;
static int event_happened;

static void *make_event(void *arg)
{
	(void)arg;
	usleep(30 * 1000);
	__atomic_store_n(&event_happened, 1, __ATOMIC_RELEASE);
	__closure_wake_up(&event_list);
	return NULL;
}

static void test_wait_event_timeout(void)
{
	pthread_t t;
	long left, start;

	/* Already true: the time left, at least 1. */
	left = closure_wait_event_timeout(&event_list, 1, 1000);
	CHECK(left >= 1 && left <= 1000);
	/* Never true: 0, after the timeout (milliseconds). */
	start = closure_now_ms();
	left = closure_wait_event_timeout(&event_list, 0, 40);
	CHECK_EQ(left, 0);
	CHECK(closure_now_ms() - start >= 40);
	CHECK(event_list.list.first == NULL); /* it left the list */
	/* Becomes true: the time left, at least 1. */
	CHECK_EQ(pthread_create(&t, NULL, make_event, NULL), 0);
	left = closure_wait_event_timeout(
		&event_list, __atomic_load_n(&event_happened, __ATOMIC_ACQUIRE), 10000);
	CHECK(left >= 1 && left < 10000);
	CHECK_EQ(pthread_join(t, NULL), 0);
	/* A zero timeout with a false condition: 0 at once. */
	CHECK_EQ(closure_wait_event_timeout(&event_list, 0, 0), 0);
	printf("ok: closure_wait_event_timeout\n");
}

static void test_small_ones(void)
{
	struct closure cl;

	closure_init_stack_release(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK(closure_get_not_zero(&cl));
	closure_put(&cl);
	closure_sync_unbounded(&cl);

	/* closure_set_stopped: RUNNING gone, the reference stays, to be put as an ordinary one. */
	closure_init(&cl, NULL);
	closure_set_stopped(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), 0);
	closure_put(&cl); /* finishes: no continuation */
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	printf("ok: init_stack_release, sync_unbounded, set_stopped\n");
}

/* A closure freed in its own continuation after closure_debug_destroy (bcache's search_free). */
static CLOSURE_CALLBACK(search_free)
{
	closure_type(r, struct request, cl);

	closure_debug_destroy(cl);
	free(r);
}

static void test_debug_destroy(void)
{
	struct request *r = calloc(1, sizeof(*r));
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	CHECK(r);
	closure_init(&r->cl, NULL);
	out = open_memstream(&buf, &len);
	CHECK_EQ(closure_debug_dump(out), 1);
	fclose(out);
	free(buf);
	continue_at(&r->cl, search_free, NULL); /* runs now: the count is 0 */
	/* Off the list: the dump does not read the freed closure (ASan would say so). */
	out = open_memstream(&buf, &len);
	CHECK_EQ(closure_debug_dump(out), 0);
	fclose(out);
	CHECK_STR_EQ(buf, "");
	free(buf);
	printf("ok: closure_debug_destroy\n");
}

int main(void)
{
	wq = workqueue_create("newest", 2);
	CHECK(wq);
	test_mixed_forms();
	test_direct_call();
	test_new_destructor();
	test_return_sync();
	test_wait_event_timeout();
	test_small_ones();
	test_debug_destroy();
	workqueue_destroy(wq);
	printf("test_newest_api: ok\n");
	return 0;
}
