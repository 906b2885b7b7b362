/*
 * The service-shaped workload of batch.bench.sh: a request every 250 us, each a closure with
 * three child closures completed by "device" threads, its continuation on a workqueue. Prints the
 * CPU time per request of the whole process (every thread), so that a recording's cost shows as
 * a ratio to the same run unrecorded.
 *
 *   bench_service SECONDS     (run bare by make bench it prints its own cost)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <closure.h>

#define CHILDREN 3
#define DEVICES	 2

struct request {
	struct closure cl;
	struct closure child[CHILDREN];
};

/* The devices: a queue of children to complete (put), served by DEVICES threads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static struct closure *queue[4096];
static unsigned head, tail;
static struct workqueue *wq;
static long done;

static void *device(void *arg)
{
	(void)arg;
	for (;;) {
		struct closure *cl;

		pthread_mutex_lock(&lock);
		while (head == tail)
			pthread_cond_wait(&more, &lock);
		cl = queue[head++ % 4096];
		pthread_mutex_unlock(&lock);
		if (!cl)
			return NULL;
		closure_put(cl); /* the I/O completed */
	}
}

static void submit(struct closure *cl)
{
	pthread_mutex_lock(&lock);
	queue[tail++ % 4096] = cl;
	pthread_cond_signal(&more);
	pthread_mutex_unlock(&lock);
}

static void child_done(struct closure *cl)
{
	closure_return(cl);
}

static void request_done(struct closure *cl)
{
	__atomic_add_fetch(&done, 1, __ATOMIC_RELAXED);
	free(container_of(cl, struct request, cl));
}

static void request_complete(struct closure *cl)
{
	closure_return_with_destructor(cl, request_done);
}

static void request(void)
{
	struct request *r = malloc(sizeof(*r));

	closure_init(&r->cl, NULL);
	for (int i = 0; i < CHILDREN; i++) {
		closure_init(&r->child[i], &r->cl);
		closure_get(&r->child[i]); /* the device's reference */
		submit(&r->child[i]);
		continue_at(&r->child[i], child_done, NULL);
	}
	continue_at(&r->cl, request_complete, wq);
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2, cpu0;
	struct timespec next, period = {0, 250 * 1000};
	pthread_t dev[DEVICES];
	long n = 0;

	wq = workqueue_create("bench-wq", 2);
	for (int i = 0; i < DEVICES; i++)
		pthread_create(&dev[i], NULL, device, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	usleep(200 * 1000); /* let a tracer started with "ready" attach */
	cpu0 = cpu_s();
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (n = 0; n < (long)(secs * 4000); n++) {
		request();
		next.tv_nsec += period.tv_nsec;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	while (__atomic_load_n(&done, __ATOMIC_RELAXED) < n)
		usleep(1000);
	printf("requests %ld\ncpu_us_per_request %.2f\n", n, (cpu_s() - cpu0) / n * 1e6);
	fflush(stdout);
	for (int i = 0; i < DEVICES; i++)
		submit(NULL);
	for (int i = 0; i < DEVICES; i++)
		pthread_join(dev[i], NULL);
	workqueue_destroy(wq);
	return 0;
}
