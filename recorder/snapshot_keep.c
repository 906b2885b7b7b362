/* The snapshot's closures, by address: which later events they keep out. See snapshot_keep.h. */
#include <stdlib.h>

#include "event.h"
#include "session.h"
#include "snapshot_keep.h"

static int by_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct snapshot_closure *)a)->addr,
		 y = ((const struct snapshot_closure *)b)->addr;

	return x < y ? -1 : x > y;
}

void snapshot_index(struct session *s)
{
	qsort(s->snapshot, s->n_snapshot, sizeof(*s->snapshot), by_addr);
}

/*
 * A closure of the snapshot was alive when the list was read, initialised before on_ns: the
 * first init of its address from its init time on is its own (a live closure is never
 * initialised again), and its first finish ends what the snapshot began. Either way the address
 * is done with. Events of the address from before its init time are an earlier life's (one that
 * finished while the probes were being attached): they are kept and change nothing, or that
 * life's finish would let this one's own init through (initialised twice).
 */
bool snapshot_keep(struct session *s, const struct ct_event *e)
{
	struct snapshot_closure key = {.addr = e->cl}, *at;

	if (!s->n_snapshot || (e->kind != CT_INIT && e->kind != CT_FINISH))
		return true;
	at = bsearch(&key, s->snapshot, s->n_snapshot, sizeof(*s->snapshot), by_addr);
	if (!at || at->done || e->ts < at->init_ns)
		return true;
	at->done = true;
	return e->kind != CT_INIT;
}

void snapshot_free(struct session *s)
{
	free(s->snapshot);
	s->snapshot = NULL;
	s->n_snapshot = 0;
}
