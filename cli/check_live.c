/* check's records straight into its model: see check_live.h. */
#include "check_live.h"

#include "event.h"
#include "model.h"
#include "trace_args.h"
#include "trace_live.h"

static void on_start(void *ctx, pid_t pid, const char *exe, uint64_t start_ns)
{
	struct check_live *c = ctx;

	c->start_ns = start_ns;
	if (trace_live_header(&c->v->info, pid, exe))
		c->out_of_memory = true;
	model_sink.header(c->v->m, &c->v->info); /* as the reader hands it the header */
}

static void on_event(void *ctx, const struct ct_event *e, uint32_t pid)
{
	struct check_live *c = ctx;
	struct trace_event t;

	if (!trace_event_from_record(e, c->start_ns, pid, &t))
		return; /* the writer leaves it out: so does the model */
	t.seq = c->seq++;
	c->v->info.events_read++;
	model_sink.event(c->v->m, &t);
}

/* --stacks: the stack of the event on_event gets next, kept by the model per call site. */
static void on_frames(void *ctx, const struct ct_event *e, uint32_t pid, const uint64_t *ips,
		      unsigned n)
{
	struct check_live *c = ctx;
	struct trace_event t;

	if (trace_event_from_record(e, c->start_ns, pid, &t))
		model_sink.frames(c->v->m, &t, ips, n);
}

static void on_sym(void *ctx, uint64_t addr, const struct sym_info *s)
{
	struct check_live *c = ctx;
	struct trace_sym sym;

	trace_live_sym(addr, s, &sym);
	model_sink.sym(c->v->m, &sym);
}

static void on_name(void *ctx, unsigned kind, uint32_t pid, uint64_t id, const char *name)
{
	struct check_live *c = ctx;
	char buf[TRACE_NAME_MAX + 1];
	struct trace_name tn;

	if (trace_live_name(kind, pid, id, name, &tn, buf))
		model_sink.name(c->v->m, &tn);
}

static void on_end(void *ctx, const struct trace_end *end)
{
	struct check_live *c = ctx;

	if (trace_live_end(&c->v->info, end))
		c->out_of_memory = true;
}

const struct recorder_consumer check_live_consumer = {
	.start = on_start,
	.event = on_event,
	.frames = on_frames,
	.sym = on_sym,
	.name = on_name,
	.end = on_end,
};
