/*
 * Lossless mode (lib/batch.c wait_for_recorder, docs/probes.md): while more than wait_limit
 * records are handed over and not consumed, a handover waits for the recorder. A recorder that
 * consumes slowly is waited for however long it takes; one that consumes nothing for 1 s is given
 * up on, and the handover goes ahead.
 *
 * The recorder is played by a thread that moves the registry's consumed counter, as closuretrace
 * does when it receives batches. Batching is switched on as a tracer would (the batch semaphore
 * raised). Linked with the static library, whose private symbols the test reads.
 */
#include <pthread.h>
#include <time.h>

#include <closure.h>

#include "batch.h"
#include "check.h"
#include "closure_batch.h"

#define LIMIT	CLOSURE_BATCH_RECORDS
#define BATCHES 4
#define GIVE_UP (1000 * 1000 * 1000ull) /* lib/batch.c's BATCH_MAX_WAIT_NS */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t load(uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static bool recorder_stop;

/* A slow recorder: one record consumed every 5 ms, so that a batch of 256 takes 1.28 s, longer
 * than the give-up time: only a wait that counts progress keeps the limit. */
static void *slow_recorder(void *arg)
{
	struct timespec tick = {0, 5 * 1000 * 1000};

	(void)arg;
	while (!__atomic_load_n(&recorder_stop, __ATOMIC_RELAXED)) {
		if (load(&closure_batch_registry.consumed) < load(&closure_batch_registry.handed))
			__atomic_add_fetch(&closure_batch_registry.consumed, 1, __ATOMIC_RELAXED);
		nanosleep(&tick, NULL);
	}
	return NULL;
}

/* get+put pairs until n more records are handed over; the backlog never passes the limit. */
static void pairs_until_handed(uint64_t n)
{
	struct closure cl;
	uint64_t want = load(&closure_batch_registry.handed) + n;

	closure_init_stack(&cl);
	while (load(&closure_batch_registry.handed) < want) {
		closure_get(&cl);
		closure_put(&cl);
		EXPECT(load(&closure_batch_registry.handed) -
				       load(&closure_batch_registry.consumed) <=
			       LIMIT,
		       "%" PRIu64 " records handed over and not consumed, above the limit %u",
		       load(&closure_batch_registry.handed) -
			       load(&closure_batch_registry.consumed),
		       LIMIT);
	}
	closure_sync(&cl);
}

int main(void)
{
	pthread_t t;
	uint64_t t0, waited;

	__atomic_add_fetch(&closure_batch_semaphore, 1, __ATOMIC_RELAXED);
	closure_batch_registry.consumed = closure_batch_registry.handed;
	__atomic_store_n(&closure_batch_registry.wait_limit, LIMIT, __ATOMIC_RELAXED);

	/* A slow recorder is waited for: the backlog stays within the limit throughout. */
	CHECK_EQ(pthread_create(&t, NULL, slow_recorder, NULL), 0);
	pairs_until_handed((uint64_t)BATCHES * CLOSURE_BATCH_RECORDS);
	__atomic_store_n(&recorder_stop, true, __ATOMIC_RELAXED);
	CHECK_EQ(pthread_join(t, NULL), 0);

	/* A recorder that consumes nothing is given up on after about a second per batch past the
	 * limit, and the handover goes ahead (the recorder counts what it then drops). */
	t0 = now_ns();
	closure_batch_registry.consumed = closure_batch_registry.handed;
	{
		struct closure cl;
		uint64_t h0 = load(&closure_batch_registry.handed);

		closure_init_stack(&cl);
		while (load(&closure_batch_registry.handed) < h0 + 2 * CLOSURE_BATCH_RECORDS) {
			closure_get(&cl);
			closure_put(&cl);
		}
		closure_sync(&cl);
	}
	waited = now_ns() - t0;
	EXPECT(waited >= GIVE_UP, "a stuck recorder was given up on after %" PRIu64 " ns", waited);
	if (check_failures)
		return 1;
	printf("ok: a slow recorder kept the backlog within %u records; a stuck one was given up "
	       "on "
	       "after %.1f s\n",
	       LIMIT, (double)waited / 1e9);
	return 0;
}
