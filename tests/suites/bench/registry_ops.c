/*
 * The live registry's cost (lib/debug.h, kept in every build): T threads each give N heap
 * closures a whole life (init, get, put, return: a slot taken, its init time read, the slot
 * cleared). Linked with the library as built (registry_on) and built without the registry
 * (registry_off, CLOSURE_NO_REGISTRY); registry.bench.sh runs both and prints the ratio.
 *   registry_ops THREADS LIVES [cross]   prints "THREADS ns-per-life cpu-ns-per-life": wall
 *   time and the process's CPU time, each / (THREADS * LIVES). On a loaded machine the wall time
 *   includes waiting for a core; the CPU time does not (nor a thread asleep on a lock).
 * own (the default): each thread finishes the closures it made, 64 alive at a time. cross: each
 * thread finishes the closures the next thread made (as a completion thread does), 4,096 at a
 * time between two barriers: the registry's worst case, where threads clear slots in each other's
 * chunks.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <closure.h>

#define BATCH	    64	 /* closures alive at once in each thread (own) */
#define CROSS_BATCH 4096 /* closures each thread makes between two barriers (cross) */
#define MAX_THREADS 64

static long lives;
static int threads;
static struct closure *shared[MAX_THREADS]; /* cross: each thread's batch */
static pthread_barrier_t turn;

static void *own(void *arg)
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

static void *cross(void *arg)
{
	int t = (int)(long)arg;
	struct closure *mine = shared[t], *next = shared[(t + 1) % threads];

	for (long i = 0; i < lives; i += CROSS_BATCH) {
		for (int k = 0; k < CROSS_BATCH; k++) {
			closure_init(&mine[k], NULL);
			closure_get(&mine[k]);
		}
		pthread_barrier_wait(&turn);
		for (int k = 0; k < CROSS_BATCH; k++) {
			closure_put(&next[k]);
			closure_return(&next[k]);
		}
		pthread_barrier_wait(&turn);
	}
	return NULL;
}

static double ns_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e9 + (double)(b->tv_nsec - a->tv_nsec);
}

int main(int argc, char **argv)
{
	bool is_cross = argc > 3 && !strcmp(argv[3], "cross");
	long batch = is_cross ? CROSS_BATCH : BATCH;
	pthread_t tid[MAX_THREADS];
	struct timespec a, b, ca, cb;
	double n;

	threads = argc > 1 ? atoi(argv[1]) : 1;
	lives = argc > 2 ? atol(argv[2]) : 1000000;
	if (threads < 1 || threads > MAX_THREADS || lives < batch ||
	    (argc > 3 && !is_cross && strcmp(argv[3], "own"))) {
		fprintf(stderr, "usage: registry_ops THREADS(1..%d) LIVES(>=%ld) [own|cross]\n",
			MAX_THREADS, batch);
		return 2;
	}
	for (int t = 0; is_cross && t < threads; t++)
		if (!(shared[t] = calloc(CROSS_BATCH, sizeof(struct closure))))
			abort();
	pthread_barrier_init(&turn, NULL, (unsigned)threads);
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	for (int t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, is_cross ? cross : own, (void *)(long)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	n = (double)threads * (double)(lives / batch * batch);
	printf("%d %.1f %.1f\n", threads, ns_between(&a, &b) / n, ns_between(&ca, &cb) / n);
	for (int t = 0; t < threads; t++)
		free(shared[t]);
	return 0;
}
