/*
 * blockio: a block-I/O path in the kernel's style, the demo that closuretrace traces.
 *
 * A run submits requests. Each request (a closure, child of the run's root closure) is split into
 * bios, one per segment range; each bio (a closure, child of its request) hands its I/Os to a
 * simulated device, a pool of plain threads that complete each I/O after a short deterministic
 * delay. A bio holds one reference per segment in flight; the device gives them back with
 * closure_put (a one-segment I/O) or closure_sub (a two-segment I/O, completed in one go).
 *
 *   main ─ done (stack) ◀─ root ◀─ request ◀─ bio ◀─ segments in flight (device threads)
 *
 * Requests are submitted plugged, as the block layer batches them: each waits on the plug
 * waitlist until the submitter unplugs a batch with closure_wake_up(). A woken request dispatches
 * its bios on the workqueue; a bio whose I/Os are all done ends on the workqueue and returns,
 * which puts its request; a request whose bios have all returned completes on the workqueue and
 * frees itself with closure_return_with_destructor; the root's continuation runs when the last
 * request has gone, and main's closure_sync() on the stack closure returns.
 *
 * --leak plants one bug: a closure_get in bio_take_leaked_reference() that is never put. That
 * bio, its request, the root and main's wait then never finish; the run still ends promptly.
 * --counts prints how many times each probe of docs/probes.md fired, derived from the demo's own
 * bookkeeping of what it did (not from a tracer), so that a tracer's counts can be checked.
 */
#define _GNU_SOURCE
#include <closure.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BIOS	64
#define MAX_THREADS	64
#define MAX_BIO_SEGS	4 /* a bio covers 1..4 segments */
#define MAX_IO_SEGS	2 /* an I/O carries at most 2 of them */
#define MAX_IOS_PER_BIO (MAX_BIO_SEGS / MAX_IO_SEGS)

struct bio;

/* One I/O handed to the device; it holds one reference on its bio per segment it carries. */
struct io {
	struct io *next;
	struct bio *bio;
	unsigned segments;
	unsigned delay_us;
};

struct device {
	pthread_mutex_t lock;
	pthread_cond_t more; /* an I/O was queued, or the device is stopping */
	pthread_cond_t idle; /* an I/O completed */
	struct io *head, *tail;
	unsigned long completed;
	bool stopping;
	int nthreads;
	pthread_t threads[MAX_THREADS];
};

struct bio {
	struct closure cl;
	struct request *req;
	unsigned index;
	unsigned segments;
	struct io ios[MAX_IOS_PER_BIO];
};

struct request {
	struct closure cl;
	struct blockio *run;
	unsigned id;
	unsigned nr_bios;
	struct bio bios[];
};

/* What the demo did, counted where it did it; --counts turns it into probe counts. */
struct bookkeeping {
	unsigned long requests, bios, plugged, woken, syncs;
	unsigned long dispatched, bios_submitted, segment_refs, leaked_refs;
	unsigned long io_puts, io_subs;
	unsigned long bios_ended, requests_completed, requests_freed, runs_completed;
};

struct blockio {
	struct closure root; /* parent of every request */
	struct workqueue *wq;
	struct device dev;
	struct closure_waitlist plug;
	struct request **tags; /* requests in flight by id, as a tag set */
	unsigned nr_requests, nr_bios, plug_batch;
	bool leak;
	struct bookkeeping did;
};

#define count(run, what, n) __atomic_fetch_add(&(run)->did.what, (n), __ATOMIC_RELAXED)

/* Deterministic shape of the work: how many segments each bio covers, how long each I/O takes. */
static unsigned bio_segments(unsigned req, unsigned bio)
{
	return 1 + (req + bio) % MAX_BIO_SEGS;
}

static unsigned io_delay_us(unsigned req, unsigned bio, unsigned io)
{
	return 20 + (req * 7 + bio * 13 + io * 29) % 80;
}

/* The number of I/Os a run issues: how long to wait for the device to go idle. */
static unsigned long total_ios(const struct blockio *run)
{
	unsigned long n = 0;

	for (unsigned r = 0; r < run->nr_requests; r++)
		for (unsigned b = 0; b < run->nr_bios; b++)
			n += (bio_segments(r, b) + MAX_IO_SEGS - 1) / MAX_IO_SEGS;
	return n;
}

/* ---- the device: plain threads, no closures of their own ---- */

static void io_complete(struct blockio *run, struct io *io)
{
	struct bio *bio = io->bio;
	unsigned segments = io->segments;

	/* After the last reference is given back, bio (and io inside it) may be gone. */
	if (segments == 1) {
		count(run, io_puts, 1);
		closure_put(&bio->cl);
	} else {
		count(run, io_subs, 1);
		closure_sub(&bio->cl, segments);
	}
}

static void *device_thread(void *arg)
{
	struct blockio *run = arg;
	struct device *dev = &run->dev;
	struct io *io;

	pthread_mutex_lock(&dev->lock);
	for (;;) {
		while (!dev->head && !dev->stopping)
			pthread_cond_wait(&dev->more, &dev->lock);
		io = dev->head;
		if (!io)
			break;
		dev->head = io->next;
		if (!dev->head)
			dev->tail = NULL;
		pthread_mutex_unlock(&dev->lock);

		nanosleep(&(struct timespec){.tv_nsec = io->delay_us * 1000L}, NULL);
		io_complete(run, io);

		pthread_mutex_lock(&dev->lock);
		dev->completed++;
		pthread_cond_broadcast(&dev->idle);
	}
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

static void device_submit(struct device *dev, struct io *io)
{
	io->next = NULL;
	pthread_mutex_lock(&dev->lock);
	if (dev->tail)
		dev->tail->next = io;
	else
		dev->head = io;
	dev->tail = io;
	pthread_cond_signal(&dev->more);
	pthread_mutex_unlock(&dev->lock);
}

static int device_start(struct blockio *run, int threads)
{
	struct device *dev = &run->dev;

	pthread_mutex_init(&dev->lock, NULL);
	pthread_cond_init(&dev->more, NULL);
	pthread_cond_init(&dev->idle, NULL);
	for (dev->nthreads = 0; dev->nthreads < threads; dev->nthreads++)
		if (pthread_create(&dev->threads[dev->nthreads], NULL, device_thread, run))
			return -1;
	return 0;
}

static void device_wait_completed(struct device *dev, unsigned long ios)
{
	pthread_mutex_lock(&dev->lock);
	while (dev->completed < ios)
		pthread_cond_wait(&dev->idle, &dev->lock);
	pthread_mutex_unlock(&dev->lock);
}

static void device_stop(struct device *dev)
{
	pthread_mutex_lock(&dev->lock);
	dev->stopping = true;
	pthread_cond_broadcast(&dev->more);
	pthread_mutex_unlock(&dev->lock);
	for (int i = 0; i < dev->nthreads; i++)
		pthread_join(dev->threads[i], NULL);
	pthread_cond_destroy(&dev->idle);
	pthread_cond_destroy(&dev->more);
	pthread_mutex_destroy(&dev->lock);
}

/* ---- bios ---- */

/* --leak: the planted bug. The reference taken here is never put back. */
static __attribute__((noinline)) void bio_take_leaked_reference(struct bio *bio)
{
	closure_get(&bio->cl); /* LEAK: no closure_put or closure_sub ever matches this get */
}

static void bio_endio(struct closure *cl)
{
	struct bio *bio = container_of(cl, struct bio, cl);

	count(bio->req->run, bios_ended, 1);
	closure_return(cl); /* finished: puts the request */
}

/* Runs through closure_call() with the bio's running reference: issue its I/Os. */
static void bio_submit(struct closure *cl)
{
	struct bio *bio = container_of(cl, struct bio, cl);
	struct request *req = bio->req;
	struct blockio *run = req->run;
	unsigned left = bio->segments;

	count(run, bios_submitted, 1);
	if (run->leak && req->id == run->nr_requests / 2 && bio->index == 0) {
		bio_take_leaked_reference(bio);
		count(run, leaked_refs, 1);
	}
	for (unsigned i = 0; left; i++) {
		struct io *io = &bio->ios[i];

		io->bio = bio;
		io->segments = left < MAX_IO_SEGS ? left : MAX_IO_SEGS;
		io->delay_us = io_delay_us(req->id, bio->index, i);
		left -= io->segments;
		for (unsigned s = 0; s < io->segments; s++)
			closure_get(cl); /* one per segment in flight, given back by the device */
		count(run, segment_refs, io->segments);
		device_submit(&run->dev, io);
	}
	continue_at(cl, bio_endio, run->wq);
}

/* ---- requests ---- */

static void request_free(struct closure *cl)
{
	struct request *req = container_of(cl, struct request, cl);
	struct blockio *run = req->run;

	count(run, requests_freed, 1);
	run->tags[req->id] = NULL;
	free(req);
}

static void request_complete(struct closure *cl)
{
	struct request *req = container_of(cl, struct request, cl);

	count(req->run, requests_completed, 1);
	closure_return_with_destructor(cl, request_free); /* frees req, then puts the root */
}

/* Unplugged: split the request into bios and let them run. */
static void request_dispatch(struct closure *cl)
{
	struct request *req = container_of(cl, struct request, cl);
	struct blockio *run = req->run;

	count(run, dispatched, 1);
	for (unsigned i = 0; i < req->nr_bios; i++) {
		struct bio *bio = &req->bios[i];

		bio->req = req;
		bio->index = i;
		bio->segments = bio_segments(req->id, i);
		count(run, bios, 1);
		closure_call(&bio->cl, bio_submit, NULL, cl);
	}
	continue_at(cl, request_complete, run->wq); /* once every bio has returned */
}

static struct request *request_alloc(struct blockio *run, unsigned id)
{
	struct request *req = calloc(1, sizeof(*req) + run->nr_bios * sizeof(struct bio));

	if (!req)
		return NULL;
	req->run = run;
	req->id = id;
	req->nr_bios = run->nr_bios;
	run->tags[id] = req;
	return req;
}

/* Queue a request behind the plug: it dispatches when the submitter unplugs. */
static void request_submit(struct blockio *run, struct request *req)
{
	closure_init(&req->cl, &run->root);
	count(run, requests, 1);
	if (closure_wait(&run->plug, &req->cl))
		count(run, plugged, 1);
	continue_at(&req->cl, request_dispatch, run->wq);
}

static void unplug(struct blockio *run)
{
	/* Each closure on the list is woken once; only this thread adds to it. */
	count(run, woken, run->did.plugged - run->did.woken);
	closure_wake_up(&run->plug);
}

/* ---- the run ---- */

static void run_complete(struct closure *cl)
{
	struct blockio *run = container_of(cl, struct blockio, root);

	count(run, runs_completed, 1);
	closure_return(cl); /* puts main's stack closure: its closure_sync() returns */
}

/*
 * How many times each probe fired, from what the demo counted it did and the library's documented
 * semantics (docs/probes.md). Every closure that returns here returns with nothing else
 * outstanding, so each return finishes it at once, and each finish puts its parent.
 */
static void print_counts(const struct bookkeeping *d)
{
	unsigned long finished = d->bios_ended + d->requests_completed + d->runs_completed;
	unsigned long inits = 2 /* done, root */ + d->requests + d->bios;
	unsigned long parent_refs = 1 /* root on done */ + d->requests + d->bios;
	/*
	 * continue_at: each request twice (to dispatch, to complete), the root once, each bio twice
	 * (closure_call, to end), and every return.
	 */
	unsigned long continues = d->requests + d->dispatched + 1 + 2 * d->bios + finished;
	/* dispatch, bio_submit (closure_call runs it at once), bio_endio, completions, root */
	unsigned long runs = d->dispatched + d->bios_submitted + finished;

	printf("init %lu\n", inits);
	printf("get %lu\n", parent_refs + d->segment_refs + d->leaked_refs);
	printf("put %lu\n", d->io_puts + finished);
	printf("sub %lu\n", d->io_subs);
	printf("continue_at %lu\n", continues);
	printf("run %lu\n", runs);
	printf("finish %lu\n", finished);
	printf("destructor %lu\n", d->requests_freed);
	printf("wait %lu\n", d->plugged);
	printf("wake %lu\n", d->woken);
	printf("sync_begin %lu\n", d->syncs);
	printf("sync_end %lu\n", d->syncs);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: blockio [--requests N] [--bios K] [--threads T] [--plug B] [--leak] "
		"[--counts]\n"
		"  --requests N  requests to submit (default 100)\n"
		"  --bios K      bios per request, 1..%d (default 4)\n"
		"  --threads T   device and workqueue threads, 1..%d (default 4)\n"
		"  --plug B      requests per plugged batch (default 8)\n"
		"  --leak        leak one reference (see bio_take_leaked_reference)\n"
		"  --counts      print how many times each closure probe fired\n",
		MAX_BIOS, MAX_THREADS);
}

static bool parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"requests", required_argument, NULL, 'n'}, {"bios", required_argument, NULL, 'k'},
		{"threads", required_argument, NULL, 't'},  {"plug", required_argument, NULL, 'b'},
		{"leak", no_argument, NULL, 'l'},	    {"counts", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},	    {0},
	};
	/* Static, so that a leaked request stays reachable through the tag set (LeakSanitizer). */
	static struct blockio run = {.plug = CLOSURE_WAITLIST_INIT};
	unsigned threads = 4;
	bool counts = false;
	struct closure done;
	int opt, which = 0;

	run.nr_requests = 100;
	run.nr_bios = 4;
	run.plug_batch = 8;
	while ((opt = getopt_long(argc, argv, "", options, &which)) != -1) {
		bool ok = true;

		switch (opt) {
		case 'n':
			ok = parse_uint(optarg, 1, 1000000, &run.nr_requests);
			break;
		case 'k':
			ok = parse_uint(optarg, 1, MAX_BIOS, &run.nr_bios);
			break;
		case 't':
			ok = parse_uint(optarg, 1, MAX_THREADS, &threads);
			break;
		case 'b':
			ok = parse_uint(optarg, 1, 1000000, &run.plug_batch);
			break;
		case 'l':
			run.leak = true;
			break;
		case 'c':
			counts = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (!ok) {
			fprintf(stderr, "blockio: bad value for --%s: '%s'\n", options[which].name,
				optarg);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "blockio: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	run.tags = calloc(run.nr_requests, sizeof(*run.tags));
	run.wq = workqueue_create("blockio-wq", threads);
	if (!run.tags || !run.wq || device_start(&run, threads)) {
		fprintf(stderr, "blockio: out of memory or threads\n");
		return 1;
	}

	closure_init_stack(&done);
	closure_init(&run.root, &done);
	for (unsigned i = 0; i < run.nr_requests; i++) {
		struct request *req = request_alloc(&run, i);

		if (!req) {
			fprintf(stderr, "blockio: out of memory\n");
			return 1;
		}
		request_submit(&run, req);
		if ((i + 1) % run.plug_batch == 0 || i + 1 == run.nr_requests)
			unplug(&run);
	}
	continue_at(&run.root, run_complete, NULL); /* runs where the last request lets go */

	count(&run, syncs, 1);
	if (!run.leak) {
		closure_sync(&done); /* the whole run */
	} else {
		/*
		 * The leaked reference keeps the root, hence done, from finishing: closure_sync()
		 * would sleep forever. Let everything else settle instead (every I/O completed,
		 * every continuation run), then ask once, with a zero timeout, whether done
		 * finished.
		 */
		device_wait_completed(&run.dev, total_ios(&run));
		workqueue_destroy(run.wq);
		run.wq = NULL;
		if (closure_sync_timeout(&done, 0) == -ETIME)
			fprintf(stderr,
				"blockio: --leak: request %u never finished (bio 0 holds a "
				"reference "
				"that was never put)\n",
				run.nr_requests / 2);
	}
	device_stop(&run.dev);
	workqueue_destroy(run.wq);

	if (counts)
		print_counts(&run.did);
	else
		printf("blockio: %lu requests, %lu bios, %lu segments completed\n",
		       run.did.requests_completed, run.did.bios_ended, run.did.segment_refs);
	if (!run.leak)
		free(run.tags);
	return 0;
}
