/*
 * record_test.sh churn and record.bench.sh: two threads making closures as fast as they can, for
 * record -p. Prints "ready" and waits for "go" on standard input (the recorder attaches between);
 * then each thread makes N closures (init, get, put, put: 5 events with the finish), and thread
 * 0 leaks LEAKS of them (their last put is left out: 3 events each, never finished).
 * Prints "ops TOTAL" (the events its operations fire) and "secs S", and exits.
 *
 *   ct_churn [N]     (default 44,000 per thread: 440,000 events in all, less 2 for each of the 7
 * leaks)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <closure.h>

#define LEAKS 7

static long per_thread = 44000;

static void *churn(void *arg)
{
	long leaks = arg ? LEAKS : 0;
	struct closure *v = calloc(per_thread, sizeof(*v));

	if (!v)
		abort();
	for (long i = 0; i < per_thread; i++) {
		struct closure *cl = &v[i];

		closure_init(cl, NULL); /* INIT */
		closure_get(cl);
		closure_put(cl);
		if (i % 6007 == 1 && leaks) {
			leaks--;
			continue; /* LEAK: its last put is missing */
		}
		closure_return(cl);
	}
	return v; /* the leaked closures stay allocated */
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	void *mem[2];
	char line[16];
	double t0;

	if (argc > 1)
		per_thread = atol(argv[1]);
	if (per_thread < 6007 * LEAKS)
		return 2;
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	t0 = now();
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, i ? NULL : (void *)1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &mem[i]);
	printf("ops %ld\nsecs %.3f\n", 2 * per_thread * 5 - LEAKS * 2, now() - t0);
	free(mem[1]);
	return 0;
}
