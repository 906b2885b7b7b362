/* The closures alive at attach, as synthetic inits: see snapshot.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "batch_decode.h"
#include "event.h"
#include "hashmap.h"
#include "live_list.h"
#include "session.h"
#include "snapshot.h"
#include "snapshot_keep.h"
#include "snapshot_late.h"

/*
 * Closures alive at attach written as inits, at most. The list is read while the process runs;
 * the drain thread empties the ring buffer meanwhile (drain.h), so a long read costs time (about
 * 5 s for a million) and memory, no longer events: blockio --requests 200000 has 530,000 alive.
 */
#define SNAPSHOT_MAX (1 << 20)
/* The environment variable that lowers it (closures; tests: a longer list at a test's size). */
#define SNAPSHOT_MAX_ENV "CLOSURETRACE_SNAPSHOT_MAX"

static size_t snapshot_max(void)
{
	const char *v = getenv(SNAPSHOT_MAX_ENV);
	unsigned long n = v ? strtoul(v, NULL, 0) : 0;

	return n && n < SNAPSHOT_MAX ? n : SNAPSHOT_MAX;
}

/* The parent of v[i] among those read, as an index, or -1. */
static ssize_t parent_of(const struct live_list *l, const struct hashmap *at, size_t i)
{
	const size_t *p =
		l->v[i].stack || !l->v[i].parent ? NULL : hashmap_get(at, l->v[i].parent, 0);

	return p && *p < l->n ? (ssize_t)*p : -1;
}

/*
 * Each closure's depth among those read into its seq: init times are to a clock tick (a few ms),
 * so a parent and its child often share one, and the parent's init must come first. Each chain
 * is followed once (depths kept as found); a cycle in what the process's memory says counts as
 * a root where it closes. at: the closures by address (live_list_add_parents).
 */
static bool parents_first(struct live_list *l, const struct hashmap *at)
{
	size_t *depth = malloc((l->n ? l->n : 1) * sizeof(*depth)), *chain;
	const size_t unknown = SIZE_MAX, walking = SIZE_MAX - 1;

	chain = malloc((l->n ? l->n : 1) * sizeof(*chain));
	if (!depth || !chain) {
		free(depth);
		free(chain);
		return false;
	}
	for (size_t i = 0; i < l->n; i++)
		depth[i] = unknown;
	for (size_t i = 0; i < l->n; i++) {
		size_t n = 0, d = 0;
		ssize_t j = (ssize_t)i;

		while (j >= 0 && depth[j] == unknown) {
			depth[j] = walking;
			chain[n++] = (size_t)j;
			j = parent_of(l, at, (size_t)j);
		}
		if (j >= 0 && depth[j] != walking)
			d = depth[j] + 1;
		while (n--)
			depth[chain[n]] = d++;
	}
	for (size_t i = 0; i < l->n; i++)
		l->v[i].seq = depth[i];
	free(depth);
	free(chain);
	return true;
}

/*
 * The reader of the closures first seen mid-life (snapshot_late.h), on the registry's descriptor
 * (version 4 on); without one, why the closures from before the recording cannot be read, which
 * the trailer says.
 */
static void start_late(struct session *s, enum live_status st, const struct live_list *l)
{
	if (st == LIVE_OK && l->info.version >= 4 && (s->snap.late = late_new(s->pid, &l->info)))
		return;
	if (st == LIVE_OK)
		s->snap.unread_why = l->info.version >= 4 ? "the recorder ran out of memory"
							  : "its libclosure is older than the live "
							    "registry (closure_debug.h version 4)";
	else if (st != LIVE_NO_PROCESS)
		s->snap.unread_why = live_status_text(st);
}

size_t snapshot_write(struct session *s, uint64_t on_ns)
{
	struct live_list l;
	struct hashmap at;
	bool ordered;
	size_t n = 0;

	enum live_status st = live_list_read_max(s->pid, &s->addr.objects, &l, snapshot_max());

	start_late(s, st, &l);
	if (st != LIVE_OK) {
		/* Said, or the trace's boxes "first seen mid-life" would come without a why (an
		 * older libclosure without a list is the one expected case). */
		if (s->out.file && st != LIVE_NO_LIST && !session_process_gone(s->pid))
			fprintf(stderr,
				"closuretrace: warning: the closures alive at attach could not be "
				"read (%s): those made before the recording have no init in the "
				"trace\n",
				live_status_text(st));
		return 0;
	}
	/* The list is read a node at a time while the process runs: a longer one is left out
	 * whole, not cut; each of its closures is read when first seen (snapshot_late.h), or,
	 * past the bound of reads, left out. */
	if (l.too_long) {
		if (s->out.file)
			fprintf(stderr,
				"closuretrace: more than %zu closures alive at attach: no snapshot "
				"of them (each is read when first seen, %d a second at most)\n",
				snapshot_max(), LATE_READS_PER_S);
		live_list_free(&l);
		return 0;
	}
	/* A parent the list does not hold (a stack closure outside closure_sync) needs its init
	 * too, or its child's finish would put a reference of a closure the trace never began. */
	hashmap_init(&at, sizeof(size_t));
	live_list_add_parents(s->pid, &l, &at);
	s->snap.read_ns =
		recorder_now_ns(); /* what was alive at attach and is not here had ended */
	/* Oldest first: the trace's events in time order, as far as they go. */
	ordered = parents_first(&l, &at);
	hashmap_free(&at);
	if (!ordered) {
		live_list_free(&l);
		return 0;
	}
	live_list_sort(&l);
	s->snap.v = calloc(l.n ? l.n : 1, sizeof(*s->snap.v));
	for (size_t i = 0; s->snap.v && i < l.n; i++) {
		const struct live_closure *c = &l.v[i];
		struct ct_event e;

		/*
		 * Initialised since the attach (or when not known, an older libclosure): its own
		 * init is in the trace. One initialised before may be there too (the probes were
		 * being attached): snapshot_keep leaves that one out.
		 */
		if (!c->init_ns || c->init_ns >= on_ns || !c->addr)
			continue;
		e = late_init_event(&l.info, c, (uint32_t)s->pid);
		/* Initialised after the recording began: records of that time may still be on their
		 * way, so it waits for its turn among them; an older one leads the trace. */
		if (!s->batches.on || !s->batches.decoder ||
		    !batch_decoder_inject(s->batches.decoder, &e, (uint32_t)s->pid))
			session_emit(s, &e);
		s->snap.v[n++] = (struct snapshot_closure){.addr = c->addr, .init_ns = c->init_ns};
	}
	s->snap.n = n;
	snapshot_index(s);
	live_list_free(&l);
	return n;
}
