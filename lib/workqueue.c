/*
 * Workqueues: a fixed pool of threads draining one FIFO of work items, each the kernel's
 * work_struct (struct closure_work): a worker calls work->func(work), as the kernel's does. What
 * func does is the queuer's business: a closure's continuation (lib/closure.c sets it), here
 * known as no more than a function and its argument. Whoever queues an item keeps it off the
 * queue until it has started (the kernel's PENDING bit); it may be queued again from inside its
 * own func. A program's own workqueues (struct workqueue_struct) are not ours: their items go to
 * the program's queue_work(), found here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "bug.h"
#include "closure_batch.h"
#include "probes.h" /* CALLER_IP */
#include "workqueue.h"

struct workqueue {
	pthread_mutex_t lock;
	pthread_cond_t more; /* work queued, or draining (timed waits on CLOCK_MONOTONIC) */
	struct closure_work *head, *tail; /* linked through entry.next */
	bool draining;
	bool live; /* atomic: from workqueue_create until workqueue_destroy has drained it */
	struct workqueue_hooks hooks;
	int nthreads;
	char name[16];				/* thread names are at most 15 characters */
	char label[CLOSURE_BATCH_NAME_MAX + 1]; /* the name given, as far as a trace keeps it */
	pthread_t *threads;
	struct workqueue *next_spare;
};

/*
 * A destroyed workqueue is not freed but kept for the next workqueue_create(), so that a
 * continuation queued on it afterwards finds live false in memory that is still ours, and aborts
 * at its call site, instead of being lost or reading freed memory. A program holds as many as it
 * had alive at once. (A pointer kept across a destroy and the create that reuses its memory names
 * the new workqueue: that misuse cannot be told from a use.)
 */
static pthread_mutex_t spares_lock = PTHREAD_MUTEX_INITIALIZER;
static struct workqueue *spares;

bool workqueue_live(struct workqueue *wq)
{
	return __atomic_load_n(&wq->live, __ATOMIC_RELAXED);
}

/*
 * An idle worker sleeps until work comes. While batching, it first sleeps only until its records
 * are due (lib/batch.h): work that comes sooner costs no handover; still idle then, it hands them
 * over (outside the lock) and sleeps on.
 */
static void idle(struct workqueue *wq)
{
	uint64_t due = CLOSURE_BATCH_ON() ? closure_batch_due() : 0;
	struct timespec until = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};

	if (!due) {
		pthread_cond_wait(&wq->more, &wq->lock);
		return;
	}
	if (pthread_cond_timedwait(&wq->more, &wq->lock, &until) == ETIMEDOUT && !wq->head &&
	    !wq->draining) {
		pthread_mutex_unlock(&wq->lock);
		closure_batch_flush();
		pthread_mutex_lock(&wq->lock);
	}
}

/* The item after work on the queue, or NULL. */
static struct closure_work *next_work(struct closure_work *work)
{
	return work->entry.next ? container_of(work->entry.next, struct closure_work, entry) : NULL;
}

static void *worker(void *arg)
{
	struct workqueue *wq = arg;
	struct closure_work *work;
	void (*func)(struct closure_work *);

	/* Named by itself before its first record, so that the record names it (lib/batch.c). */
	pthread_setname_np(pthread_self(), wq->name);
	closure_batch_worker(wq, wq->label);
	if (wq->hooks.thread_start)
		wq->hooks.thread_start(wq, wq->hooks.arg);
	pthread_mutex_lock(&wq->lock);
	for (;;) {
		while (!wq->head && !wq->draining)
			idle(wq);
		work = wq->head;
		if (!work)
			break; /* draining and empty */
		wq->head = next_work(work);
		if (!wq->head)
			wq->tail = NULL;
		/* Read under the lock: once func has started, work may be queued again. */
		func = work->func;
		pthread_mutex_unlock(&wq->lock);
		func(work);
		pthread_mutex_lock(&wq->lock);
	}
	pthread_mutex_unlock(&wq->lock);
	if (wq->hooks.thread_stop)
		wq->hooks.thread_stop(wq, wq->hooks.arg);
	return NULL;
}

struct workqueue *workqueue_create(const char *name, int threads)
{
	return workqueue_create_hooked(name, threads, NULL);
}

struct workqueue *workqueue_create_hooked(const char *name, int threads,
					  const struct workqueue_hooks *hooks)
{
	struct workqueue *wq;
	pthread_condattr_t attr;
	pthread_t *ids;
	int i;

	if (threads < 1)
		threads = 1;
	ids = calloc(threads, sizeof(pthread_t));
	pthread_mutex_lock(&spares_lock);
	wq = spares;
	if (wq && ids)
		spares = wq->next_spare;
	pthread_mutex_unlock(&spares_lock);
	if (!ids || (!wq && !(wq = malloc(sizeof(*wq))))) {
		free(ids);
		return NULL;
	}
	memset(wq, 0, sizeof(*wq));
	wq->threads = ids;
	/* Published by pthread_create(), and by whatever hands wq to other threads. */
	__atomic_store_n(&wq->live, true, __ATOMIC_RELAXED);
	pthread_mutex_init(&wq->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* the clock of the records' times */
	pthread_cond_init(&wq->more, &attr);
	pthread_condattr_destroy(&attr);
	snprintf(wq->name, sizeof(wq->name), "%s", name ? name : "closure-wq");
	snprintf(wq->label, sizeof(wq->label), "%s", name ? name : "closure-wq");
	if (hooks)
		wq->hooks = *hooks;
	if (CLOSURE_BATCH_ON())
		closure_batch_name(CLOSURE_NAME_WORKQUEUE, (uintptr_t)wq, wq->label);
	for (i = 0; i < threads; i++)
		if (pthread_create(&wq->threads[i], NULL, worker, wq))
			break;
	wq->nthreads = i;
	if (!i) {
		workqueue_destroy(wq);
		return NULL;
	}
	return wq;
}

void workqueue_queue(struct workqueue *wq, struct closure_work *work)
{
	work->entry.next = NULL;
	pthread_mutex_lock(&wq->lock);
	if (wq->tail)
		wq->tail->entry.next = &work->entry;
	else
		wq->head = work;
	wq->tail = work;
	pthread_cond_signal(&wq->more);
	pthread_mutex_unlock(&wq->lock);
}

void workqueue_destroy(struct workqueue *wq)
{
	int i;

	if (!wq)
		return;
	/* Destroyed already: kept twice as a spare, it would be handed to two creates. */
	if (!workqueue_live(wq))
		workqueue_bug(wq, "workqueue_destroy", CALLER_IP(), "destroyed already");
	pthread_mutex_lock(&wq->lock);
	wq->draining = true;
	pthread_cond_broadcast(&wq->more);
	pthread_mutex_unlock(&wq->lock);
	/* Workers leave only when the queue is empty, so work queued while draining still runs. */
	for (i = 0; i < wq->nthreads; i++)
		pthread_join(wq->threads[i], NULL);
	/* Only now: work queued while it drained (by its own continuations) was still taken. */
	__atomic_store_n(&wq->live, false, __ATOMIC_RELAXED);
	pthread_cond_destroy(&wq->more);
	pthread_mutex_destroy(&wq->lock);
	free(wq->threads);
	pthread_mutex_lock(&spares_lock);
	wq->next_spare = spares;
	spares = wq;
	pthread_mutex_unlock(&spares_lock);
}

/*
 * A program's own executor. The program's queue_work() when it has one: a weak reference, so
 * that a program without it still links (and aborts only if it queues on a workqueue_struct).
 */
extern bool queue_work(struct workqueue_struct *wq, struct closure_work *work)
	__attribute__((weak));

static closure_queue_work_fn *program_queue_work; /* closure_set_queue_work(), or NULL */

void closure_set_queue_work(closure_queue_work_fn *fn)
{
	__atomic_store_n(&program_queue_work, fn, __ATOMIC_RELEASE);
}

closure_queue_work_fn *workqueue_program_queue_work(void)
{
	closure_queue_work_fn *fn = __atomic_load_n(&program_queue_work, __ATOMIC_ACQUIRE);

	return fn ? fn : queue_work; /* NULL when the program has none */
}
