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
	qsort(s->snap.v, s->snap.n, sizeof(*s->snap.v), by_addr);
}

/* What snapshot_window says of an address. */
enum { WINDOW_INITED = 1, WINDOW_MISSED = 2 };

/*
 * An event of an address the snapshot did not begin (or of an earlier life there): kept when its
 * closure was initialised since the attach. Until the list had been read, a closure with no init
 * since the attach was alive at the attach and gone from the list when it was read (it finished
 * meanwhile): the snapshot missed it, and its events are left out, then and later, until its
 * address is initialised again; the trace holds no closure without its init. Past that time an
 * address never seen is a closure the list does not show (a stack closure outside closure_sync):
 * kept, as without a snapshot. The map holds what the attach's window made, so it is bounded.
 */
static bool window_keep(struct session *s, const struct ct_event *e)
{
	unsigned char *state = hashmap_get(&s->snap.window, e->cl, 0);

	if (e->kind == CT_INIT) {
		if (state && *state == WINDOW_MISSED)
			hashmap_del(&s->snap.window, e->cl, 0); /* a new life */
		if (e->ts <= s->snap.read_ns)
			*(unsigned char *)hashmap_put(&s->snap.window, e->cl, 0, NULL) =
				WINDOW_INITED;
		return true;
	}
	if (state)
		return *state == WINDOW_INITED;
	if (e->ts > s->snap.read_ns)
		return true;
	*(unsigned char *)hashmap_put(&s->snap.window, e->cl, 0, NULL) = WINDOW_MISSED;
	s->snap.missed++;
	return false;
}

/*
 * A closure of the snapshot was alive when the list was read, initialised before on_ns: the
 * first init of its address from its init time on is its own (a live closure is never
 * initialised again), and its first finish ends what the snapshot began. Either way the address
 * is done with. Events of the address from before its init time are an earlier life's (one that
 * finished while the probes were being attached): window_keep judges them.
 */
bool snapshot_keep(struct session *s, const struct ct_event *e)
{
	struct snapshot_closure key = {.addr = e->cl}, *at = NULL;

	if (!s->snap.read_ns || e->kind >= CT_NR_OPS || !e->cl)
		return true;
	/* Most events: an operation past the window on an address the window did not see. */
	if (e->ts > s->snap.read_ns && e->kind != CT_INIT && e->kind != CT_FINISH &&
	    !hashmap_get(&s->snap.window, e->cl, 0))
		return true;
	if (s->snap.n)
		at = bsearch(&key, s->snap.v, s->snap.n, sizeof(*s->snap.v), by_addr);
	if (at && e->ts >= at->init_ns) {
		if (!at->done && (e->kind == CT_INIT || e->kind == CT_FINISH)) {
			at->done = true;
			return e->kind != CT_INIT;
		}
		return true;
	}
	return window_keep(s, e);
}

bool snapshot_begins(const struct session *s, uint64_t cl, uint64_t ts)
{
	struct snapshot_closure key = {.addr = cl}, *at;

	if (!s->snap.n)
		return false;
	at = bsearch(&key, s->snap.v, s->snap.n, sizeof(*s->snap.v), by_addr);
	return at && !at->done && ts >= at->init_ns;
}

void snapshot_free(struct session *s)
{
	hashmap_free(&s->snap.window);
	s->snap.read_ns = 0;
	free(s->snap.v);
	s->snap.v = NULL;
	s->snap.n = 0;
}
