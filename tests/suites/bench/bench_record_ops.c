/*
 * The traced side of record.bench.sh: the highest rate one thread can produce closure events,
 * get/put pairs on one closure (both inlined fast paths, each one probe hit). Prints the cost
 * per probe hit measured inside the process, and its own CPU time.
 *
 *   bench_record_ops [HITS]    (default 1,000,000; run bare by make bench, it is the baseline)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <closure.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long hits = argc > 1 ? atol(argv[1]) : 1000000;
	struct closure cl;
	struct rusage ru;
	double t0, t1;

	closure_init_stack(&cl);
	closure_get(&cl); /* count 2: every put below takes the inlined fast path */
	t0 = now();
	for (long i = 0; i < hits / 2; i++) {
		closure_get(&cl);
		closure_put(&cl);
	}
	t1 = now();
	closure_put(&cl);
	closure_sync(&cl);
	getrusage(RUSAGE_SELF, &ru);
	printf("hits %ld\nns_per_hit %.2f\ncpu_s %.3f\n", hits, (t1 - t0) * 1e9 / hits,
	       ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	return 0;
}
