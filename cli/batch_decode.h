/*
 * Decoding batches (lib/include/closure_batch.h records) into the recorder's events, in time
 * order across threads. Each thread's records carry a sequence number: a record seen twice (a
 * batch handed over and also drained at stop) is kept once. Records wait in a heap until they
 * are older than the reorder window behind the newest time the recorder knows, then leave
 * oldest first; see docs/trace-format.md ("Order of events").
 */
#ifndef CLOSURETRACE_BATCH_DECODE_H
#define CLOSURETRACE_BATCH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "closure_batch.h"
#include "event.h"

/* Events a batch decoder holds at most; past it the oldest leave at once. */
#define BATCH_HELD_MAX (1u << 20)
/* How long an event waits for earlier events of other threads (ns). */
#define BATCH_WINDOW_NS (100 * 1000 * 1000ull)

struct batch_decoder;

/* Receives each event in time order; pid is the process of the batch it came in. */
typedef void batch_emit_fn(void *ctx, const struct ct_event *e, uint32_t pid);

/* Records before not_before_ns (left from an earlier recording) are ignored. NULL: no memory. */
struct batch_decoder *batch_decoder_new(uint64_t not_before_ns, batch_emit_fn *emit, void *ctx);

/*
 * Decodes n records of thread tid of process pid (from a batch or a drain), skipping those
 * already seen. buf names the thread's buffer in the process (its records' address), whose
 * sequence numbers only grow. Returns the number of new records.
 */
size_t batch_decoder_feed(struct batch_decoder *d, uint32_t pid, uint32_t tid, uint64_t buf,
			  const struct closure_batch_record *recs, uint32_t n);

/* Emits the events older than now_ns - BATCH_WINDOW_NS. */
void batch_decoder_release(struct batch_decoder *d, uint64_t now_ns);

/* Emits every event held. */
void batch_decoder_flush(struct batch_decoder *d);

void batch_decoder_free(struct batch_decoder *d);

#endif
