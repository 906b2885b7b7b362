/*
 * Batched events (private): while a tracer has the batch probe armed (or the environment names
 * an in-process sink), each operation appends a fixed-size record to a buffer of its thread, and
 * the whole buffer leaves in one batch probe hit. docs/probes.md ("Batched events") is the
 * public description of the records and of the probe's arguments.
 */
#ifndef CLOSURE_LIB_BATCH_H
#define CLOSURE_LIB_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h" /* the records' clock */
#include "closure_batch.h"
#include "closure_probes.h"

#pragma GCC visibility push(hidden)

/* The operation of a record: the probe's index in closure_probes.h's list (docs/probes.md). */
enum {
#define CLOSURE_BATCH_OP(name, NAME, a4, a5, a6) CLOSURE_BATCH_OP_##name,
	CLOSURE_PROBE_LIST(CLOSURE_BATCH_OP)
#undef CLOSURE_BATCH_OP
};

/* closure.h's CLOSURE_REMAINING_MASK (lib/probes_unguarded.c checks it): r is count | flags. */
#define CLOSURE_BATCH_COUNT_MASK 0x00ffffffu

/* Appends one record to this thread's buffer (batching is on: the caller checked). */
void closure_batch_append(unsigned op, uintptr_t cl, uint32_t r, uintptr_t ip, uint64_t x4,
			  uint64_t x5, uint64_t x6);

/* Appends a name record (closure_batch.h): kind CLOSURE_NAME_*, id, name capped at
 * CLOSURE_BATCH_NAME_MAX bytes (batching is on: the caller checked). */
void closure_batch_name(unsigned kind, uint64_t id, const char *name);

/* In a libclosure worker thread, once named: its workqueue and the workqueue's name (kept by the
 * caller for the thread's life), given with the thread's name whenever it claims a buffer. */
void closure_batch_worker(const void *wq, const char *name);
/*
 * An operation that may give up a closure's last reference takes its record's time before it
 * (closure_batch_clock_in, which also marks an append in progress), publishes, then appends
 * with that time (closure_batch_append_at) or, not recording after all, closure_batch_unclock_in.
 * Then every record of a closure's life is stamped before the next life's init (docs/probes.md):
 * a thread preempted between its compare-and-swap and its clock read could otherwise stamp a put
 * after the finish it allowed, and after the init of the next closure at that address.
 * Never 0: 1 when no buffer could be claimed (closure_batch_append_at then counts the record lost).
 */
uint64_t closure_batch_clock_in(void);
void closure_batch_append_at(uint64_t ts, unsigned op, uintptr_t cl, uint32_t r, uintptr_t ip,
			     uint64_t x4, uint64_t x5, uint64_t x6);
void closure_batch_unclock_in(void);

/* At an init while traced: the sampling session that leaves the new closure's tree out of the
 * records, or 0 (recorded). A root is counted and decided (closure_batch.h, version 3); a child
 * keeps its parent's decision (parent_left_out) if taken in this session. */
uint8_t closure_batch_left_out(bool root, uint8_t parent_left_out);

/* Hands this thread's records over now. */
void closure_batch_flush(void);

/*
 * Before a call blocks (batching is on: the caller checked): when this thread's records are due,
 * on CLOCK_MONOTONIC in ns, its oldest record's time plus the age bound; 0 when it holds none, a
 * signal handler blocks in the middle of an append (which hands over itself), or a recorder reads
 * the buffers in place (the registry's polled_until: nothing is due by age). The call waits
 * until then at most, hands over (closure_batch_flush) only if still blocked, then blocks on: a
 * brief block costs no handover, a long one hands over within the bound.
 */
uint64_t closure_batch_due(void);

/* The batch probe's semaphore: the kernel raises it (closure.h reads it as closure_batch_active).
 */
extern unsigned short closure_batch_semaphore;

/* What a recorder reads: the buffers, the handover counts, the sampling (closure_batch.h). */
extern struct closure_batch_registry closure_batch_registry;

#pragma GCC visibility pop

#ifdef CLOSURE_NO_BATCH /* the benchmarks' baseline: the library as it was before batching */
#define CLOSURE_BATCH_WORD() 0
#else
#define CLOSURE_BATCH_WORD() (*(volatile unsigned short *)&closure_batch_semaphore)
#endif
#define CLOSURE_BATCH_ON() __builtin_expect(CLOSURE_BATCH_WORD(), 0)

/* Append when batching is on; a statement. */
#define CLOSURE_BATCH(op, cl, r, ip, x4, x5, x6)                                                   \
	do {                                                                                       \
		if (CLOSURE_BATCH_ON())                                                            \
			closure_batch_append(CLOSURE_BATCH_OP_##op, (uintptr_t)(cl), (r), (ip),    \
					     (uint64_t)(x4), (uint64_t)(x5), (uint64_t)(x6));      \
	} while (0)

#endif
