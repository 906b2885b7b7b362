/*
 * The closures of the snapshot at attach (snapshot.h) by address, and what they keep out of the
 * events written after them: below the dispatch of events (emit.c asks for every event), above
 * nothing but the session's state.
 */
#ifndef CLOSURETRACE_SNAPSHOT_KEEP_H
#define CLOSURETRACE_SNAPSHOT_KEEP_H

#include <stdbool.h>
#include <stdint.h>

struct session;
struct ct_event;

/* Sorts s->snapshot (s->n_snapshot closures) by address, for snapshot_keep. */
void snapshot_index(struct session *s);

/*
 * For each event before it is written: false when it is to be left out, the init of a closure
 * the snapshot already wrote (one initialised while the probes were being attached), or an event
 * of a closure from before the recording that the snapshot missed (it finished while the list was
 * being read: counted once in s->snapshot_missed).
 */
bool snapshot_keep(struct session *s, const struct ct_event *e);

/*
 * Whether the snapshot begins closure cl as alive at ts: its synthetic init may still be on its way
 * (in time order among the batches' records) while an event of it is written.
 */
bool snapshot_begins(const struct session *s, uint64_t cl, uint64_t ts);

void snapshot_free(struct session *s);

#endif
