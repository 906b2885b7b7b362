/*
 * The one place records are put back in time order, for the recorder (records of many thread
 * buffers, recorder/batch_decode.c) and for the model (a trace's lines, viz/model.c's reorder
 * window).
 *
 * Items come from sources (a thread's buffer; a file), each mostly in time order, so each source
 * keeps a queue in time order, and a small heap of the sources by their earliest item tells which
 * leaves next: a pop walks a heap as deep as the sources are many, not as the items held (a heap
 * of every item held cost the recorder a third of its time). An item earlier than its source's
 * latest goes to a heap of late items instead; the earlier of the two leaves first. Equal times
 * leave in the order of their keys' `order` (arrival, or position in the file).
 *
 * Items are of one size per time_order, given at init, and begin with their struct time_key.
 */
#ifndef CLOSURETRACE_TIME_ORDER_H
#define CLOSURETRACE_TIME_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct time_key {
	uint64_t ts;	/* unsigned: a signed time is mapped by time_key_signed */
	uint64_t order; /* breaks ties */
};

/* The key of a signed time (ns that may be negative), in the same order as the times. */
static inline uint64_t time_key_signed(int64_t ts)
{
	return (uint64_t)ts ^ (UINT64_C(1) << 63);
}

struct time_order_source {
	unsigned char *v;	 /* a ring of cap items, len of them from head, in time order */
	uint32_t head, len, cap; /* in the heap while len > 0 */
};

struct time_order {
	size_t size; /* of an item */
	struct time_order_source *sources;
	uint32_t n_sources, sources_cap;
	uint32_t *heap; /* the non-empty sources, by their earliest item */
	uint32_t n_heap;
	unsigned char *late; /* a heap by key */
	size_t n_late, late_cap;
	size_t held;
	size_t bytes; /* of items' room, held or not: the rings and the late heap */
};

/* Items of size bytes (a struct time_key first). */
void time_order_init(struct time_order *m, size_t size);

/* A new source: its number, or -1 when out of memory. */
int64_t time_order_source(struct time_order *m);

/* Adds an item (copied) of source src. False when out of memory. */
bool time_order_push(struct time_order *m, uint32_t src, const void *item);

/* The earliest item held (NULL when none), valid until the next push or pop. */
const void *time_order_first(const struct time_order *m);

/* Removes the earliest item (there is one). */
void time_order_pop(struct time_order *m);

void time_order_free(struct time_order *m);

#endif
