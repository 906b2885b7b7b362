/*
 * Events from many sources put back in time order: each source (a thread's buffer) delivers its
 * events mostly in order, so each keeps a queue in time order, and a small heap of the sources by
 * their earliest event tells which leaves next: a pop walks a heap as deep as the sources are
 * many, not as the events held (a heap of every event held cost the recorder a third of its
 * time). An event earlier than its source's latest (a poll read a buffer ahead of batches still
 * in the ring buffer) goes to a heap of late events instead; the earlier of the two leaves first.
 * Equal times leave in the order of their arrival numbers.
 */
#ifndef CLOSURETRACE_TIME_MERGE_H
#define CLOSURETRACE_TIME_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct merge_item {
	struct ct_event e;
	uint64_t order; /* arrival: equal times keep it */
	uint32_t pid;
};

struct merge_source {
	struct merge_item *v;	 /* a ring of cap items, len of them from head, in time order */
	uint32_t head, len, cap; /* in the heap while len > 0 */
};

struct time_merge {
	struct merge_source *sources;
	uint32_t n_sources, sources_cap;
	uint32_t *heap; /* the non-empty sources, by their earliest event */
	uint32_t n_heap;
	struct merge_item *late; /* a heap by time */
	size_t n_late, late_cap;
	size_t held;
};

/* A new source: its number, or -1 when out of memory. */
int64_t time_merge_source(struct time_merge *m);

/* Adds an event of source src. False when out of memory. */
bool time_merge_push(struct time_merge *m, uint32_t src, const struct merge_item *it);

/* The earliest event held (NULL when none): removed by time_merge_pop. */
const struct merge_item *time_merge_first(const struct time_merge *m);

/* Removes the earliest event (there is one). */
void time_merge_pop(struct time_merge *m);

void time_merge_free(struct time_merge *m);

#endif
