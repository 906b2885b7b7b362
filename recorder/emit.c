/*
 * One event into the trace and to the consumer (check's and top's model): every path an event
 * takes (a ring-buffer record, a decoded batch, the snapshot) ends here. See session.h.
 */
#include <string.h>

#include "batch_decode.h"
#include "event.h"
#include "session.h"
#include "snapshot_keep.h"
#include "snapshot_late.h"
#include "trace_args.h"
#include "trace_writer.h"

void session_emit(struct session *s, const struct ct_event *e)
{
	session_emit_pid(s, e, procset_process_of(s, e->tid));
}

/* An event kept: written with its frames (n of them), given to the consumer, counted, its code
 * addresses noted. */
static void write_event(struct session *s, const struct ct_event *e, uint32_t pid,
			const uint64_t *ips, unsigned n)
{
	if (s->out.file)
		trace_write_event_frames(s->out.file, e, s->out.start_ns, pid, ips, n);
	if (n && s->opts->consumer && s->opts->consumer->frames)
		s->opts->consumer->frames(s->opts->consumer_ctx, e, pid, ips, n);
	if (s->opts->consumer && s->opts->consumer->event)
		s->opts->consumer->event(s->opts->consumer_ctx, e, pid);
	s->out.events++;
	session_note_address(s, e->ip);
	for (unsigned i = 0; i < n; i++)
		session_note_address(s, ips[i]);
	if (e->kind == CT_INIT)
		s->out.live += !e->x5;
	else if (e->kind == CT_FINISH)
		s->out.live--;
	/* Code addresses get their sym records, as call sites do: the contract types them (FN). */
	if (e->kind < CT_NR_OPS) {
		const uint64_t raw[3] = {e->x4, e->x5, e->x6};

		for (size_t i = 0; i < 3; i++)
			if (trace_op_args[e->kind][i].type == TRACE_ARG_FN)
				session_note_address(s, raw[i]);
	}
}

static void emit(struct session *s, const struct ct_event *e, uint32_t pid, const uint64_t *ips,
		 unsigned n);

void session_emit_pid(struct session *s, const struct ct_event *e, uint32_t pid)
{
	emit(s, e, pid, NULL, 0);
}

/*
 * bpf_get_stack's frames, innermost first: the probe's address, then return addresses, made the
 * calling instruction (- 1) as an event's ip is, so that each names its call's line. The first
 * 0 ends them.
 */
void session_emit_frames(struct session *s, const struct ct_event *e, const void *stack,
			 size_t bytes)
{
	uint64_t ips[CT_STACK_MAX];
	unsigned n = 0;

	for (; n < CT_STACK_MAX && (n + 1) * sizeof(*ips) <= bytes; n++) {
		memcpy(&ips[n], (const char *)stack + n * sizeof(*ips), sizeof(*ips));
		if (!ips[n])
			break;
		ips[n] -= n > 0;
	}
	emit(s, e, procset_process_of(s, e->tid), ips, n);
}

static void emit(struct session *s, const struct ct_event *e, uint32_t pid, const uint64_t *ips,
		 unsigned n)
{
	struct ct_event first[LATE_INITS_MAX];
	int late;

	if (s->abandoned)
		return; /* what the processes' buffers still held at the stop */
	if (e->kind == CT_NAME) { /* not an event: a name for the trace's readers */
		char name[CLOSURE_BATCH_NAME_MAX + 1];

		/* A thread names itself (the library writes its own id): a name record for another
		 * thread is the process's lie, as is an id no thread has (trust_hostile_batches).
		 */
		if (e->x6 == CLOSURE_NAME_THREAD && ct_name_id(e) != e->tid)
			return;
		ct_name_text(e, name);
		if (s->out.file)
			trace_write_name(s->out.file, e->x6, pid, ct_name_id(e), name);
		if (s->opts->consumer && s->opts->consumer->name)
			s->opts->consumer->name(s->opts->consumer_ctx, e->x6, pid, ct_name_id(e),
						name);
		return;
	}
	if (s->out.cut_ns && e->ts > s->out.cut_ns) {
		s->out.after_cut++; /* made after the stop: see session.h */
		return;
	}
	if (!(e->pad & CT_EVENT_SNAPSHOT) && !snapshot_keep(s, e))
		return; /* the snapshot wrote this closure's init already */
	/* -p: a closure first seen mid-life is read and begun first, or left out. */
	if ((late = late_before(s, e, first)) < 0)
		return;
	for (int i = 0; i < late; i++)
		write_event(s, &first[i], pid, NULL, 0);
	write_event(s, e, pid, ips, n);
}
