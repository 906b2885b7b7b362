/*
 * The library's out-of-line operations, timed: built twice, as lib_ops_probes (linked with
 * libclosure as configured: probes compiled in) and lib_ops_noprobes (a copy of the lib sources
 * built with -DCLOSURE_PROBES=0). lib_probes.bench.sh runs both alternately and prints the ratios.
 * Output: one "OPERATION NS_PER_OP" line per operation, the median of REPS runs, in the thread's
 * CPU time.
 *
 * lib_ops_* [ITERATIONS]: 2,000,000 per run by default; lib_probes.bench.sh --ir passes a small
 * count to valgrind's callgrind, whose instruction counts do not depend on the machine's load.
 */
#include <stdlib.h>

#include <closure.h>

#include "bench_lib_timing.h"

enum { REPS = 7 };

static struct closure parent, cl;
static struct closure_waitlist list = CLOSURE_WAITLIST_INIT;

static void init_return(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		closure_init(&cl, &parent);
		closure_return(&cl);
	}
}

static void finish(struct closure *c)
{
	closure_return(c);
}

static void continue_at_inline(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		closure_init(&cl, NULL);
		continue_at(&cl, finish, NULL);
	}
}

static void wait_wake(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		closure_wait(&list, &parent);
		closure_wake_up(&list);
	}
}

static void get_get_sub(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		closure_get(&parent);
		closure_get(&parent);
		closure_sub(&parent, 2);
	}
}

static void sync_nothing_outstanding(long iterations)
{
	for (long i = 0; i < iterations; i++)
		closure_sync(&parent);
}

/*
 * ns of this thread's CPU time per iteration: on a shared machine, time the loop spent preempted
 * would otherwise land on whichever side of a ratio it happened to hit.
 */
static double cpu_once(bench_loop *loop, long iterations)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	loop(iterations);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iterations;
}

static void report(const char *name, bench_loop *loop, long iterations)
{
	double t[REPS];
	int i;

	cpu_once(loop, iterations / 10);
	for (i = 0; i < REPS; i++)
		t[i] = cpu_once(loop, iterations);
	printf("%s %.3f\n", name, bench_median(t, REPS));
}

int main(int argc, char **argv)
{
	const long n = argc > 1 ? atol(argv[1]) : 2 * 1000 * 1000;

	closure_init(&parent, NULL);
	report("init+return(child)", init_return, n);
	report("init+continue_at(inline)+return", continue_at_inline, n);
	report("wait+wake_up", wait_wake, n);
	report("get+get+sub(2)", get_get_sub, n);
	report("sync(nothing_outstanding)", sync_nothing_outstanding, n);
	closure_return(&parent);
	return 0;
}
