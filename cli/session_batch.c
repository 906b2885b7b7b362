/* The batched transport in a session: see session_batch.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch_decode.h"
#include "batch_proc.h"
#include "event.h"
#include "session.h"
#include "session_batch.h"

/* A full batch in the ring buffer, with the ring's own 8-byte header. */
#define BATCH_BYTES_MAX (8 + sizeof(struct ct_batch_event) + CT_BATCH_MAX * CT_BATCH_RECORD_SIZE)

/*
 * From the ring buffer, the process of a thread as the per-operation path finds it; from the
 * in-process sink (no BPF), the process that wrote the batch.
 */
static void emit(void *ctx, const struct ct_event *e, uint32_t pid)
{
	struct session *s = ctx;

	if (s->skel)
		session_emit(s, e);
	else
		session_emit_pid(s, e, pid);
}

int session_batch_init(struct session *s, uint64_t not_before_ns)
{
	s->batch = batch_decoder_new(not_before_ns, emit, s);
	return s->batch ? 0 : -ENOMEM;
}

static struct batch_process *process_for(struct session *s, uint32_t pid, uint64_t registry)
{
	struct batch_process *v;

	for (size_t i = 0; i < s->n_batch_procs; i++)
		if (s->batch_procs[i].pid == pid && s->batch_procs[i].registry == registry)
			return &s->batch_procs[i];
	v = realloc(s->batch_procs, (s->n_batch_procs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->batch_procs = v;
	v = &v[s->n_batch_procs++];
	*v = (struct batch_process){.pid = pid, .registry = registry};
	/*
	 * Lossless: the library may have half the ring buffer in flight, then waits. A ring that
	 * cannot hold two full batches in half of it would make every handover wait in vain.
	 */
	if (s->launched && s->buffer_size / 2 >= 2 * BATCH_BYTES_MAX)
		batch_set_wait_limit((pid_t)pid, registry,
				     s->buffer_size / 2 / CT_BATCH_RECORD_SIZE);
	return v;
}

bool session_batch_record(struct session *s, const void *data, size_t size)
{
	const struct ct_batch_event *h = data;
	struct batch_process *p;

	if (size < sizeof(*h) || h->kind != CT_BATCH)
		return false;
	if (s->closing || !s->batch || size != sizeof(*h) + (size_t)h->n * CT_BATCH_RECORD_SIZE)
		return true;
	s->batch_dropped += h->dropped;
	p = process_for(s, h->pid, h->registry);
	if (p && h->handed > p->handed)
		p->handed = h->handed;
	batch_decoder_feed(s->batch, h->pid, h->tid, h->records,
			   (const struct closure_batch_record *)(h + 1), h->n);
	return true;
}

void session_batch_tick(struct session *s)
{
	if (!s->batch)
		return;
	for (size_t i = 0; s->launched && i < s->n_batch_procs; i++) {
		struct batch_process *p = &s->batch_procs[i];

		if (p->handed != p->acked && !batch_ack((pid_t)p->pid, p->registry, p->handed))
			p->acked = p->handed;
	}
	batch_decoder_release(s->batch, session_now_ns());
}

void session_batch_stop(struct session *s)
{
	if (!s->batch)
		return;
	for (size_t i = 0; i < s->n_batch_procs; i++) {
		struct batch_process *p = &s->batch_procs[i];

		batch_set_wait_limit((pid_t)p->pid, p->registry, 0); /* never wait for us again */
		batch_drain(s->batch, (pid_t)p->pid, p->registry);
	}
	batch_decoder_flush(s->batch);
}

uint64_t session_batch_lost(struct session *s)
{
	return s->batch_dropped;
}

void session_batch_free(struct session *s)
{
	batch_decoder_free(s->batch);
	s->batch = NULL;
	free(s->batch_procs);
	s->batch_procs = NULL;
}
