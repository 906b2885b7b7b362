/*
 * Continuations: set_closure_fn + closure_queue, continue_at inline and on a workqueue (which
 * thread runs fn), continue_at_nobarrier, closure_return, closure_return_with_destructor (the
 * destructor runs before the parent is put), closure_call, and a chain of steps.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include <closure.h>

#include "check.h"

static struct workqueue *wq;

/* What a continuation saw, read by the test once the closure's parent has synced. */
struct seen {
	int runs;
	pthread_t thread;
	unsigned count;
	uint32_t flags;
	unsigned parent_count;
	char thread_name[16];
};

struct tcl {
	struct closure cl;
	struct seen seen;
};

static void record(struct closure *cl)
{
	struct tcl *t = container_of(cl, struct tcl, cl);

	t->seen.runs++;
	t->seen.thread = pthread_self();
	t->seen.count = closure_nr_remaining(cl);
	t->seen.flags = closure_flags(cl);
	t->seen.parent_count = cl->parent ? closure_nr_remaining(cl->parent) : 0;
	pthread_getname_np(pthread_self(), t->seen.thread_name, sizeof(t->seen.thread_name));
}

static void record_and_return(struct closure *cl)
{
	record(cl);
	closure_return(cl);
}

static void *put_in_thread(void *arg)
{
	closure_put(arg);
	return NULL;
}

/* closure_put(cl) from a new thread; returns that thread's id. */
static pthread_t put_from_other_thread(struct closure *cl)
{
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, put_in_thread, cl), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	return t;
}

static void test_set_fn_and_queue_inline(void)
{
	struct closure parent;
	struct tcl t = {0};

	closure_init_stack(&parent);
	closure_init(&t.cl, &parent);
	set_closure_fn(&t.cl, record_and_return, NULL);
	CHECK_PTR_EQ(t.cl.fn, record_and_return);
	CHECK_EQ(t.seen.runs, 0); /* set_closure_fn only sets */
	CHECK_EQ(closure_flags(&t.cl), CLOSURE_RUNNING);
	closure_queue(&t.cl); /* runs fn here and now, with our running reference */
	CHECK_EQ(t.seen.runs, 1);
	CHECK(pthread_equal(t.seen.thread, pthread_self()));
	CHECK_EQ(t.seen.count, 1);
	CHECK_EQ(t.seen.flags, CLOSURE_RUNNING);
	CHECK_EQ(t.seen.parent_count, 2);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	closure_sync(&parent);
}

static void test_set_fn_and_queue_on_wq(void)
{
	struct closure parent;
	struct tcl t = {0};

	closure_init_stack(&parent);
	closure_init(&t.cl, &parent);
	closure_get(&t.cl); /* closure_queue does not wait for it: fn runs anyway */
	set_closure_fn(&t.cl, record_and_return, wq);
	closure_queue(&t.cl);
	while (closure_flags(&t.cl) & CLOSURE_RUNNING)
		sched_yield(); /* until fn has given up running */
	CHECK_EQ(closure_nr_remaining(&t.cl), 1);
	closure_put(&t.cl);
	closure_sync(&parent);
	CHECK_EQ(t.seen.runs, 1);
	CHECK(!pthread_equal(t.seen.thread, pthread_self()));
	CHECK_STR_EQ(t.seen.thread_name, "test-wq");
	CHECK_EQ(t.seen.count, 2);
	CHECK_EQ(t.seen.flags, CLOSURE_RUNNING);
}

static void test_continue_at_inline_last_put(void)
{
	struct closure parent;
	struct tcl t = {0};
	pthread_t putter;

	closure_init_stack(&parent);
	closure_init(&t.cl, &parent);
	closure_get(&t.cl);
	continue_at(&t.cl, record_and_return, NULL);
	CHECK_EQ(t.seen.runs, 0); /* a reference is still out */
	CHECK_EQ(closure_nr_remaining(&t.cl), 1);
	CHECK_EQ(closure_flags(&t.cl), 0);
	CHECK_EQ(closure_nr_remaining(&parent), 2); /* a continuation does not release the parent */
	putter = put_from_other_thread(&t.cl);
	closure_sync(&parent);
	CHECK_EQ(t.seen.runs, 1);
	CHECK(pthread_equal(t.seen.thread, putter)); /* in the thread of the last put */
	CHECK(!pthread_equal(t.seen.thread, pthread_self()));
	CHECK_EQ(t.seen.count, 1); /* fn owns a fresh running reference */
	CHECK_EQ(t.seen.flags, CLOSURE_RUNNING);
	CHECK_EQ(t.seen.parent_count, 2);
	CHECK_EQ(closure_nr_remaining(&t.cl), 0);
}

static void test_continue_at_inline_no_refs(void)
{
	struct closure parent;
	struct tcl t = {0};

	closure_init_stack(&parent);
	closure_init(&t.cl, &parent);
	continue_at(&t.cl, record_and_return, NULL); /* ours was the last: fn runs right here */
	CHECK_EQ(t.seen.runs, 1);
	CHECK(pthread_equal(t.seen.thread, pthread_self()));
	CHECK_EQ(t.seen.count, 1);
	CHECK_EQ(t.seen.flags, CLOSURE_RUNNING);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	closure_sync(&parent);
}

static void test_continue_at_on_wq(void)
{
	struct closure parent;
	struct tcl t = {0};
	pthread_t putter;

	closure_init_stack(&parent);
	closure_init(&t.cl, &parent);
	closure_get(&t.cl);
	continue_at(&t.cl, record_and_return, wq);
	putter = put_from_other_thread(&t.cl);
	closure_sync(&parent);
	CHECK_EQ(t.seen.runs, 1);
	CHECK(!pthread_equal(t.seen.thread, pthread_self()));
	CHECK(!pthread_equal(t.seen.thread, putter));
	CHECK_STR_EQ(t.seen.thread_name, "test-wq");
	CHECK_EQ(t.seen.count, 1);
	CHECK_EQ(t.seen.flags, CLOSURE_RUNNING);
	/* The child's reference on the parent; ours is given up while closure_sync sleeps. */
	CHECK(t.seen.parent_count == 1 || t.seen.parent_count == 2);
}

/* A chain of steps, each a continuation of the one before, alternating inline and workqueue. */
struct chain {
	struct closure cl;
	int steps[4];
	int next;
};

static void chain_step(struct closure *cl)
{
	struct chain *c = container_of(cl, struct chain, cl);

	CHECK_EQ(closure_nr_remaining(cl), 1);
	CHECK_EQ(closure_flags(cl), CLOSURE_RUNNING);
	c->steps[c->next] = c->next + 1;
	if (++c->next == 4) {
		closure_return(cl);
		return;
	}
	closure_get(cl);
	continue_at(cl, chain_step, c->next % 2 ? wq : NULL);
	put_from_other_thread(cl);
}

static void test_chain(void)
{
	struct closure parent;
	struct chain c = {0};
	int i;

	closure_init_stack(&parent);
	closure_init(&c.cl, &parent);
	continue_at(&c.cl, chain_step, wq);
	closure_sync(&parent);
	CHECK_EQ(c.next, 4);
	for (i = 0; i < 4; i++)
		CHECK_EQ(c.steps[i], i + 1);
	CHECK_EQ(closure_nr_remaining(&c.cl), 0);
}

static void nobarrier_step(struct closure *cl)
{
	record(cl);
	/* We hold the running reference next to the two still outstanding. */
	closure_return(cl);
}

static void test_continue_at_nobarrier(void)
{
	struct closure parent;
	struct tcl t = {0};

	closure_init_stack(&parent);
	closure_init(&t.cl, &parent);
	closure_get(&t.cl);
	closure_get(&t.cl);
	continue_at_nobarrier(&t.cl, nobarrier_step, NULL);
	CHECK_EQ(t.seen.runs, 1); /* at once, not waiting for the two references */
	CHECK(pthread_equal(t.seen.thread, pthread_self()));
	CHECK_EQ(t.seen.count, 3);
	CHECK_EQ(t.seen.flags, CLOSURE_RUNNING);
	CHECK_EQ(closure_nr_remaining(&t.cl), 2);
	CHECK_EQ(closure_nr_remaining(&parent), 2);
	closure_put(&t.cl);
	CHECK_EQ(closure_nr_remaining(&parent), 2);
	closure_put(&t.cl);
	CHECK_EQ(closure_nr_remaining(&t.cl), 0);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	closure_sync(&parent);

	/* On a workqueue: a worker runs it, still without waiting. */
	memset(&t, 0, sizeof(t));
	closure_init(&t.cl, &parent);
	closure_get(&t.cl);
	continue_at_nobarrier(&t.cl, nobarrier_step, wq);
	while (closure_nr_remaining(&t.cl) != 1)
		sched_yield(); /* fn ran and gave up its reference: ours is left */
	closure_put(&t.cl);
	closure_sync(&parent);
	CHECK_EQ(t.seen.runs, 1);
	CHECK_STR_EQ(t.seen.thread_name, "test-wq");
	CHECK_EQ(t.seen.count, 2);
}

/* The destructor's view: it must run before the parent loses the child's reference. */
struct destructed {
	struct closure cl;
	struct closure *parent;
	unsigned parent_count_in_destructor;
	uint32_t own_flags_in_destructor;
	pthread_t thread;
	int *order, *next_order;
};

static void destructor(struct closure *cl)
{
	struct destructed *d = container_of(cl, struct destructed, cl);

	d->parent_count_in_destructor = closure_nr_remaining(d->parent);
	d->own_flags_in_destructor = closure_flags(cl);
	d->thread = pthread_self();
	d->order[(*d->next_order)++] = 1;
}

static void parent_done(struct closure *cl)
{
	struct destructed *d = container_of(cl, struct destructed, cl);

	d->order[(*d->next_order)++] = 2;
	closure_return(cl);
}

static void test_return_with_destructor(void)
{
	struct closure top;
	struct destructed parent = {0}, child = {0};
	int order[2] = {0, 0}, next = 0;
	pthread_t putter;

	closure_init_stack(&top);
	closure_init(&parent.cl, &top);
	parent.order = child.order = order;
	parent.next_order = child.next_order = &next;
	closure_init(&child.cl, &parent.cl);
	child.parent = &parent.cl;
	continue_at(&parent.cl, parent_done, NULL); /* runs when the child is gone */
	CHECK_EQ(closure_nr_remaining(&parent.cl), 1);

	closure_get(&child.cl);
	closure_return_with_destructor(&child.cl, destructor);
	CHECK_EQ(next, 0); /* our reference is still out */
	CHECK_EQ(closure_flags(&child.cl), CLOSURE_DESTRUCTOR);
	CHECK_EQ(closure_nr_remaining(&child.cl), 1);
	putter = put_from_other_thread(&child.cl);
	closure_sync(&top);
	CHECK_EQ(next, 2);
	CHECK_EQ(order[0], 1); /* the destructor, */
	CHECK_EQ(order[1], 2); /* then the parent's continuation */
	CHECK_EQ(child.parent_count_in_destructor, 1);
	CHECK_EQ(child.own_flags_in_destructor, CLOSURE_DESTRUCTOR);
	CHECK(pthread_equal(child.thread, putter));
	CHECK_EQ(closure_nr_remaining(&child.cl), 0);
	CHECK_EQ(closure_nr_remaining(&parent.cl), 0);
}

static int freed;

static void free_destructor(struct closure *cl)
{
	freed++;
	free(cl); /* allowed: nothing touches cl after its destructor */
}

static void test_destructor_frees(void)
{
	struct closure parent;
	struct closure *cl = malloc(sizeof(*cl));

	CHECK(cl);
	closure_init_stack(&parent);
	closure_init(cl, &parent);
	closure_return_with_destructor(cl, free_destructor);
	CHECK_EQ(freed, 1);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	closure_sync(&parent);
}

static void test_closure_call(void)
{
	struct closure parent;
	struct tcl a = {0}, b = {0};

	closure_init_stack(&parent);
	closure_call(&a.cl, record_and_return, NULL, &parent);
	CHECK_EQ(a.seen.runs, 1); /* inline: already ran */
	CHECK(pthread_equal(a.seen.thread, pthread_self()));
	CHECK_EQ(a.seen.count, 1);
	CHECK_EQ(a.seen.flags, CLOSURE_RUNNING);
	CHECK_EQ(a.seen.parent_count, 2); /* closure_call took the parent reference */
	CHECK_PTR_EQ(a.cl.parent, &parent);
	CHECK_EQ(closure_nr_remaining(&parent), 1);

	closure_call(&b.cl, record_and_return, wq, &parent);
	closure_sync(&parent);
	CHECK_EQ(b.seen.runs, 1);
	CHECK_STR_EQ(b.seen.thread_name, "test-wq");
	/* The child's reference on the parent; ours is given up while closure_sync sleeps. */
	CHECK(b.seen.parent_count == 1 || b.seen.parent_count == 2);
	CHECK_EQ(closure_nr_remaining(&b.cl), 0);
}

int main(void)
{
	wq = workqueue_create("test-wq", 2);
	CHECK(wq);
	test_set_fn_and_queue_inline();
	test_set_fn_and_queue_on_wq();
	test_continue_at_inline_last_put();
	test_continue_at_inline_no_refs();
	test_continue_at_on_wq();
	test_chain();
	test_continue_at_nobarrier();
	test_return_with_destructor();
	test_destructor_frees();
	test_closure_call();
	workqueue_destroy(wq);
	printf("test_continue: ok\n");
	return 0;
}
