/*
 * The reorder window: a trace's lines are nearly in time order (per-operation records from
 * different CPUs leave the ring buffer slightly out of it), so the model holds the latest
 * REORDER_WINDOW events and applies the earliest of them when one more comes. The ordering itself
 * is trace/time_order.c's, the recorder's too: one source, the file, whose late lines wait in its
 * heap of late items.
 */
#include "model_internal.h"

struct held_line {
	struct time_key key; /* the event's time, its place in the file */
	struct trace_event ev;
};

void model_window_init(struct model *m)
{
	time_order_init(&m->window, sizeof(struct held_line));
	if (time_order_source(&m->window) < 0)
		viz_oom();
}

void model_window_free(struct model *m)
{
	time_order_free(&m->window);
}

static const struct trace_event *earliest(const struct model *m)
{
	const struct held_line *h = time_order_first(&m->window);

	return h ? &h->ev : NULL;
}

/* The earliest event is applied where it waits, then leaves (applying adds no event). */
static void window_pop(struct model *m)
{
	model_apply(m, earliest(m));
	time_order_pop(&m->window);
}

void model_on_event(void *ctx, const struct trace_event *ev)
{
	struct model *m = ctx;
	struct held_line h = {.key = {.ts = time_key_signed(ev->ts), .order = ev->seq}, .ev = *ev};

	if (ev->ts < m->max_seen_ts)
		m->n.reordered++;
	else
		m->max_seen_ts = ev->ts;
	if (m->window.held == REORDER_WINDOW)
		window_pop(m);
	if (!time_order_push(&m->window, 0, &h))
		viz_oom();
}

void model_flush(struct model *m, int64_t before_ts)
{
	const struct trace_event *ev;

	while ((ev = earliest(m)) && ev->ts < before_ts)
		window_pop(m);
}

void model_window_drain(struct model *m)
{
	while (earliest(m))
		window_pop(m);
}

const struct trace_sink model_sink = {
	.event = model_on_event, .sym = model_on_sym, .name = model_on_name};
