/*
 * The reference count: init (with and without a parent, on the stack), get, get_not_zero, put,
 * sub, and a closure initialised again at the same address after it finished. Every step checks
 * the exact count and flags.
 */
#include <pthread.h>

#include <closure.h>

#include "check.h"

static void test_init_without_parent(void)
{
	struct closure cl;

	closure_init(&cl, NULL);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK_PTR_EQ(cl.parent, NULL);
	CHECK_PTR_EQ(cl.fn, NULL);
	closure_return(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK_EQ(closure_flags(&cl), 0);
}

static void test_init_takes_parent_ref(void)
{
	struct closure parent, a, b;

	closure_init(&parent, NULL);
	closure_init(&a, &parent);
	CHECK_EQ(closure_nr_remaining(&parent), 2);
	closure_init(&b, &parent);
	CHECK_EQ(closure_nr_remaining(&parent), 3);
	CHECK_PTR_EQ(a.parent, &parent);
	CHECK_EQ(closure_nr_remaining(&a), 1);

	/* Finishing a child puts its parent reference, once. */
	closure_return(&a);
	CHECK_EQ(closure_nr_remaining(&parent), 2);
	closure_return(&b);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	CHECK_EQ(closure_flags(&parent), CLOSURE_RUNNING);
	closure_return(&parent);
	CHECK_EQ(closure_nr_remaining(&parent), 0);
}

static void test_init_stack(void)
{
	struct closure cl;

	memset(&cl, 0xa5, sizeof(cl)); /* garbage: init_stack must not trust any field */
	closure_init_stack(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	CHECK_PTR_EQ(cl.parent, NULL);
	CHECK_PTR_EQ(cl.fn, NULL);
	CHECK_PTR_EQ(cl.wq, NULL);
	CHECK_EQ(cl.magic, 0xc05451ccu);
	closure_get(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	closure_put(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	closure_sync(&cl); /* nothing outstanding: returns at once, still owned */
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
}

static void test_get_put(void)
{
	struct closure cl;
	int i;

	closure_init(&cl, NULL);
	for (i = 0; i < 100; i++) {
		closure_get(&cl);
		CHECK_EQ(closure_nr_remaining(&cl), 2 + i);
	}
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	for (i = 100; i > 0; i--) {
		closure_put(&cl);
		CHECK_EQ(closure_nr_remaining(&cl), i);
	}
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	closure_return(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
}

static void test_get_not_zero(void)
{
	struct closure cl;

	closure_init(&cl, NULL);
	CHECK(closure_get_not_zero(&cl));
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	closure_put(&cl);
	closure_return(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK(!closure_get_not_zero(&cl));
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK_EQ(closure_flags(&cl), 0);
}

static int destructions;

static void count_destruction(struct closure *cl)
{
	(void)cl;
	destructions++;
}

static void test_get_not_zero_after_destructor(void)
{
	struct closure cl;

	/* A finished closure with a destructor keeps the DESTRUCTOR flag at count 0. */
	closure_init(&cl, NULL);
	closure_return_with_destructor(&cl, count_destruction);
	CHECK_EQ(destructions, 1);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK(!closure_get_not_zero(&cl));
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK_EQ(closure_flags(&cl), CLOSURE_DESTRUCTOR);
}

static void test_sub(void)
{
	struct closure parent, cl;

	closure_init(&parent, NULL);
	closure_init(&cl, &parent);
	closure_get(&cl);
	closure_get(&cl);
	closure_get(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 4);
	closure_sub(&cl, 2);
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	closure_sub(&cl, 1);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	/* Flags and a reference in one step: this is how continue_at gives up running. */
	closure_sub(&cl, CLOSURE_RUNNING + 1);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK_EQ(closure_flags(&cl), 0);
	CHECK_EQ(closure_nr_remaining(&parent), 1); /* finished: the parent was put */
	closure_return(&parent);
}

static void test_sub_last_refs_from_outside(void)
{
	struct closure parent, cl;

	/* The owner gives up running while references are out; one sub of 3 finishes it. */
	closure_init(&parent, NULL);
	closure_init(&cl, &parent);
	closure_get(&cl);
	closure_get(&cl);
	closure_get(&cl);
	closure_return(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 3);
	CHECK_EQ(closure_flags(&cl), 0);
	CHECK_EQ(closure_nr_remaining(&parent), 2);
	closure_sub(&cl, 3);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	closure_return(&parent);
}

static void test_reused_address(void)
{
	struct closure parent, *cl = malloc(sizeof(*cl));
	int round;

	CHECK(cl);
	closure_init(&parent, NULL);
	for (round = 0; round < 3; round++) {
		closure_init(cl, &parent);
		CHECK_EQ(closure_nr_remaining(cl), 1);
		CHECK_EQ(closure_flags(cl), CLOSURE_RUNNING);
		CHECK_EQ(closure_nr_remaining(&parent), 2);
		CHECK(closure_get_not_zero(cl));
		closure_put(cl);
		closure_return(cl);
		CHECK_EQ(closure_nr_remaining(cl), 0);
		CHECK_EQ(closure_nr_remaining(&parent), 1);
	}
	/* Reused after a destructor (DESTRUCTOR left set at count 0): init clears it. */
	closure_init(cl, NULL);
	closure_return_with_destructor(cl, count_destruction);
	CHECK_EQ(closure_flags(cl), CLOSURE_DESTRUCTOR);
	closure_init(cl, &parent);
	CHECK_EQ(closure_flags(cl), CLOSURE_RUNNING);
	CHECK_EQ(closure_nr_remaining(&parent), 2);
	closure_return(cl);
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	CHECK_EQ(destructions, 2);
	closure_return(&parent);
	free(cl);
}

static void test_deep_parent_chain(void)
{
	enum { DEPTH = 1000 };
	struct closure *chain = calloc(DEPTH, sizeof(*chain));
	int i;

	/* Finishing the leaf with every ancestor already returned finishes all of them. */
	CHECK(chain);
	closure_init(&chain[0], NULL);
	for (i = 1; i < DEPTH; i++)
		closure_init(&chain[i], &chain[i - 1]);
	for (i = 0; i < DEPTH - 1; i++) {
		closure_return(&chain[i]);
		CHECK_EQ(closure_nr_remaining(&chain[i]), 1);
	}
	closure_return(&chain[DEPTH - 1]);
	for (i = 0; i < DEPTH; i++)
		CHECK_EQ(closure_nr_remaining(&chain[i]), 0);
	free(chain);
}

/* Probers find the closure through a pointer while its owner lets it finish. */
struct probed {
	struct closure cl;
	int finished; /* atomic */
	int go;	      /* atomic */
};

static void probed_done(struct closure *cl)
{
	struct probed *p = container_of(cl, struct probed, cl);

	CHECK_EQ(__atomic_fetch_add(&p->finished, 1, __ATOMIC_RELAXED), 0);
}

static void *probe_until_finished(void *arg)
{
	struct probed *p = arg;
	long hits = 0;

	while (!__atomic_load_n(&p->go, __ATOMIC_ACQUIRE))
		;
	while (closure_get_not_zero(&p->cl)) {
		hits++;
		CHECK(closure_nr_remaining(&p->cl) >= 1);
		closure_put(&p->cl); /* may be the last one: then it finishes here */
	}
	/* Finished: it never comes back. */
	CHECK(!closure_get_not_zero(&p->cl));
	CHECK_EQ(closure_nr_remaining(&p->cl), 0);
	return (void *)hits;
}

static void test_get_not_zero_racing_finish(void)
{
	enum { PROBERS = 3 };
	struct probed p = {0};
	pthread_t t[PROBERS];
	int i, spins;

	closure_init(&p.cl, NULL);
	for (i = 0; i < PROBERS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, probe_until_finished, &p), 0);
	__atomic_store_n(&p.go, 1, __ATOMIC_RELEASE);
	for (spins = 0; spins < 100000; spins++)
		__asm__ volatile("" ::: "memory");
	closure_return_with_destructor(&p.cl, probed_done);
	for (i = 0; i < PROBERS; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	CHECK_EQ(p.finished, 1);
	CHECK_EQ(closure_flags(&p.cl), CLOSURE_DESTRUCTOR);
}

int main(void)
{
	test_init_without_parent();
	test_init_takes_parent_ref();
	test_init_stack();
	test_get_put();
	test_get_not_zero();
	test_get_not_zero_after_destructor();
	test_sub();
	test_sub_last_refs_from_outside();
	test_reused_address();
	test_deep_parent_chain();
	for (int i = 0; i < 50; i++)
		test_get_not_zero_racing_finish();
	printf("test_refcount: ok\n");
	return 0;
}
