/*
 * service: a never-ending service in the kernel's style, the program to record live
 * (`closuretrace record -p PID -d 3`, `closuretrace top -p PID`).
 *
 * It accepts requests at a steady rate, forever (or --requests N, then waits for them and exits).
 * Each request (a closure) splits into child closures, one per piece of work; each child takes a
 * reference for its work, hands the work to a pool of completion threads and continues on the
 * workqueue; a completion thread puts the child's reference after a short delay, the child's
 * continuation returns (which puts its request), and when its children have all returned the
 * request completes on the workqueue and frees itself.
 *
 *   request ◀─ child ◀─ work in flight (completion threads)
 *
 * --leak-every N plants a bug in one request in N: child_take_extra_reference() takes a reference
 * that nobody puts back, so that child and its request never finish. Each leaked child's address is
 * printed on standard output ("leaked 0x..."), so that a test can tell a real leak from a closure
 * that was only in flight when the recording stopped.
 */
#define _GNU_SOURCE
#include <closure.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_CHILDREN 16

struct request;

struct child {
	struct closure cl;
	struct request *req;
	struct child *next_work; /* on the completion queue */
	struct timespec due;	 /* when its work completes */
};

struct request {
	struct closure cl;
	unsigned long id;
	unsigned nr_children;
	struct child children[];
};

struct options {
	double rate;		    /* requests per second */
	unsigned children, threads; /* children per request, completion threads */
	unsigned long leak_every;   /* 0: never */
	unsigned long requests;	    /* 0: forever */
	unsigned work_us;	    /* how long a child's work takes (plus up to 20%) */
};

/* The completion threads and their queue of work (plain threads, as a device would be). */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct child *head, *tail;
	bool stopping; /* --requests done: the threads end once the queue is empty */
} work = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, false};

/* Requests finished, for --requests: the last one wakes main. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t done;
	unsigned long finished;
} tally = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static struct workqueue *wq;

static void request_free(struct closure *cl)
{
	struct request *req = container_of(cl, struct request, cl);

	free(req);
	pthread_mutex_lock(&tally.lock);
	tally.finished++;
	pthread_cond_signal(&tally.done);
	pthread_mutex_unlock(&tally.lock);
}

/* Every child has returned. */
static void request_done(struct closure *cl)
{
	closure_return_with_destructor(cl, request_free);
}

/* The child's work is done: it returns, which puts its request. */
static void child_done(struct closure *cl)
{
	closure_return(cl);
}

static void *completion_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct child *c;

		pthread_mutex_lock(&work.lock);
		while (!work.head && !work.stopping)
			pthread_cond_wait(&work.more, &work.lock);
		if (!work.head) {
			pthread_mutex_unlock(&work.lock);
			return NULL;
		}
		c = work.head;
		work.head = c->next_work;
		if (!work.head)
			work.tail = NULL;
		pthread_mutex_unlock(&work.lock);
		/* Work is queued in order of (nearly) its due time: one thread serves any rate. */
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &c->due, NULL);
		closure_put(&c->cl); /* the work's reference */
	}
	return NULL;
}

static void queue_work(struct child *c, unsigned delay_us)
{
	clock_gettime(CLOCK_MONOTONIC, &c->due);
	c->due.tv_nsec += (long)delay_us * 1000;
	c->due.tv_sec += c->due.tv_nsec / 1000000000L;
	c->due.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&work.lock);
	c->next_work = NULL;
	if (work.tail)
		work.tail->next_work = c;
	else
		work.head = c;
	work.tail = c;
	pthread_cond_signal(&work.more);
	pthread_mutex_unlock(&work.lock);
}

/* The bug --leak-every plants: a reference for work that is never queued, so never put. */
static __attribute__((noinline)) void child_take_extra_reference(struct child *c)
{
	closure_get(&c->cl);
	printf("leaked %p\n", (void *)&c->cl);
	fflush(stdout);
}

static void start_child(const struct options *o, struct request *req, struct child *c, bool leak)
{
	unsigned jitter = (unsigned)((req->id * 7 + (unsigned long)(c - req->children)) % 5);

	c->req = req;
	closure_init(&c->cl, &req->cl);
	closure_get(&c->cl); /* for the work, put by a completion thread */
	if (leak)
		child_take_extra_reference(c);
	queue_work(c, o->work_us + o->work_us / 20 * jitter);
	continue_at(&c->cl, child_done, wq);
}

static void start_request(const struct options *o, unsigned long id)
{
	struct request *req = calloc(1, sizeof(*req) + o->children * sizeof(req->children[0]));
	bool leak = o->leak_every && id % o->leak_every == o->leak_every - 1;

	if (!req) {
		perror("service");
		exit(1);
	}
	req->id = id;
	req->nr_children = o->children;
	closure_init(&req->cl, NULL);
	for (unsigned i = 0; i < o->children; i++)
		start_child(o, req, &req->children[i], leak && i == o->children - 1);
	continue_at(&req->cl, request_done, wq);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: service [--rate R] [--children K] [--threads T] [--leak-every N] "
		     "[--work-us US] [--requests N]\n"
		     "  --rate R         requests per second (default 1000)\n"
		     "  --children K     child closures per request, 1..16 (default 3)\n"
		     "  --threads T      completion threads (default 2)\n"
		     "  --leak-every N   leak one child closure in N requests (default: never)\n"
		     "  --work-us US     how long a child's work takes, in µs (default 200)\n"
		     "  --requests N     stop after N requests, once the others finished (default: "
		     "run forever)\n");
}

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"rate", required_argument, NULL, 'r'},
		{"children", required_argument, NULL, 'c'},
		{"threads", required_argument, NULL, 't'},
		{"leak-every", required_argument, NULL, 'l'},
		{"requests", required_argument, NULL, 'n'},
		{"work-us", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct options){.rate = 1000, .children = 3, .threads = 2, .work_us = 200};
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->rate = strtod(optarg, NULL);
			break;
		case 'c':
			o->children = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 't':
			o->threads = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'l':
			o->leak_every = strtoul(optarg, NULL, 10);
			break;
		case 'n':
			o->requests = strtoul(optarg, NULL, 10);
			break;
		case 'w':
			o->work_us = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (!(o->rate > 0 && o->rate <= 1e6) || !o->children || o->children > MAX_CHILDREN ||
	    !o->threads || o->threads > 64 || o->work_us > 10000000 || optind < argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct timespec next;
	long period_ns;
	unsigned long leaked = 0;
	pthread_t threads[64];

	if (parse(argc, argv, &o))
		return 2;
	period_ns = (long)(1e9 / o.rate);
	wq = workqueue_create("service", 2);
	for (unsigned i = 0; i < o.threads; i++) {
		if (pthread_create(&threads[i], NULL, completion_thread, NULL)) {
			perror("service: pthread_create");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (unsigned long id = 0; !o.requests || id < o.requests; id++) {
		start_request(&o, id);
		leaked += o.leak_every && id % o.leak_every == o.leak_every - 1;
		/* A steady rate: sleep to the next tick, not for a period (no drift). */
		next.tv_nsec += period_ns;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	pthread_mutex_lock(&tally.lock);
	while (tally.finished < o.requests - leaked)
		pthread_cond_wait(&tally.done, &tally.lock);
	pthread_mutex_unlock(&tally.lock);
	/* Every thread joined before the exit: a program checked under valgrind ends clean. */
	pthread_mutex_lock(&work.lock);
	work.stopping = true;
	pthread_cond_broadcast(&work.more);
	pthread_mutex_unlock(&work.lock);
	for (unsigned i = 0; i < o.threads; i++)
		pthread_join(threads[i], NULL);
	workqueue_destroy(wq);
	return 0;
}
