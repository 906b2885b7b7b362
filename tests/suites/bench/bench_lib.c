/*
 * libclosure's costs, each against a baseline measured in the same run:
 *  - a get+put pair (untraced) against two bare atomic read-modify-writes on one counter;
 *  - the inline get+put with probes compiled in against the same loop compiled without them;
 *  - closure life cycles (parent and child) against the atomic operations they are made of;
 *  - continue_at through a workqueue: hops on one worker, and round trips from a sleeping
 *    thread, against a bare mutex-protected queue and a mutex/condvar ping-pong.
 * Ratios are informational: the program exits 0 whatever they are.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>

#include <closure.h>

#include "bench_lib_timing.h"

enum { REPS = 9 };

struct closure bench_closure; /* the closure the get+put loops work on (other TUs too) */
static uint32_t counter;
static struct workqueue *wq;

void bench_get_put_probes(long iterations);
void bench_get_put_noprobes(long iterations);

/* The physical floor: the two read-modify-writes a get+put must make, as the library orders them.
 */
static void atomic_pair_lib_orders(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&counter, 1, __ATOMIC_RELEASE);
	}
}

static void atomic_pair_seq_cst(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		__atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_sub(&counter, 1, __ATOMIC_SEQ_CST);
	}
}

/* A life cycle makes four: the child's parent get, and one CAS per return and the parent put. */
static void atomic_four(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&counter, 1, __ATOMIC_ACQ_REL);
		__atomic_fetch_add(&counter, 1, __ATOMIC_ACQ_REL);
		__atomic_fetch_sub(&counter, 1, __ATOMIC_ACQ_REL);
	}
}

static struct closure parent, child;

static void lifecycle(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		closure_init(&parent, NULL);
		closure_init(&child, &parent);
		closure_return(&child);
		closure_return(&parent);
	}
}

static void lifecycle_stack_sync(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		struct closure stack;

		closure_init_stack(&stack);
		closure_init(&child, &stack);
		closure_return(&child);
		closure_sync(&stack);
	}
}

/* ---- workqueue ---- */

static long hops_left;

static void hop(struct closure *cl)
{
	if (--hops_left > 0)
		continue_at(cl, hop, wq);
	else
		closure_return(cl);
}

/* One closure continuing on a one-worker queue again and again: a hop is queue + run. */
static void wq_hops(long iterations)
{
	struct closure stack;

	hops_left = iterations;
	closure_init_stack(&stack);
	closure_init(&child, &stack);
	continue_at(&child, hop, wq);
	closure_sync(&stack);
}

static struct {
	pthread_mutex_t lock;
	long items[64];
	int head, tail;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The floor of a hop: push and pop under a mutex, one thread. */
static void mutex_queue(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		pthread_mutex_lock(&queue.lock);
		queue.items[queue.tail++ % 64] = i;
		pthread_mutex_unlock(&queue.lock);
		pthread_mutex_lock(&queue.lock);
		(void)queue.items[queue.head++ % 64];
		pthread_mutex_unlock(&queue.lock);
	}
}

static void finish(struct closure *cl)
{
	closure_return(cl);
}

/* A sleeping thread hands work to a sleeping worker and sleeps until it is done. */
static void wq_round_trips(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		struct closure stack;

		closure_init_stack(&stack);
		closure_call(&child, finish, wq, &stack);
		closure_sync(&stack);
	}
}

static struct {
	pthread_mutex_t lock;
	pthread_cond_t to_echo, to_main;
	int turn; /* 1: the echo thread's, 2: main's */
	bool stop;
} pp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};

static void *echo(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pp.lock);
	for (;;) {
		while (pp.turn != 1 && !pp.stop)
			pthread_cond_wait(&pp.to_echo, &pp.lock);
		if (pp.stop)
			break;
		pp.turn = 2;
		pthread_cond_signal(&pp.to_main);
	}
	pthread_mutex_unlock(&pp.lock);
	return NULL;
}

/* The floor of a round trip: a mutex/condvar ping-pong between two sleeping threads. */
static void condvar_round_trips(long iterations)
{
	pthread_mutex_lock(&pp.lock);
	for (long i = 0; i < iterations; i++) {
		pp.turn = 1;
		pthread_cond_signal(&pp.to_echo);
		while (pp.turn != 2)
			pthread_cond_wait(&pp.to_main, &pp.lock);
	}
	pthread_mutex_unlock(&pp.lock);
}

int main(void)
{
	const long fast = 20 * 1000 * 1000, cycles = 2 * 1000 * 1000, trips = 5 * 1000;
	double ns, base, nothing;
	pthread_t echo_thread;

	printf("libclosure benchmarks: median of %d runs, CLOCK_MONOTONIC; probes %s in the "
	       "library\n\n",
	       REPS, CLOSURE_PROBES ? "compiled in (not traced)" : "compiled OUT");
	closure_init(&bench_closure, NULL);
	closure_get(&bench_closure); /* other references held: every put is the fast path */
	bench_header();

	bench_pair(bench_get_put_probes, atomic_pair_lib_orders, fast, REPS, &ns, &base);
	bench_row("get+put pair, untraced", ns, "2 atomic RMWs (relaxed/release)", base, 1.3);
	bench_pair(bench_get_put_probes, atomic_pair_seq_cst, fast, REPS, &ns, &base);
	bench_row("get+put pair, untraced", ns, "2 atomic RMWs (seq_cst)", base, 1.3);

	bench_pair(bench_get_put_probes, bench_get_put_noprobes, fast, REPS, &ns, &base);
	bench_row("get+put pair, probes compiled in", ns, "same loop, probes compiled out", base,
		  1.05);
	closure_put(&bench_closure);
	closure_return(&bench_closure);

	bench_pair(lifecycle, atomic_four, cycles, REPS, &ns, &base);
	bench_row("life cycle: init P, init C(P), return both", ns, "4 atomic RMWs", base, 0);
	printf("  = %.1f million life cycles per second\n", 1e3 / ns);
	bench_pair(lifecycle_stack_sync, atomic_four, cycles, REPS, &ns, &base);
	bench_row("life cycle: stack P, C(P), return C, sync P", ns, "4 atomic RMWs", base, 0);
	printf("  = %.1f million life cycles per second\n", 1e3 / ns);

	wq = workqueue_create("bench", 1);
	if (!wq) {
		fprintf(stderr, "bench_lib: workqueue_create failed\n");
		return 1;
	}
	bench_pair(wq_hops, mutex_queue, cycles / 4, REPS, &ns, &base);
	bench_row("continue_at hop on a 1-thread workqueue", ns, "mutex queue push+pop", base, 0);
	printf("  = %.2f million hops per second, %.0f ns per hop\n", 1e3 / ns, ns);

	pthread_create(&echo_thread, NULL, echo, NULL);
	bench_pair(wq_round_trips, condvar_round_trips, trips, REPS, &ns, &base);
	bench_row("round trip: closure_call on wq + sync", ns, "mutex/condvar ping-pong", base, 0);
	printf("  = %.0f round trips per second, %.1f us each (two thread wake-ups)\n", 1e9 / ns,
	       ns / 1e3);
	pthread_mutex_lock(&pp.lock);
	pp.stop = true;
	pthread_cond_signal(&pp.to_echo);
	pthread_mutex_unlock(&pp.lock);
	pthread_join(echo_thread, NULL);
	workqueue_destroy(wq);

	bench_pair(atomic_pair_lib_orders, atomic_pair_lib_orders, fast, REPS, &nothing, &base);
	printf("\nnoise check: the same loop against itself: %.3fx\n", nothing / base);
	return 0;
}
