/*
 * A program's own executor (closure.h, "A program's own executor"): a closure continued on the
 * program's struct workqueue_struct is handed to the program's queue_work(), initialised as the
 * kernel's INIT_WORK leaves a work item, and its continuation runs on the program's own thread;
 * closure_set_queue_work() replaces queue_work(). libclosure's own workqueues run thread start and
 * stop hooks around each worker's life.
 *
 * The program side is written as bcachefs-tools' linux/workqueue.c shapes it: one mutex, a list of
 * pending work, a worker that clears PENDING before it calls work->func(work).
 */
#include <pthread.h>
#include <stdbool.h>

#include <closure.h>

#include "check.h"

/* The program's own workqueue: a type libclosure never sees inside. */
struct workqueue_struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct closure_work *head, *tail; /* linked through entry.next */
	bool stop;
	unsigned queued; /* queue_work() calls that took the work */
	pthread_t thread;
};

/* Set on the program's worker thread only: a continuation reads it to know where it runs. */
static __thread int program_thread;
static int other_queue_calls;

static void *program_worker(void *arg)
{
	struct workqueue_struct *wq = arg;

	program_thread = 1;
	pthread_mutex_lock(&wq->lock);
	for (;;) {
		struct closure_work *w = wq->head;

		if (!w) {
			if (wq->stop)
				break;
			pthread_cond_wait(&wq->more, &wq->lock);
			continue;
		}
		wq->head = w->entry.next ? container_of(w->entry.next, struct closure_work, entry)
					 : NULL;
		/* As bcachefs-tools' worker: off the list and not pending before func runs. */
		w->entry.next = w->entry.prev = &w->entry;
		w->data = 0;
		pthread_mutex_unlock(&wq->lock);
		w->func(w);
		pthread_mutex_lock(&wq->lock);
	}
	pthread_mutex_unlock(&wq->lock);
	return NULL;
}

/*
 * The program's queue_work(), found by libclosure under the kernel's name. The work arrives as
 * INIT_WORK leaves it: not pending, its entry pointing at itself, a function to call.
 */
bool queue_work(struct workqueue_struct *wq, struct closure_work *work);
bool queue_work(struct workqueue_struct *wq, struct closure_work *work)
{
	CHECK_EQ(work->data, 0);
	CHECK(work->entry.next == &work->entry && work->entry.prev == &work->entry);
	CHECK(work->func);
	pthread_mutex_lock(&wq->lock);
	work->data = 1; /* PENDING */
	work->entry.next = NULL;
	if (wq->tail && wq->head)
		wq->tail->entry.next = &work->entry;
	else
		wq->head = work;
	wq->tail = work;
	wq->queued++;
	pthread_cond_signal(&wq->more);
	pthread_mutex_unlock(&wq->lock);
	return true;
}

/* Another name for the same, given with closure_set_queue_work(). */
static bool other_queue(struct workqueue_struct *wq, struct closure_work *work)
{
	other_queue_calls++;
	return queue_work(wq, work);
}

static struct workqueue_struct *program_wq_create(void)
{
	struct workqueue_struct *wq = calloc(1, sizeof(*wq));

	CHECK(wq);
	pthread_mutex_init(&wq->lock, NULL);
	pthread_cond_init(&wq->more, NULL);
	CHECK_EQ(pthread_create(&wq->thread, NULL, program_worker, wq), 0);
	return wq;
}

static void program_wq_destroy(struct workqueue_struct *wq)
{
	pthread_mutex_lock(&wq->lock);
	wq->stop = true;
	pthread_cond_signal(&wq->more);
	pthread_mutex_unlock(&wq->lock);
	CHECK_EQ(pthread_join(wq->thread, NULL), 0);
	free(wq);
}

struct job {
	struct closure cl;
	struct workqueue_struct *wq;
	int steps;	  /* continuations run */
	int off_thread;	  /* of them, not on the program's thread */
	int requeue_left; /* continue_at on the program's workqueue again, from its own continuation
			   */
};

static CLOSURE_CALLBACK(job_step)
{
	closure_type(j, struct job, cl);

	j->steps++;
	j->off_thread += !program_thread;
	if (j->requeue_left-- > 0) {
		continue_at(cl, job_step, j->wq);
		return;
	}
	closure_return(cl);
}

static void old_form_step(struct closure *cl)
{
	struct job *j = container_of(cl, struct job, cl);

	j->steps++;
	j->off_thread += !program_thread;
	closure_return(cl);
}

/* Each way of giving a closure a continuation, on the program's workqueue. */
static void test_program_queue(void)
{
	struct workqueue_struct *wq = program_wq_create();
	struct job a = {.wq = wq, .requeue_left = 3}, b = {.wq = wq}, c = {.wq = wq};
	struct closure parent;

	closure_init_stack(&parent);
	/* continue_at with a reference out: queued when the last put comes. */
	closure_init(&a.cl, &parent);
	closure_get(&a.cl);
	continue_at(&a.cl, job_step, wq);
	CHECK_EQ(wq->queued, 0);
	closure_put(&a.cl);
	/* closure_call: queued at once; the older form of continuation, too. */
	closure_call(&b.cl, old_form_step, wq, &parent);
	/* set_closure_fn, then closure_queue. */
	closure_init(&c.cl, &parent);
	set_closure_fn(&c.cl, job_step, wq);
	closure_queue(&c.cl);
	closure_sync(&parent);

	CHECK_EQ(a.steps, 4); /* the first, and three requeued from its own continuation */
	CHECK_EQ(b.steps, 1);
	CHECK_EQ(c.steps, 1);
	CHECK_EQ(a.off_thread + b.off_thread + c.off_thread, 0);
	CHECK_EQ(wq->queued, 6);
	CHECK_EQ(other_queue_calls, 0);
	CHECK(!program_thread); /* and not here */

	/* closure_set_queue_work(): used instead, until set back to NULL. */
	closure_set_queue_work(other_queue);
	closure_init(&b.cl, &parent);
	continue_at_nobarrier(&b.cl, job_step, wq);
	closure_sync(&parent);
	CHECK_EQ(other_queue_calls, 1);
	CHECK_EQ(b.steps, 2);
	closure_set_queue_work(NULL);
	closure_init(&b.cl, &parent);
	continue_at_nobarrier(&b.cl, job_step, wq);
	closure_sync(&parent);
	CHECK_EQ(other_queue_calls, 1);
	CHECK_EQ(b.steps, 3);
	CHECK_EQ(wq->queued, 8);
	CHECK_EQ(b.off_thread, 0);
	program_wq_destroy(wq);
}

/* Thread hooks: what each worker sets up at its start, its continuations see. */
static __thread int hooked_thread;
static int starts, stops;
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct workqueue *hooked_wq;

static void thread_start(struct workqueue *wq, void *arg)
{
	CHECK(wq); /* hooked_wq is set only once create returns */
	CHECK_EQ(*(int *)arg, 42);
	hooked_thread = 1;
	pthread_mutex_lock(&hooks_lock);
	starts++;
	pthread_mutex_unlock(&hooks_lock);
}

static void thread_stop(struct workqueue *wq, void *arg)
{
	CHECK(wq == hooked_wq);
	CHECK_EQ(*(int *)arg, 42);
	CHECK_EQ(hooked_thread, 1);
	pthread_mutex_lock(&hooks_lock);
	stops++;
	pthread_mutex_unlock(&hooks_lock);
}

static int unhooked_runs, hooked_runs;

static void count_hooked(struct closure *cl)
{
	__atomic_add_fetch(hooked_thread ? &hooked_runs : &unhooked_runs, 1, __ATOMIC_RELAXED);
	closure_return(cl);
}

static void test_thread_hooks(void)
{
	static int arg = 42;
	struct workqueue_hooks hooks = {thread_start, thread_stop, &arg};
	struct closure parent, children[32];
	struct workqueue *plain;

	hooked_wq = workqueue_create_hooked("hooked", 3, &hooks);
	CHECK(hooked_wq);
	closure_init_stack(&parent);
	for (int i = 0; i < 32; i++)
		closure_call(&children[i], count_hooked, hooked_wq, &parent);
	closure_sync(&parent);
	CHECK_EQ(hooked_runs, 32);
	CHECK_EQ(unhooked_runs, 0);
	CHECK_EQ(stops, 0);
	workqueue_destroy(hooked_wq);
	CHECK_EQ(starts, 3);
	CHECK_EQ(stops, 3);

	/* No hooks: workqueue_create() as before, and NULL hooks too. */
	plain = workqueue_create_hooked("plain", 2, NULL);
	CHECK(plain);
	for (int i = 0; i < 8; i++)
		closure_call(&children[i], count_hooked, plain, &parent);
	closure_sync(&parent);
	workqueue_destroy(plain);
	CHECK_EQ(unhooked_runs, 8);
	CHECK_EQ(starts, 3);
}

int main(void)
{
	test_program_queue();
	test_thread_hooks();
	printf("test_executor: ok\n");
	return 0;
}
