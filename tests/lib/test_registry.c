/*
 * The live registry (lib/debug.h), in every build: it holds exactly the closures alive,
 * whichever thread finishes them, and its memory follows what is alive, not what ever lived.
 * Its chunks are counted through the descriptor another process reads (closure_debug.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <closure.h>
#include <closure_debug.h>

#include "check.h"

extern struct closure_debug_info closure_debug_info;

/* The registry's chunks, walked as a reader does (newest first, by their links). */
static unsigned chunks(void)
{
	const struct closure_debug_info *d = &closure_debug_info;
	const unsigned char *c = *(const unsigned char *const *)(uintptr_t)d->registry;
	unsigned n = 0;

	CHECK_EQ(d->version, CLOSURE_DEBUG_VERSION);
	for (; c; c = *(const unsigned char *const *)(c + d->chunk_off_next)) {
		CHECK_EQ(*(const uint64_t *)c, CLOSURE_REGISTRY_MAGIC);
		n++;
	}
	return n;
}

static int listed(void)
{
	FILE *null = fopen("/dev/null", "w");
	int n;

	CHECK(null);
	n = closure_debug_dump(null);
	fclose(null);
	return n;
}

#define THREADS 4
#define EACH	1000

static struct closure made[THREADS][EACH];
static pthread_barrier_t turn;

/* Each thread makes EACH closures, then finishes half of the next thread's, then the rest. */
static void *cross(void *arg)
{
	int t = (int)(long)arg, next = (t + 1) % THREADS;

	for (int i = 0; i < EACH; i++)
		closure_init(&made[t][i], NULL);
	pthread_barrier_wait(&turn);
	pthread_barrier_wait(&turn); /* main counts them */
	for (int i = 0; i < EACH / 2; i++)
		closure_return(&made[next][i]);
	pthread_barrier_wait(&turn);
	pthread_barrier_wait(&turn); /* main counts them */
	for (int i = EACH / 2; i < EACH; i++)
		closure_return(&made[next][i]);
	return NULL;
}

static void test_cross_threads(void)
{
	pthread_t tid[THREADS];

	CHECK_EQ(pthread_barrier_init(&turn, NULL, THREADS + 1), 0);
	for (long t = 0; t < THREADS; t++)
		CHECK_EQ(pthread_create(&tid[t], NULL, cross, (void *)t), 0);
	pthread_barrier_wait(&turn);
	CHECK_EQ(listed(), THREADS * EACH);
	pthread_barrier_wait(&turn);
	pthread_barrier_wait(&turn);
	CHECK_EQ(listed(), THREADS * EACH / 2);
	pthread_barrier_wait(&turn);
	for (int t = 0; t < THREADS; t++)
		CHECK_EQ(pthread_join(tid[t], NULL), 0);
	CHECK_EQ(listed(), 0);
	pthread_barrier_destroy(&turn);
}

/* A million lives, 64 alive at a time: the same slots serve them all. */
static void test_slots_reused(void)
{
	struct closure cl[64];
	unsigned before = chunks();

	for (int round = 0; round < 1000000 / 64; round++) {
		for (int k = 0; k < 64; k++)
			closure_init(&cl[k], NULL);
		for (int k = 0; k < 64; k++)
			closure_return(&cl[k]);
	}
	CHECK(chunks() <= before + 1);
}

/* 100,000 alive at once, then none: chunks enough for them (the ring grows when a pass over it
 * finds fewer than a quarter free), and the next 100,000 take the same chunks. */
static void test_many_alive(void)
{
	enum { N = 100000 };
	struct closure *cl = calloc(N, sizeof(*cl));
	unsigned before = chunks(), grown;

	CHECK(cl);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < N; i++)
			closure_init(&cl[i], NULL);
		CHECK_EQ(listed(), N);
		if (!round)
			grown = chunks() - before;
		for (int i = 0; i < N; i++)
			closure_return(&cl[i]);
		CHECK_EQ(listed(), 0);
	}
	/* A chunk holds 1,020 slots: 99 at least; at most 4/3 of that, and a few for the passes. */
	CHECK(grown >= N / 1020);
	CHECK(grown <= N / 1020 * 4 / 3 + 4);
	CHECK_EQ(chunks() - before, grown);
	free(cl);
}

static struct closure left[8];

/* Exits with its closures alive: another thread finishes them. */
static void *make_and_exit(void *arg)
{
	(void)arg;
	for (int i = 0; i < 8; i++)
		closure_init(&left[i], NULL);
	return NULL;
}

/* One closure's life in a new thread: it takes the chunks a thread that exited left. */
static void *one_life(void *arg)
{
	struct closure cl;

	(void)arg;
	closure_init(&cl, NULL);
	closure_return(&cl);
	return NULL;
}

static void test_threads_come_and_go(void)
{
	pthread_t t;
	unsigned before;

	CHECK_EQ(pthread_create(&t, NULL, make_and_exit, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(listed(), 8); /* found after their thread is gone */
	for (int i = 0; i < 8; i++)
		closure_return(&left[i]);
	CHECK_EQ(listed(), 0);
	before = chunks();
	for (int i = 0; i < 200; i++) {
		CHECK_EQ(pthread_create(&t, NULL, one_life, NULL), 0);
		CHECK_EQ(pthread_join(t, NULL), 0);
	}
	CHECK(chunks() <= before + 1); /* 200 threads, one after another: their rings reused */
}

int main(void)
{
	test_cross_threads();
	test_slots_reused();
	test_many_alive();
	test_threads_come_and_go();
	printf("test_registry: ok\n");
	return 0;
}
