/*
 * kernel_style: closures used the way the kernel's documentation teaches them
 * (include/linux/closure.h, LWN "The kernel closure API"), written from that text alone and
 * built from outside the project (pkg-config or find_package), so that it proves the installed
 * library is the API people read about. It checks its own results: exit 0 when all hold.
 *
 * A batch (a stack closure) waits for its jobs. Each job is a closure whose parent is the batch;
 * it waits on a gate (a waitlist) until the batch opens it, then runs two steps on a workqueue:
 * the first hands a piece of work to a helper thread holding a reference, the second runs only
 * once that reference is put, and returns with a destructor that frees the job.
 */
#include <closure.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NR_JOBS 4

struct job {
	struct closure cl;
	int id;
	int result; /* written by the helper thread before it puts its reference */
	pthread_t helper;
	int *step_done; /* where step two records that it ran */
};

static struct workqueue *wq;
static struct closure_waitlist gate = CLOSURE_WAITLIST_INIT;
static int jobs_freed;
static int failures;

#define check(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "kernel_style: %s:%d: check failed: %s\n", __FILE__,       \
				__LINE__, #cond);                                                  \
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);                        \
		}                                                                                  \
	} while (0)

static void job_free(struct closure *cl)
{
	struct job *job = container_of(cl, struct job, cl);

	__atomic_fetch_add(&jobs_freed, 1, __ATOMIC_RELAXED);
	free(job);
}

static void *helper(void *arg)
{
	struct job *job = arg;

	job->result = job->id * 10;
	closure_put(&job->cl); /* the reference step one took for us */
	return NULL;
}

/* Runs only after the helper's put: continue_at waited for every outstanding reference. */
static void job_step_two(struct closure *cl)
{
	struct job *job = container_of(cl, struct job, cl);

	pthread_join(job->helper, NULL);
	check(job->result == job->id * 10);
	check(closure_nr_remaining(cl) == 1); /* only the running reference */
	job->step_done[job->id] = 1;
	closure_return_with_destructor(cl, job_free);
}

static void job_step_one(struct closure *cl)
{
	struct job *job = container_of(cl, struct job, cl);

	closure_get(cl); /* held by the helper until its work is done */
	if (pthread_create(&job->helper, NULL, helper, job)) {
		check(!"pthread_create");
		closure_put(cl);
	}
	continue_at(cl, job_step_two, wq);
}

int main(void)
{
	struct closure batch;
	int step_done[NR_JOBS] = {0};

	wq = workqueue_create("kernel-style", 2);
	check(wq != NULL);
	closure_init_stack(&batch);
	for (int i = 0; i < NR_JOBS; i++) {
		struct job *job = calloc(1, sizeof(*job));

		job->id = i;
		job->step_done = step_done;
		closure_init(&job->cl,
			     &batch); /* a reference on the batch until the job finishes */
		check(closure_wait(&gate, &job->cl));
		continue_at(&job->cl, job_step_one, wq); /* runs once the gate opens */
	}
	/* Every job waits on the gate: the batch holds its running reference plus one per job. */
	check(closure_nr_remaining(&batch) == 1 + NR_JOBS);
	for (int i = 0; i < NR_JOBS; i++)
		check(step_done[i] == 0);

	closure_wake_up(&gate);
	closure_sync(&batch); /* until every job has finished */

	check(closure_nr_remaining(&batch) == 1);
	check(__atomic_load_n(&jobs_freed, __ATOMIC_RELAXED) == NR_JOBS);
	for (int i = 0; i < NR_JOBS; i++)
		check(step_done[i] == 1);
	workqueue_destroy(wq);
	if (failures)
		return 1;
	printf("kernel_style: %d jobs ran both steps and were freed\n", NR_JOBS);
	return 0;
}
