/* The reorder window: see model.h. */
#include "model_internal.h"

#include <stdlib.h>

void model_window_init(struct model *m)
{
	m->held = viz_xcalloc(REORDER_WINDOW, sizeof(*m->held));
	m->ring = viz_xcalloc(REORDER_WINDOW, sizeof(*m->ring));
	m->free_slots = viz_xcalloc(REORDER_WINDOW, sizeof(*m->free_slots));
	for (uint32_t i = 0; i < REORDER_WINDOW; i++)
		m->free_slots[m->nfree++] = REORDER_WINDOW - 1 - i;
}

void model_window_free(struct model *m)
{
	free(m->held);
	free(m->ring);
	free(m->free_slots);
}

/*
 * ---- the reorder window ----
 * Events arrive nearly in time order, so each key is inserted from the newest end of a sorted
 * ring: in order, that is one step; an event a few places late moves a few keys (24 bytes each).
 */

static bool before(const struct pending *a, const struct pending *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

#define RING(i) m->ring[(m->head + (i)) & (REORDER_WINDOW - 1)]

static void window_pop(struct model *m)
{
	struct pending oldest = RING(0);

	m->head = (m->head + 1) & (REORDER_WINDOW - 1);
	m->pending--;
	model_apply(m, &m->held[oldest.slot]);
	m->free_slots[m->nfree++] = oldest.slot;
}

void model_on_event(void *ctx, const struct trace_event *ev)
{
	struct model *m = ctx;
	struct pending key = {.ts = ev->ts, .seq = ev->seq};
	size_t i;

	if (ev->ts < m->max_seen_ts)
		m->n.reordered++;
	else
		m->max_seen_ts = ev->ts;
	if (m->pending == REORDER_WINDOW)
		window_pop(m);
	key.slot = m->free_slots[--m->nfree];
	m->held[key.slot] = *ev;
	for (i = m->pending; i > 0 && before(&key, &RING(i - 1)); i--)
		RING(i) = RING(i - 1);
	RING(i) = key;
	m->pending++;
}

void model_flush(struct model *m, int64_t before_ts)
{
	while (m->pending && RING(0).ts < before_ts)
		window_pop(m);
}

void model_window_drain(struct model *m)
{
	while (m->pending)
		window_pop(m);
}

const struct trace_sink model_sink = {
	.event = model_on_event, .sym = model_on_sym, .name = model_on_name};
