/* Closures first seen mid-life, read from the process: see snapshot_late.h. */
#include <stdbool.h>
#include <stdlib.h>

#include "event.h"
#include "hashmap.h"
#include "proc_maps.h"
#include "recorder.h"
#include "session.h"
#include "snapshot_keep.h"
#include "snapshot_late.h"

/* The maps are read again for an address outside them at most this often (a mapping newer than
 * their read, or a flood of addresses that are no closures). */
#define MAPS_GAP_NS (20 * 1000 * 1000ull)
#define SECOND_NS   1000000000ull

/* What is known of an address (struct late_entry's state). */
enum {
	KNOWN_ALIVE = 1, /* its init was written: its events are kept */
	KNOWN_READ,	 /* the same, its init read from the process when first seen at first_ts */
	KNOWN_LIMITED,	 /* first seen mid-life past the bound: left out until it is read */
	KNOWN_LEFT_OUT,	 /* first seen mid-life and gone when read: its events are left out */
};

struct late_entry {
	uint64_t first_ts; /* KNOWN_READ: the event it was first seen at */
	unsigned char state;
};

struct late_reader {
	pid_t pid;
	struct closure_debug_info info;
	struct proc_maps maps;
	struct hashmap known; /* by address: struct late_entry */
	uint64_t second_ns;   /* the second the reads are counted in began then */
	uint32_t reads;
	struct late_counts counts;
};

struct late_reader *late_new(pid_t pid, const struct closure_debug_info *d)
{
	struct late_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->pid = pid;
	r->info = *d;
	hashmap_init(&r->known, sizeof(struct late_entry));
	proc_maps_read(&r->maps, pid);
	return r;
}

void late_free(struct late_reader *r)
{
	if (!r)
		return;
	proc_maps_free(&r->maps);
	hashmap_free(&r->known);
	free(r);
}

const struct late_counts *late_counts(const struct late_reader *r)
{
	return &r->counts;
}

struct ct_event late_init_event(const struct closure_debug_info *d, const struct live_closure *c,
				uint32_t tid)
{
	struct ct_event e = {.kind = CT_INIT, .pad = CT_EVENT_SNAPSHOT};

	e.tid = tid;
	e.ts = c->init_ns;
	e.ip = c->init_ip ? c->init_ip - 1 : 0; /* a return address, as a record's */
	e.cl = c->addr;
	e.x4 = c->stack ? 0 : c->parent;
	e.x5 = c->stack;
	e.count = c->remaining & d->remaining_mask;
	e.flags = c->remaining & ~d->remaining_mask;
	return e;
}

static void set_known(struct late_reader *r, uint64_t cl, unsigned char state, uint64_t first_ts)
{
	*(struct late_entry *)hashmap_put(&r->known, cl, 0, NULL) =
		(struct late_entry){.first_ts = first_ts, .state = state};
}

/* Whether the trace begins cl, alive at ts: its init written, or the snapshot's on its way. */
static bool begun(struct session *s, uint64_t cl, uint64_t ts)
{
	const struct late_entry *at = hashmap_get(&s->snap.late->known, cl, 0);

	return at ? at->state == KNOWN_ALIVE || at->state == KNOWN_READ
		  : snapshot_begins(s, cl, ts);
}

/* One read more in this second: false past the bound. */
static bool may_read(struct late_reader *r)
{
	uint64_t now = recorder_now_ns();

	if (now - r->second_ns >= SECOND_NS) {
		r->second_ns = now;
		r->reads = 0;
	}
	return r->reads < LATE_READS_PER_S && ++r->reads;
}

/*
 * The closure at cl, alive at ts (an event of it was made then): read, and initialised no later
 * (a closure at that address initialised since is another life). The maps are read again for an
 * address outside them when they are older than the event.
 */
static bool read_alive(struct late_reader *r, uint64_t cl, uint64_t ts, struct live_closure *c)
{
	enum live_read st = live_closure_read(r->pid, &r->info, &r->maps, cl, c);

	if (st == LIVE_READ_OUTSIDE && r->maps.read_ns < ts &&
	    recorder_now_ns() - r->maps.read_ns >= MAPS_GAP_NS && !proc_maps_read(&r->maps, r->pid))
		st = live_closure_read(r->pid, &r->info, &r->maps, cl, c);
	return st == LIVE_READ_OK && c->init_ns <= ts;
}

/* Whether addr is among the n closures of chain (a cycle in what the memory says). */
static bool in_chain(const struct ct_event *chain, int n, uint64_t addr)
{
	for (int i = 0; i < n; i++)
		if (chain[i].cl == addr)
			return true;
	return false;
}

/*
 * Reads cl, first seen at ts, and the parents above it the trace does not begin, up to one it
 * does (or a root, or a cycle in what the memory says): their inits into out, parents first.
 * All or nothing: a closure whose parent could not be read would name one the trace never began
 * (drawn as one "created before recording"). How many (LATE_INITS_MAX at most); 0 when they
 * could not all be read (one had ended), -1 when the bound left one unread.
 */
static int read_chain(struct session *s, uint64_t cl, uint64_t ts, struct ct_event *out)
{
	struct late_reader *r = s->snap.late;
	struct ct_event chain[LATE_INITS_MAX];
	uint64_t at = cl;
	int n = 0;

	while (at) {
		struct live_closure c;

		if (n == LATE_INITS_MAX)
			return 0;
		if (!may_read(r))
			return -1;
		if (!read_alive(r, at, ts, &c))
			return 0;
		chain[n++] =
			late_init_event(&r->info, &c, c.init_tid ? c.init_tid : (uint32_t)r->pid);
		at = c.stack || in_chain(chain, n, c.parent) || begun(s, c.parent, ts) ? 0
										       : c.parent;
	}
	for (int i = 0; i < n; i++) {
		out[i] = chain[n - 1 - i];
		set_known(r, out[i].cl, KNOWN_READ, ts);
	}
	r->counts.read += (uint64_t)n;
	return n;
}

/* Closure cl left out: for good (gone when read), or until read (past the bound, n < 0); counted
 * once, as it was first met. */
static int leave_out(struct late_reader *r, uint64_t cl, int n, bool counted)
{
	if (!counted && n < 0)
		r->counts.limited++;
	else if (!counted)
		r->counts.unread++;
	r->counts.events++;
	set_known(r, cl, n < 0 ? KNOWN_LIMITED : KNOWN_LEFT_OUT, 0);
	return -1;
}

/*
 * An init: a new life at its address. The init a read wrote already (this one was reordered
 * behind the event the read was made for: stamped no later) is left out. A parent the trace does
 * not begin is read first; one that cannot be takes its child with it (left out as it is), so
 * that no init in the trace names a parent the trace never began.
 */
static int on_init(struct session *s, const struct ct_event *e, struct ct_event *out)
{
	struct late_reader *r = s->snap.late;
	struct late_entry *at = hashmap_get(&r->known, e->cl, 0);
	uint64_t parent = e->x5 ? 0 : e->x4;
	int n = 0;

	if (at && at->state == KNOWN_READ && !(e->pad & CT_EVENT_SNAPSHOT) &&
	    e->ts <= at->first_ts) {
		at->state = KNOWN_ALIVE; /* a later init is a new life */
		return -1;
	}
	/* The snapshot's inits come parents first, those it could read. */
	if (!(e->pad & CT_EVENT_SNAPSHOT) && parent && parent != e->cl &&
	    !begun(s, parent, e->ts)) {
		at = hashmap_get(&r->known, parent, 0);
		n = at && at->state == KNOWN_LEFT_OUT ? 0 : read_chain(s, parent, e->ts, out);
		if (n <= 0)
			return leave_out(r, e->cl, n, false);
	}
	set_known(r, e->cl, KNOWN_ALIVE, 0);
	return n;
}

int late_before(struct session *s, const struct ct_event *e, struct ct_event *out)
{
	struct late_reader *r = s->snap.late;
	struct late_entry *at;
	bool limited;
	int n;

	if (!r || e->kind >= CT_NR_OPS || !e->cl || e->kind == CT_BUG)
		return 0; /* a bug's closure may be none: said as it came */
	if (e->kind == CT_INIT)
		return on_init(s, e, out);
	at = hashmap_get(&r->known, e->cl, 0);
	if (at && at->state == KNOWN_LEFT_OUT) {
		r->counts.events++;
		return -1; /* until its address is initialised again */
	}
	if (at && at->state != KNOWN_LIMITED) {
		if (e->kind == CT_FINISH || e->kind == CT_DESTROY)
			hashmap_del(&r->known, e->cl, 0);
		return 0;
	}
	/* After a finish (a destructor, a destroy), or a closure the snapshot begins. */
	if (!at &&
	    (e->kind == CT_DESTRUCTOR || e->kind == CT_DESTROY || snapshot_begins(s, e->cl, e->ts)))
		return 0;
	/*
	 * First seen mid-life, or seen past the bound before: read, or left out until an event of
	 * it finds room in the bound, or for good when it was gone (a finish ends a closure that
	 * can no longer be read). Counted once, as it was first seen.
	 */
	limited = at != NULL;
	n = e->kind == CT_FINISH ? 0 : read_chain(s, e->cl, e->ts, out);
	return n > 0 ? n : leave_out(r, e->cl, n, limited);
}
