/*
 * The drain thread: while a session records, it alone reads the ring buffer, copying each record
 * as it is into a spool (spool.h) that the recorder's loop decodes and writes behind it. Its own
 * work per record is a copy, so the ring buffer empties as fast as the traced process fills it
 * and nothing is lost while the disk keeps up with the raw records; turning them into JSON, which
 * costs 20 times more, no longer decides what is lost (issue 26, docs/design.md).
 *
 * A launched command is recorded losslessly: its library waits while more than a wait limit of
 * records are handed over and not acknowledged. The drain thread acknowledges what it has taken
 * out of the ring buffer (which is what the limit protects), so the traced thread waits for a
 * copy, not for the JSON.
 */
#ifndef CLOSURETRACE_DRAIN_H
#define CLOSURETRACE_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct session;
struct drain;

/* What takes each record the thread queued, on the recorder's loop (session_take_record). */
typedef void drain_take_fn(struct session *s, const void *data, size_t size);

/* Starts the thread on s's ring buffer (after touch_ring); drain_take hands its records to take.
 * 0 or -errno. */
int drain_start(struct session *s, drain_take_fn *take);

/* In the ring buffer's callback while the thread runs: takes the record. False: not running. */
bool drain_record(struct drain *d, const void *data, size_t size);

/*
 * The recorder's loop: decodes what the drain thread queued (drain_start's take), until the
 * queue is empty or s->read_until_ns has passed. Whether records are left.
 */
bool drain_take(struct session *s);

/*
 * The stop's cut (CLOCK_MONOTONIC ns): from now on the thread drops what was made after it (an
 * event, a batch all of whose records were) instead of queueing it. A process that runs on after
 * the stop then grows the queue no more while the loop writes what came before, and the ring
 * buffer, still read, loses nothing of it.
 */
void drain_cut(struct drain *d, uint64_t cut_ns);

/* Operations dropped for the cut (read after drain_stop). */
uint64_t drain_after_cut(const struct drain *d);

/* Waits until the drain thread has read everything the ring buffer held at the call. */
void drain_sync(struct drain *d);

/* Stops the thread (it reads the ring buffer once more first). The queue stays to be taken. */
void drain_stop(struct drain *d);

/* Frees what drain_start made (stopping the thread if need be). */
void drain_free(struct drain *d);

/* An eventfd readable when records were queued (for the loop's epoll). */
int drain_fd(const struct drain *d);

/* Bytes queued and not yet decoded; the most at once; bytes that went to the spool's file. */
uint64_t drain_backlog(struct drain *d);
uint64_t drain_backlog_max(struct drain *d);
uint64_t drain_spooled(struct drain *d);

/* The spool's first failed write (errno), or 0. */
int drain_error(struct drain *d);

/* Operations lost in the queue: records it could not keep or read back (counted as lost). */
uint64_t drain_lost(const struct drain *d);

#endif
