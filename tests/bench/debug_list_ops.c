/*
 * The live list's cost (CLOSURE_DEBUG, lib/debug.c): T threads each give N heap closures a whole
 * life (init, get, put, return: one link and one unlink under the list's one mutex). Linked with
 * the library built with the list (debug_list_on) and without (debug_list_off); debug_list.bench.sh
 * runs both and prints the ratio.
 *   debug_list_ops THREADS LIVES   prints "THREADS ns-per-life" (wall time / (THREADS * LIVES))
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <closure.h>

#define BATCH 64 /* closures alive at once in each thread */

static long lives;

static void *worker(void *arg)
{
	struct closure *cls = calloc(BATCH, sizeof(*cls));

	(void)arg;
	if (!cls)
		abort();
	for (long i = 0; i < lives; i += BATCH) {
		for (int k = 0; k < BATCH; k++) {
			closure_init(&cls[k], NULL);
			closure_get(&cls[k]);
		}
		for (int k = 0; k < BATCH; k++) {
			closure_put(&cls[k]);
			closure_return(&cls[k]);
		}
	}
	free(cls);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t tid[64];
	struct timespec a, b;
	double ns;

	lives = argc > 2 ? atol(argv[2]) : 1000000;
	if (threads < 1 || threads > 64 || lives < BATCH) {
		fprintf(stderr, "usage: debug_list_ops THREADS(1..64) LIVES(>=%d)\n", BATCH);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker, NULL);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("%d %.1f\n", threads, ns / ((double)threads * (double)(lives / BATCH * BATCH)));
	return 0;
}
