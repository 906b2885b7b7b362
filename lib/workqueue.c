/*
 * Workqueues: a fixed pool of threads draining one FIFO of closures. A closure is queued only
 * when its count reached zero and was reset to the running reference, so it is never on the
 * queue twice; it may be queued again from inside its own continuation.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct workqueue {
	pthread_mutex_t lock;
	pthread_cond_t more; /* work queued, or draining */
	struct closure *head, *tail;
	bool draining;
	int nthreads;
	char name[16]; /* thread names are at most 15 characters */
	pthread_t threads[];
};

static void *worker(void *arg)
{
	struct workqueue *wq = arg;
	struct closure *cl;

	pthread_mutex_lock(&wq->lock);
	for (;;) {
		while (!wq->head && !wq->draining)
			pthread_cond_wait(&wq->more, &wq->lock);
		cl = wq->head;
		if (!cl)
			break; /* draining and empty */
		wq->head = cl->next;
		if (!wq->head)
			wq->tail = NULL;
		/* Started: it may be queued again from now on (closure.c checks). */
		__atomic_store_n(&cl->queued, 0, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&wq->lock);
		closure_run(cl);
		pthread_mutex_lock(&wq->lock);
	}
	pthread_mutex_unlock(&wq->lock);
	return NULL;
}

struct workqueue *workqueue_create(const char *name, int threads)
{
	struct workqueue *wq;
	int i;

	if (threads < 1)
		threads = 1;
	wq = calloc(1, sizeof(*wq) + threads * sizeof(pthread_t));
	if (!wq)
		return NULL;
	pthread_mutex_init(&wq->lock, NULL);
	pthread_cond_init(&wq->more, NULL);
	snprintf(wq->name, sizeof(wq->name), "%s", name ? name : "closure-wq");
	for (i = 0; i < threads; i++) {
		if (pthread_create(&wq->threads[i], NULL, worker, wq))
			break;
		pthread_setname_np(wq->threads[i], wq->name);
	}
	wq->nthreads = i;
	if (!i) {
		workqueue_destroy(wq);
		return NULL;
	}
	return wq;
}

void workqueue_queue(struct workqueue *wq, struct closure *cl)
{
	cl->next = NULL;
	pthread_mutex_lock(&wq->lock);
	if (wq->tail)
		wq->tail->next = cl;
	else
		wq->head = cl;
	wq->tail = cl;
	pthread_cond_signal(&wq->more);
	pthread_mutex_unlock(&wq->lock);
}

void workqueue_destroy(struct workqueue *wq)
{
	int i;

	if (!wq)
		return;
	pthread_mutex_lock(&wq->lock);
	wq->draining = true;
	pthread_cond_broadcast(&wq->more);
	pthread_mutex_unlock(&wq->lock);
	/* Workers leave only when the queue is empty, so work queued while draining still runs. */
	for (i = 0; i < wq->nthreads; i++)
		pthread_join(wq->threads[i], NULL);
	pthread_cond_destroy(&wq->more);
	pthread_mutex_destroy(&wq->lock);
	free(wq);
}
