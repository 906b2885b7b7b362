/*
 * record_test.sh midlife, midlife_unsnapped (issue 35 item 3): a program making closures at a high
 * rate that a recorder joins. Prints "ready" once every thread runs, then runs until killed.
 *   ct_midlife churn   4 threads, each in rounds of 1.5 s: a stack closure (PARENT) that outlives
 *                      the recorder's attach, outside closure_sync while the registry is read
 *                      (not in it then), whose children are made and finished 5 a millisecond
 *                      (CHILD: about 200,000 events a second in all, which a recorder writes
 *                      as they come), and 256 heap closures a thread keeps alive a while (HELD)
 *   ct_midlife held N  N closures alive from the start (HELD), two threads taking and giving
 *                      back a reference on each in turn, 50 a millisecond each: the first event
 *                      of each comes mid-life
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <closure.h>

#define THREADS 4
#define RING	256

static long n_held;
static struct closure *held;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One round: a parent on the stack for 1.5 s, children under it, a ring of heap closures each
 * finished RING children later. */
static void round_of(struct closure *ring)
{
	const struct timespec ms = {0, 1000000};
	struct closure parent;
	double until = now_s() + 1.5;

	closure_init_stack(&parent); /* PARENT */
	for (unsigned i = 0; now_s() < until; i++) {
		struct closure child, *r = &ring[i % RING];

		closure_init(&child, &parent); /* CHILD */
		closure_get(&child);
		closure_put(&child);
		closure_return(&child);
		if (i >= RING)
			closure_return(r);
		closure_init(r, NULL); /* HELD */
		if (i % 5 == 4)
			nanosleep(&ms, NULL);
	}
	for (unsigned i = 0; i < RING; i++)
		closure_return(&ring[i]);
	closure_sync(&parent);
}

static void *churn(void *ready)
{
	struct closure *ring = calloc(RING, sizeof(*ring));

	if (!ring)
		abort();
	__atomic_add_fetch((int *)ready, 1, __ATOMIC_RELEASE);
	for (;;)
		round_of(ring);
}

static void *touch(void *arg)
{
	const struct timespec ms = {0, 1000000};
	long from = (long)arg;

	for (long i = from, n = 0;; i = (i + 1) % n_held, n++) {
		closure_get(&held[i]);
		closure_put(&held[i]);
		if (n % 50 == 49)
			nanosleep(&ms, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int ready = 0;

	if (argc >= 2 && !strcmp(argv[1], "churn")) {
		for (int i = 0; i < THREADS; i++)
			if (pthread_create(&t, NULL, churn, &ready))
				return 1;
		while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < THREADS)
			;
	} else if (argc >= 3 && !strcmp(argv[1], "held") && (n_held = atol(argv[2])) > 0) {
		if (!(held = calloc((size_t)n_held, sizeof(*held))))
			return 1;
		for (long i = 0; i < n_held; i++)
			closure_init(&held[i], NULL); /* HELD */
		for (long i = 0; i < 2; i++)
			if (pthread_create(&t, NULL, touch, (void *)(i * n_held / 2)))
				return 1;
	} else {
		fprintf(stderr, "usage: ct_midlife churn | held N\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pthread_join(t, NULL);
}
