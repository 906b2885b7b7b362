/*
 * record -p and top: a closure first seen mid-life, that neither the snapshot (snapshot.h) nor an
 * init among the events began (made while the probes were being attached, an entry the registry's
 * read missed, a stack closure outside closure_sync, an init lost), is read from the process
 * (process/live_closure.h: inside its writable mappings, its magic alive, in the registry slot it
 * names) when its first event is about to be written, and begun by a synthetic init before it, in
 * the snapshot's form, its parents the trace does not hold read and begun first. So no closure of
 * a library with the registry (closure_debug.h version 4 on) is in the trace without its init.
 *
 * The closures known alive are kept by address, for -p alone (memory follows what is alive: an
 * entry goes with its closure's finish). Reads are bounded, LATE_READS_PER_S a second: a closure
 * met past the bound is left out until an event of it finds room (read and begun there), one gone
 * when read (it finished while its events waited to be written) with all its events until its
 * address is initialised again; each counted in the trailer's midlife_limited or midlife_unread.
 * A closure whose parent could not be read is left out with it (its init too): no init in the
 * trace names a parent the trace never began. Below emit.c, which asks for every event; above
 * snapshot_keep.c.
 */
#ifndef CLOSURETRACE_SNAPSHOT_LATE_H
#define CLOSURETRACE_SNAPSHOT_LATE_H

#include <stdint.h>
#include <sys/types.h>

#include "live_closure.h"

struct session;
struct ct_event;
struct late_reader;

/* Closures read from the process a second at most: a read is a system call of a few µs. */
#define LATE_READS_PER_S 20000
/* Inits written before one event at most: the closure and its unknown parents above it. */
#define LATE_INITS_MAX 8

/* What the reads came to, for the trailer. */
struct late_counts {
	uint64_t read;	 /* closures begun by an init read from the process */
	uint64_t unread; /* first seen mid-life and gone when read (or never a closure): left out */
	uint64_t limited; /* first seen mid-life past the bound of reads: left out until read */
	uint64_t events;  /* the events of those left out: not in the trace, counted in its lost */
};

/* A reader of process pid, whose descriptor d (version 4 on) live_list_read checked; NULL when out
 * of memory. */
struct late_reader *late_new(pid_t pid, const struct closure_debug_info *d);
void late_free(struct late_reader *r);
const struct late_counts *late_counts(const struct late_reader *r);

/*
 * The synthetic init of closure c (the snapshot's and a mid-life read's alike): at its init time
 * and site, by thread tid, with its count and flags as read (d's masks).
 */
struct ct_event late_init_event(const struct closure_debug_info *d, const struct live_closure *c,
				uint32_t tid);

/*
 * For each event about to be written (s->snap.late set): the inits to write before it, parents
 * first, into out (LATE_INITS_MAX room), and how many; -1 when the event is to be left out (its
 * closure first seen mid-life could not be read, or the event is the init a read already wrote).
 */
int late_before(struct session *s, const struct ct_event *e, struct ct_event *out);

#endif
