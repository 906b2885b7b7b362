/* A traced process's batch registry: see batch_proc.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "batch_proc.h"

#define HEAD_SIZE offsetof(struct closure_batch_buf, rec)
/* A poll reads each head, then its depth again: two iovecs a buffer, IOV_MAX in one call. */
#define POLL_HEADS  (IOV_MAX / 2)
#define POLL_STRIDE (HEAD_SIZE + 8)
_Static_assert(HEAD_SIZE == CT_BUF_HEAD_SIZE && sizeof(struct ct_buf_head) == CT_BUF_HEAD_SIZE,
	       "BPF's view of a buffer's head");
_Static_assert(offsetof(struct closure_batch_record, seq) == CT_RECORD_SEQ_OFF, "seq offset");
_Static_assert(offsetof(struct closure_batch_registry, version) == CT_REGISTRY_VERSION_OFF &&
		       offsetof(struct closure_batch_registry, trees) == CT_REGISTRY_TREES_OFF &&
		       offsetof(struct closure_batch_registry, trees_left_out) ==
			       CT_REGISTRY_TREES_OFF + 8,
	       "BPF's view of the registry's sampling counters");

static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

static int poke(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {(void *)buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

/* A registry up to polled_until (version 2 added it at the end; later versions append after it). */
static int read_registry(pid_t pid, uint64_t registry, struct closure_batch_registry *reg)
{
	size_t v1 = offsetof(struct closure_batch_registry, polled_until);
	int err = peek(pid, registry, reg, v1);

	if (!err && (reg->magic != CLOSURE_BATCH_MAGIC || reg->version < 1 ||
		     reg->version > CLOSURE_BATCH_VERSION ||
		     reg->record_size != sizeof(struct closure_batch_record)))
		err = -EPROTO;
	reg->polled_until = 0;
	if (!err && reg->version >= 2)
		err = peek(pid, registry + v1, &reg->polled_until, sizeof(reg->polled_until));
	return err;
}

/* Writes polled_until into a registry that has it (version 2 on). */
static int write_polled_until(pid_t pid, uint64_t registry,
			      const struct closure_batch_registry *reg, uint64_t until)
{
	if (reg->version < 2 || reg->polled_until == until)
		return 0;
	return poke(pid, registry + offsetof(struct closure_batch_registry, polled_until), &until,
		    sizeof(until));
}

/*
 * The records [0, n) of the buffer at addr that are whole, fed to d (*fed: how many were new):
 * the thread may be writing one as we read, so the buffer is read twice and a record is taken
 * only when both copies agree and its sequence number is base + slot (the library stores it
 * last). a and b: room for a buffer each. Returns the records taken, or -errno.
 */
static long take_whole(struct batch_decoder *d, pid_t pid, uint64_t addr, uint32_t image,
		       uint32_t n, struct closure_batch_buf *a, struct closure_batch_buf *b,
		       long *fed)
{
	size_t len = HEAD_SIZE + (size_t)n * sizeof(a->rec[0]);
	uint32_t k = 0;
	int err = peek(pid, addr, a, len);

	if (!err)
		err = peek(pid, addr, b, len);
	if (err)
		return err;
	if (a->base != b->base || a->tid != b->tid)
		return 0; /* handed over in between: the batch has them */
	if (a->n < n)
		n = a->n;
	for (uint32_t i = 0; i < n; i++)
		if (!memcmp(&a->rec[i], &b->rec[i], sizeof(a->rec[i])) &&
		    a->rec[i].seq == (uint32_t)(a->base + i))
			a->rec[k++] = a->rec[i];
	*fed += (long)batch_decoder_feed(d, (uint32_t)pid, a->tid,
					 batch_stream_key(addr + HEAD_SIZE, image), a->rec, k);
	return k;
}

long batch_drain(struct batch_decoder *d, pid_t pid, uint64_t registry, uint32_t image)
{
	struct closure_batch_registry reg;
	struct closure_batch_buf *a = malloc(2 * sizeof(*a)), head;
	uint64_t addr;
	long added = 0;
	int err = a ? read_registry(pid, registry, &reg) : -ENOMEM;

	addr = err ? 0 : (uint64_t)(uintptr_t)reg.head;
	for (unsigned i = 0; !err && addr && i < BATCH_DRAIN_MAX_BUFFERS; i++) {
		long got = 0;

		err = peek(pid, addr, &head, HEAD_SIZE);
		if (err)
			break;
		if (head.n)
			got = take_whole(d, pid, addr, image,
					 head.n < CLOSURE_BATCH_RECORDS ? head.n
									: CLOSURE_BATCH_RECORDS,
					 a, a + 1, &added);
		if (got < 0)
			err = (int)got;
		addr = (uint64_t)(uintptr_t)head.next;
	}
	free(a);
	return err ? err : added;
}

/* Adds the buffers listed since the last poll (the list grows at its head only). */
static int learn_buffers(struct batch_poll *p, pid_t pid, uint64_t head)
{
	size_t fresh = 0;
	uint64_t addr = head;
	int err = 0;

	while (addr && addr != p->head && p->n + fresh < BATCH_DRAIN_MAX_BUFFERS) {
		struct closure_batch_buf h;

		if (p->n + fresh == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 16;
			struct batch_poll_buf *v = realloc(p->bufs, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			p->bufs = v;
			p->cap = cap;
		}
		p->bufs[p->n + fresh] = (struct batch_poll_buf){.addr = addr};
		fresh++;
		err = peek(pid, addr, &h, HEAD_SIZE);
		if (err)
			break;
		addr = (uint64_t)(uintptr_t)h.next;
	}
	if (!err) {
		p->head = head;
		p->n += fresh;
	}
	return err;
}

/* The poll's scratch space, made at its first use and kept: a poll runs every 20 ms. */
static int poll_scratch(struct batch_poll *p)
{
	if (!p->heads) {
		p->local = calloc(IOV_MAX, sizeof(*p->local));
		p->remote = calloc(IOV_MAX, sizeof(*p->remote));
		p->heads = calloc(POLL_HEADS, POLL_STRIDE);
		p->copies = malloc(2 * sizeof(*p->copies));
		if (!p->local || !p->remote || !p->heads || !p->copies) {
			batch_poll_free(p); /* the next poll learns the buffers again */
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The frontier of a buffer whose head a poll read (batch_decode.h): depth2 is its depth read
 * after the whole head. No append in progress then (any later one stamps its record after the
 * sweep's clock) and not being handed over: its records still to come are those of [0, n) not
 * taken, no older than its first, and later ones. Otherwise nothing is known.
 */
static void poll_frontier(struct batch_decoder *d, pid_t pid, uint32_t image, uint64_t addr,
			  const struct closure_batch_buf *h, uint32_t depth2, bool taken)
{
	if (depth2 || h->depth || h->n > CLOSURE_BATCH_RECORDS)
		return;
	batch_decoder_frontier(d, (uint32_t)pid, batch_stream_key(addr + HEAD_SIZE, image),
			       h->n && !taken ? h->first_ts : UINT64_MAX);
}

/* One buffer's head as a poll read it: its owner, its idle records taken, its frontier. */
static int poll_buffer(struct batch_poll *p, struct batch_decoder *d, pid_t pid, uint64_t registry,
		       uint32_t image, uint64_t idle_before_ns, const struct closure_batch_buf *h,
		       struct batch_poll_buf *b, long *added)
{
	uint32_t n = h->n < CLOSURE_BATCH_RECORDS ? h->n : CLOSURE_BATCH_RECORDS;
	uint32_t tid = h->owner == 1 ? h->tid : 0, depth2;
	uint64_t mark = h->base << 9 | n;
	long took;

	memcpy(&depth2, (const char *)h + HEAD_SIZE, sizeof(depth2));
	if (tid != b->tid && tid && p->on_owner)
		p->on_owner(p->ctx, pid, registry, tid, b->addr + HEAD_SIZE);
	b->tid = tid;
	/*
	 * A free buffer's records too (a thread that exited inside an append left them), else its
	 * frontier would hold every other back. Empty, taken already, or recent (its thread hands
	 * it over itself); or being handed over
	 * (n past the end: a launched command's thread may wait for us there): its batch brings the
	 * records, ahead of which a poll would only read the newest.
	 */
	if (!n || b->taken == mark || h->first_ts >= idle_before_ns ||
	    h->n > CLOSURE_BATCH_RECORDS) {
		poll_frontier(d, pid, image, b->addr, h, depth2, !n || b->taken == mark);
		return 0;
	}
	took = take_whole(d, pid, b->addr, image, n, p->copies, p->copies + 1, added);
	if (took < 0)
		return (int)took;
	if (took == n) /* else a record was being written: again next time */
		b->taken = mark;
	poll_frontier(d, pid, image, b->addr, h, depth2, took == n);
	return 0;
}

long batch_poll(struct batch_poll *p, struct batch_decoder *d, pid_t pid, uint64_t registry,
		uint32_t image, uint64_t idle_before_ns, uint64_t polled_until)
{
	struct closure_batch_registry reg;
	long added = 0;
	int err = read_registry(pid, registry, &reg);

	/* Renewed before the read: the buffers read now are covered by the promise. */
	if (!err && polled_until)
		err = write_polled_until(pid, registry, &reg, polled_until);
	if (!err)
		err = learn_buffers(p, pid, (uint64_t)(uintptr_t)reg.head);
	if (!err && p->n)
		err = poll_scratch(p);
	for (size_t i = 0; !err && i < p->n; i += POLL_HEADS) {
		size_t m = p->n - i < POLL_HEADS ? p->n - i : POLL_HEADS;
		ssize_t got;

		for (size_t k = 0; k < m; k++) {
			char *at = p->heads + k * POLL_STRIDE;
			uint64_t addr = p->bufs[i + k].addr;

			p->local[2 * k] = (struct iovec){at, HEAD_SIZE};
			p->remote[2 * k] = (struct iovec){(void *)(uintptr_t)addr, HEAD_SIZE};
			/* depth again, after the whole head: see poll_frontier */
			p->local[2 * k + 1] = (struct iovec){at + HEAD_SIZE, sizeof(uint32_t)};
			p->remote[2 * k + 1] = (struct iovec){
				(void *)(uintptr_t)(addr +
						    offsetof(struct closure_batch_buf, depth)),
				sizeof(uint32_t)};
		}
		got = process_vm_readv(pid, p->local, 2 * m, p->remote, 2 * m, 0);
		if (got != (ssize_t)(m * (HEAD_SIZE + sizeof(uint32_t)))) {
			err = got < 0 ? -errno : -EFAULT;
			break;
		}
		for (size_t k = 0; k < m && !err; k++)
			err = poll_buffer(p, d, pid, registry, image, idle_before_ns,
					  (const void *)(p->heads + k * POLL_STRIDE),
					  &p->bufs[i + k], &added);
	}
	return err ? err : added;
}

void batch_poll_free(struct batch_poll *p)
{
	batch_owner_fn *on_owner = p->on_owner;
	void *ctx = p->ctx;

	free(p->bufs);
	free(p->local);
	free(p->remote);
	free(p->heads);
	free(p->copies);
	*p = (struct batch_poll){.on_owner = on_owner, .ctx = ctx};
}

int batch_registry_check(pid_t pid, uint64_t registry)
{
	struct closure_batch_registry reg;

	return read_registry(pid, registry, &reg);
}

int batch_stop_polling(pid_t pid, uint64_t registry)
{
	struct closure_batch_registry reg;
	int err = read_registry(pid, registry, &reg);

	return err ? err : write_polled_until(pid, registry, &reg, 0);
}

int batch_ack(pid_t pid, uint64_t registry, uint64_t handed)
{
	return poke(pid, registry + offsetof(struct closure_batch_registry, consumed), &handed,
		    sizeof(handed));
}

#define SAMPLING_OFF offsetof(struct closure_batch_registry, sample_every)
/* Up to trees_left_out: version 3's end (version 4 appended behind_limit). */
#define SAMPLING_LEN (offsetof(struct closure_batch_registry, trees_left_out) + 8 - SAMPLING_OFF)

int batch_sampling_read(pid_t pid, uint64_t registry, struct batch_sampling *out)
{
	struct closure_batch_registry reg;
	int err = read_registry(pid, registry, &reg);

	if (!err && reg.version < 3)
		err = -EPROTO;
	if (!err)
		err = peek(pid, registry + SAMPLING_OFF, &reg.sample_every, SAMPLING_LEN);
	if (!err)
		*out = (struct batch_sampling){.every = reg.sample_every,
					       .session = reg.session,
					       .trees = reg.trees,
					       .trees_left_out = reg.trees_left_out};
	return err;
}

int batch_sampling_write(pid_t pid, uint64_t registry, uint32_t every, uint8_t session)
{
	struct {
		uint32_t every;
		uint8_t session;
	} __attribute__((packed)) v = {every, session};

	_Static_assert(offsetof(struct closure_batch_registry, session) == SAMPLING_OFF + 4,
		       "session follows sample_every");
	return poke(pid, registry + SAMPLING_OFF, &v, sizeof(v));
}

int batch_set_wait_limit(pid_t pid, uint64_t registry, uint64_t limit)
{
	return poke(pid, registry + offsetof(struct closure_batch_registry, wait_limit), &limit,
		    sizeof(limit));
}

int batch_set_behind_limit(pid_t pid, uint64_t registry, uint64_t limit)
{
	struct closure_batch_registry reg;
	int err = read_registry(pid, registry, &reg);

	if (!err && reg.version < 4)
		err = -EPROTO;
	return err ? err
		   : poke(pid, registry + offsetof(struct closure_batch_registry, behind_limit),
			  &limit, sizeof(limit));
}

int batch_handed(pid_t pid, uint64_t registry, uint64_t *handed)
{
	return peek(pid, registry + offsetof(struct closure_batch_registry, handed), handed,
		    sizeof(*handed));
}
