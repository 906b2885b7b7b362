/* The drain thread: see drain.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "batch_proc.h"
#include "closuretrace.skel.h"
#include "drain.h"
#include "ring_pos.h"
#include "event.h"
#include "session.h"
#include "session_batch.h"
#include "spool.h"

/* The thread's nice value (see run). */
#define DRAIN_NICE -10
/* How long the thread waits for the ring buffer's wake-up before it reads anyway (ms). */
#define POLL_MS 5
/* How often, under -p, an empty ring buffer lets it acknowledge what a registry handed over. */
#define CATCH_UP_NS (20 * 1000 * 1000ull)
/* The processes (images, registries) whose handovers it acknowledges, at most. */
#define FLOW_MAX 4096
/* Memory for the records the loop handles first (module, loader, exec: never many). */
#define URGENT_MEM (1u << 20)
/* How much the loop decodes between two looks at the clock (about 1,000 events). */
#define READ_CLOCK_BYTES (64 * 1024u)

/* A registry, as the drain thread acknowledges its handovers. */
struct flow {
	uint32_t pid, image;
	uint64_t registry, handed, acked;
	bool gone; /* exec'ed or exited: never written again */
};

struct drain {
	struct ring_buffer *rb;
	drain_take_fn *take;
	pthread_t thread;
	bool running; /* the thread runs: the ring buffer's callback is on it */
	int efd;
	/*
	 * The thread waits on the ring buffer and on wake, which drain_sync and drain_stop write:
	 * else they would wait for the end of its POLL_MS (two waits of up to 5 ms ended every
	 * check). epfd -1: libbpf's own wait, to the timeout.
	 */
	int epfd, wake;
	struct spool q;	     /* events, in the ring buffer's order */
	struct spool urgent; /* module, loader and exec records: handled before the events */
	uint64_t put_lost;   /* operations of records the queue could not keep (no memory) */
	uint64_t unreadable; /* operations of chunks its file could not give back */
	uint64_t cut_ns;     /* the stop's cut, 0 before (drain_cut): written by the loop */
	uint64_t after_cut;  /* operations dropped for being made after it (both threads: atomic) */

	pthread_mutex_t lock; /* the fields below */
	pthread_cond_t done;
	bool stop;
	uint64_t sync_req, sync_done;

	/*
	 * Acknowledgements, and a limit per registry: a launched command's library waits past it
	 * (lossless); under -p it leaves new trees out past it (whole trees or nothing). Read-only
	 * copies of the session.
	 */
	bool launched, follow;
	pid_t root;
	int pidfd, traced_fd;
	uint64_t limit; /* 0: the ring buffer is too small for one */
	uint64_t caught_up_ns;
	const volatile uint64_t *ring_pos; /* NULL: never caught up from the registries */
	struct flow *flows;
	size_t n_flows;
};

/*
 * Whether pid is still a process of the command, so that a value may be written into its memory:
 * the first process while its pidfd can be signalled; another while BPF's set of traced processes
 * has it (it leaves the set as it exits, before its pid can be reused).
 */
static bool still_traced(struct drain *d, uint32_t pid)
{
	__u8 yes;

	if (pid == (uint32_t)d->root)
		return d->pidfd >= 0 && !syscall(SYS_pidfd_send_signal, d->pidfd, 0, NULL, 0);
	return d->follow && d->traced_fd >= 0 && !bpf_map_lookup_elem(d->traced_fd, &pid, &yes);
}

/* Tells f's registry that everything up to handed left the ring buffer. A process gone (or the
 * write refused: ESRCH) is never written again: its pid could be reused. */
static void flow_ack_to(struct drain *d, struct flow *f, uint64_t handed)
{
	if (!still_traced(d, f->pid) || batch_ack((pid_t)f->pid, f->registry, handed))
		f->gone = true;
	else
		f->acked = handed;
}

static struct flow *flow_of(struct drain *d, const struct ct_batch_event *h)
{
	struct flow *f;

	for (size_t i = 0; i < d->n_flows; i++) {
		f = &d->flows[i];
		if (f->pid == h->pid && f->image == h->image && f->registry == h->registry)
			return f;
	}
	if (d->n_flows == FLOW_MAX)
		return NULL; /* it hands over unacknowledged, so it never waits: nothing is lost */
	for (size_t i = 0; i < d->n_flows; i++)
		if (d->flows[i].pid == h->pid) /* a new image ends the earlier ones */
			d->flows[i].gone = true;
	if (!(d->n_flows & (d->n_flows - 1))) { /* 0, 1, 2, 4, ...: grown by doubling */
		f = realloc(d->flows, (d->n_flows ? 2 * d->n_flows : 1) * sizeof(*f));
		if (!f)
			return NULL;
		d->flows = f;
	}
	f = &d->flows[d->n_flows++];
	*f = (struct flow){.pid = h->pid, .image = h->image, .registry = h->registry};
	if (!d->limit || !still_traced(d, h->pid))
		return f;
	if (d->launched) {
		batch_set_wait_limit((pid_t)h->pid, h->registry, d->limit);
	} else {
		/* Acknowledged first: what an earlier recording left in consumed means nothing. */
		flow_ack_to(d, f, f->handed = h->handed);
		if (!f->gone)
			batch_set_behind_limit((pid_t)h->pid, h->registry, d->limit);
	}
	return f;
}

/* A batch: what its registry has handed over. */
static void flow_note(struct drain *d, const void *data, size_t size)
{
	const struct ct_batch_event *h = data;
	struct flow *f;

	if (size < sizeof(*h) || size != sizeof(*h) + (size_t)h->n * CT_BATCH_RECORD_SIZE)
		return;
	if (!(f = flow_of(d, h)))
		return;
	if (h->handed > f->handed)
		f->handed = h->handed;
	if (h->why != CT_BATCH_THREAD_EXIT)
		f->gone = h->why == CT_BATCH_EXEC;
	/* A long read of a full ring buffer acknowledges as it goes: the limit counts from here. */
	if (!f->gone && d->limit && f->handed - f->acked >= d->limit / 8)
		flow_ack_to(d, f, f->handed);
}

/* Tells each waiting registry what left the ring buffer. */
static void flow_ack(struct drain *d)
{
	for (size_t i = 0; i < d->n_flows; i++) {
		struct flow *f = &d->flows[i];

		if (!f->gone && f->handed != f->acked)
			flow_ack_to(d, f, f->handed);
	}
}

/*
 * Under -p, with the ring buffer empty: everything a registry handed over is read, or was lost
 * in a full ring buffer and will never come. Acknowledged from the registry itself:
 * a process that stopped starting trees while we were behind may hand nothing over for long,
 * and would otherwise go on leaving its new trees out.
 */
static void flow_catch_up(struct drain *d)
{
	uint64_t now = recorder_now_ns(), consumer, producer;

	if (d->launched || !d->ring_pos || now - d->caught_up_ns < CATCH_UP_NS)
		return;
	ring_pos_read(d->ring_pos, &consumer, &producer);
	if (consumer != producer) /* records to read yet, or one being written */
		return;
	d->caught_up_ns = now;
	for (size_t i = 0; i < d->n_flows; i++) {
		struct flow *f = &d->flows[i];
		uint64_t handed;

		if (f->gone || !still_traced(d, f->pid) ||
		    batch_handed((pid_t)f->pid, f->registry, &handed) || handed <= f->acked)
			continue;
		flow_ack_to(d, f, f->handed = handed);
	}
}

/*
 * Made after the stop's cut: an event, or a batch the library handed over whose every record
 * is. Batches drained at a thread's exit or exec stay: they tell the loop that a process image
 * is gone (whose memory it must then never write).
 */
static bool made_after(const void *data, size_t size, uint64_t cut)
{
	const struct ct_batch_event *h = data;
	const struct closure_batch_record *r = (const void *)(h + 1);

	if (*(const uint8_t *)data < CT_NR_OPS)
		return size >= sizeof(struct ct_event) && ((const struct ct_event *)data)->ts > cut;
	if (h->kind != CT_BATCH || h->why != CT_BATCH_HANDED || !h->n ||
	    size != sizeof(*h) + (size_t)h->n * CT_BATCH_RECORD_SIZE)
		return false;
	for (uint32_t i = 0; i < h->n; i++)
		if (r[i].ts <= cut)
			return false;
	return true;
}

/* The operations a ring-buffer record carries: one event, a batch's records, or none. */
static uint32_t events_of(const void *data, size_t size)
{
	uint8_t kind = size ? *(const uint8_t *)data : CT_NR_OPS;

	if (kind < CT_NR_OPS)
		return 1;
	return kind == CT_BATCH && size >= sizeof(struct ct_batch_event)
		       ? ((const struct ct_batch_event *)data)->n
		       : 0;
}

bool drain_record(struct drain *d, const void *data, size_t size)
{
	uint8_t kind = size ? *(const uint8_t *)data : CT_NR_OPS;
	uint32_t events = events_of(data, size);
	uint64_t cut;

	if (!d || !d->running)
		return false;
	if (kind == CT_BATCH && size >= sizeof(struct ct_batch_event))
		flow_note(d, data, size);
	if ((cut = __atomic_load_n(&d->cut_ns, __ATOMIC_ACQUIRE)) && size &&
	    made_after(data, size, cut)) {
		__atomic_fetch_add(&d->after_cut, events, __ATOMIC_RELAXED);
		return true;
	}
	if (kind == CT_MODULE || kind == CT_LOADER || kind == CT_EXEC || kind == CT_FORK ||
	    kind == CT_EXIT) {
		if (!spool_put(&d->urgent, data, size, 0) && !spool_put(&d->q, data, size, 0))
			d->put_lost += events;
	} else if (!spool_put(&d->q, data, size, events)) {
		d->put_lost += events;
	}
	return true;
}

/* Until the ring buffer has records, the loop asks, or timeout_ms have passed. */
static void wait_for_records(struct drain *d, int timeout_ms)
{
	struct epoll_event ev[2];
	uint64_t v;

	if (d->epfd < 0) {
		ring_buffer__poll(d->rb, timeout_ms);
		return;
	}
	if (timeout_ms)
		(void)epoll_wait(d->epfd, ev, 2, timeout_ms);
	(void)!read(d->wake, &v, sizeof(v));
}

/* The loop asks something of the thread: its wait ends now. */
static void wake(struct drain *d)
{
	uint64_t one = 1;

	if (d->wake >= 0)
		(void)!write(d->wake, &one, sizeof(one));
}

/* The thread's wait on the ring buffer's records and on wake; -1 when one cannot be made. */
static int wait_set(struct drain *d)
{
	struct epoll_event rb = {.events = EPOLLIN}, woken = {.events = EPOLLIN};
	int fd = d->wake >= 0 ? epoll_create1(EPOLL_CLOEXEC) : -1;

	if (fd >= 0 && (epoll_ctl(fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(d->rb), &rb) ||
			epoll_ctl(fd, EPOLL_CTL_ADD, d->wake, &woken))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void *run(void *arg)
{
	struct drain *d = arg;

	/*
	 * Ahead of the loop and of the traced process when the CPUs are busy: this thread sleeps
	 * mostly and works little, but a turn it misses for longer than the ring buffer lasts loses
	 * events (on a loaded 2-CPU machine, 60 ms waits were measured at nice 0). Refused without
	 * CAP_SYS_NICE: it runs at the recorder's priority then.
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), DRAIN_NICE);
	for (;;) {
		uint64_t req, one = 1;
		bool stop, queued;

		pthread_mutex_lock(&d->lock);
		req = d->sync_req;
		stop = d->stop;
		pthread_mutex_unlock(&d->lock);
		wait_for_records(d, stop || req != d->sync_done ? 0 : POLL_MS);
		ring_buffer__consume(d->rb);
		queued = spool_commit(&d->urgent);
		queued |= spool_commit(&d->q);
		if (queued) /* a full counter (EAGAIN) has woken the loop already */
			(void)!write(d->efd, &one, sizeof(one));
		flow_ack(d);
		flow_catch_up(d);
		pthread_mutex_lock(&d->lock);
		d->sync_done = req;
		pthread_cond_broadcast(&d->done);
		pthread_mutex_unlock(&d->lock);
		if (stop)
			return NULL;
	}
}

int drain_start(struct session *s, drain_take_fn *take)
{
	struct drain *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	s->drain = d;
	d->efd = d->epfd = d->wake = -1;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->done, NULL);
	/* Tests make the queue spill early (record_test.sh spool_killed). */
	if ((err = spool_init(&d->q, getenv(SPOOL_MEM_ENV) ? strtoul(getenv(SPOOL_MEM_ENV), NULL, 0)
							   : 0)) ||
	    (err = spool_init(&d->urgent, URGENT_MEM)))
		return err;
	d->rb = s->rb;
	d->take = take;
	d->launched = s->procs.launched;
	d->follow = s->procs.follow && s->procs.init_pidns;
	d->root = s->pid;
	d->pidfd = s->procs.pidfd;
	d->traced_fd = s->skel ? bpf_map__fd(s->skel->maps.traced) : -1;
	d->ring_pos = s->skel ? ring_pos_map(bpf_map__fd(s->skel->maps.events)) : NULL;
	/*
	 * Half the ring buffer in records: a launched command waits past it; under -p new trees are
	 * left out past it, and the other half holds the rest of the trees already recorded. At
	 * least two full batches, else no limit at all.
	 */
	if (s->opts->buffer_size / 2 >= 2 * BATCH_BYTES_MAX)
		d->limit = s->opts->buffer_size / 2 / CT_BATCH_RECORD_SIZE;
	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->efd < 0)
		return -errno;
	d->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->epfd = wait_set(d);
	d->running = true;
	err = pthread_create(&d->thread, NULL, run, d);
	if (err)
		d->running = false;
	return -err;
}

/* Decodes what q holds; false when out of time with records left. */
static bool take_from(struct session *s, struct drain *d, struct spool *q, uint64_t *lost)
{
	uint32_t bytes = 0;
	const void *rec;
	size_t size;

	while ((rec = spool_get(q, &size, lost))) {
		uint64_t cut = __atomic_load_n(&d->cut_ns, __ATOMIC_ACQUIRE);

		/* Queued before the stop and made after it: left out undecoded (a producer
		 * faster than us leaves seconds of them behind the stop). */
		if (cut && made_after(rec, size, cut)) {
			__atomic_fetch_add(&d->after_cut, events_of(rec, size), __ATOMIC_RELAXED);
			continue;
		}
		d->take(s, rec, size);
		bytes += (uint32_t)size;
		if (s->loop.read_until_ns && bytes >= READ_CLOCK_BYTES) {
			bytes = 0;
			if (recorder_now_ns() >= s->loop.read_until_ns)
				return false;
		}
	}
	return true;
}

bool drain_take(struct session *s)
{
	struct drain *d = s->drain;
	uint64_t v;

	(void)!read(d->efd, &v, sizeof(v)); /* nothing signalled (EAGAIN): read the queue anyway */
	return !take_from(s, d, &d->urgent, &d->unreadable) ||
	       !take_from(s, d, &d->q, &d->unreadable);
}

void drain_cut(struct drain *d, uint64_t cut_ns)
{
	if (d)
		__atomic_store_n(&d->cut_ns, cut_ns, __ATOMIC_RELEASE);
}

uint64_t drain_after_cut(const struct drain *d)
{
	return d ? __atomic_load_n(&d->after_cut, __ATOMIC_RELAXED) : 0;
}

void drain_sync(struct drain *d)
{
	uint64_t want;

	if (!d || !d->running)
		return;
	pthread_mutex_lock(&d->lock);
	want = ++d->sync_req;
	wake(d);
	while (d->sync_done < want)
		pthread_cond_wait(&d->done, &d->lock);
	pthread_mutex_unlock(&d->lock);
}

void drain_stop(struct drain *d)
{
	if (!d || !d->running)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_mutex_unlock(&d->lock);
	wake(d);
	pthread_join(d->thread, NULL);
	d->running = false;
}

void drain_free(struct drain *d)
{
	if (!d)
		return;
	drain_stop(d);
	if (d->efd >= 0)
		close(d->efd);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->wake >= 0)
		close(d->wake);
	spool_free(&d->q);
	spool_free(&d->urgent);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->done);
	free(d->flows);
	ring_pos_unmap(d->ring_pos);
	free(d);
}

int drain_fd(const struct drain *d)
{
	return d->efd;
}

uint64_t drain_backlog(struct drain *d)
{
	return spool_backlog(&d->q);
}

uint64_t drain_backlog_max(struct drain *d)
{
	return d->q.queued_max; /* read after the thread stopped */
}

uint64_t drain_spooled(struct drain *d)
{
	return d->q.spooled;
}

int drain_error(struct drain *d)
{
	int err;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->q.lock);
	err = d->q.err;
	pthread_mutex_unlock(&d->q.lock);
	return err;
}

uint64_t drain_lost(const struct drain *d)
{
	return d->put_lost + d->unreadable;
}
