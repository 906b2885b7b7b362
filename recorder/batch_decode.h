/*
 * Decoding batches (lib/include/closure_batch.h records) into the recorder's events, in time
 * order across threads. Each thread's records carry a sequence number: a record seen twice (a
 * batch handed over and also read by a poll, or drained at stop) is kept once. Records wait in
 * time order until no stream can still deliver an earlier one (batch_decoder_sweep), then leave
 * oldest first; see docs/probes.md ("Batched events").
 */
#ifndef CLOSURETRACE_BATCH_DECODE_H
#define CLOSURETRACE_BATCH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "closure_batch.h"
#include "event.h"

/* Gaps one stream keeps open for late records; past it the oldest gap is given up as lost. */
#define BATCH_SPANS_MAX 4096
/*
 * Spans all streams keep at most (16 bytes each): a process that hands over records with gaps in
 * every stream would otherwise grow BATCH_STREAMS_MAX x BATCH_SPANS_MAX of them (1 GB). Past it a
 * stream gives up its oldest gap (counted lost, batch_decoder_forgotten) rather than grow.
 */
#define BATCH_SPANS_TOTAL_MAX (1u << 18)
/*
 * Streams (thread buffers) a batch decoder keeps at most: each real thread of the traced processes
 * has one buffer, reused by the threads after it; a process that names more buffers than that
 * makes them up (docs/probes.md, "Trust boundary"). Records of streams past it are refused and
 * counted with the lost ones (batch_decoder_refused).
 */
#define BATCH_STREAMS_MAX 16384
/*
 * The memory a batch decoder's held events may take (their queues' room, about 80 bytes an event:
 * some 800,000 of them); past it the oldest leave at once (out of order, counted). A process whose
 * buffers never show a frontier (made-up streams) holds the decoder there for good.
 */
#define BATCH_HELD_BYTES (64u << 20)
/*
 * How much earlier than the recorder's clock at a poll a record may still be stamped by a thread
 * whose buffer head said no append was in progress: the thread's store of its depth may reach
 * memory a little after its clock read (a store buffer drains within microseconds).
 */
#define BATCH_CLOCK_SLACK_NS (1000 * 1000ull)

struct batch_decoder;

/*
 * A name record (closure_batch.h, CLOSURE_BATCH_OP_NAME) passes through the decoder as a struct
 * ct_event of kind CT_NAME, in time order with the operations: x6 its kind (CLOSURE_NAME_*), tid
 * the thread that gave it, the id in count (low 32 bits) and flags (high), and the name's bytes
 * (CLOSURE_BATCH_NAME_MAX at most, NUL-padded) over ip, cl, x4 and x5.
 */
#define CT_NAME_BYTES(e) ((char *)(e) + offsetof(struct ct_event, ip))
_Static_assert(offsetof(struct ct_event, x5) + 8 - offsetof(struct ct_event, ip) ==
		       CLOSURE_BATCH_NAME_MAX,
	       "a name fits over ip, cl, x4 and x5");

static inline uint64_t ct_name_id(const struct ct_event *e)
{
	return e->count | (uint64_t)e->flags << 32;
}

/* The name as a string (what the record holds, cut at its first NUL). */
static inline void ct_name_text(const struct ct_event *e, char out[CLOSURE_BATCH_NAME_MAX + 1])
{
	memcpy(out, CT_NAME_BYTES((struct ct_event *)e), CLOSURE_BATCH_NAME_MAX);
	out[CLOSURE_BATCH_NAME_MAX] = '\0';
}

/* Receives each event in time order; pid is the process of the batch it came in. */
typedef void batch_emit_fn(void *ctx, const struct ct_event *e, uint32_t pid);

/* Records before not_before_ns (left from an earlier recording) are ignored. NULL: no memory. */
struct batch_decoder *batch_decoder_new(uint64_t not_before_ns, batch_emit_fn *emit, void *ctx);

/*
 * The key of a buffer's stream of records: its records' address in the process, with the
 * process's image (exec count) in the bits above user addresses, since an exec'ed image's
 * buffers start their sequence numbers again, perhaps at the same address.
 */
static inline uint64_t batch_stream_key(uint64_t records, uint32_t image)
{
	return records ^ (uint64_t)(image & 0xffff) << 48;
}

/*
 * Decodes n records of thread tid of process pid (from a batch, a poll or a drain), in any
 * order, skipping those already received (a record read by two paths is written once). buf is
 * the stream's key (batch_stream_key), whose sequence numbers only grow. Returns the number of
 * new records.
 */
size_t batch_decoder_feed(struct batch_decoder *d, uint32_t pid, uint32_t tid, uint64_t buf,
			  const struct closure_batch_record *recs, uint32_t n);

/* How many of the n sequence numbers from seq0 of stream (pid, buf) were received. */
uint32_t batch_decoder_received(struct batch_decoder *d, uint32_t pid, uint64_t buf, uint32_t seq0,
				uint32_t n);

/* Records refused: their stream would have been past BATCH_STREAMS_MAX. */
/*
 * An event made by the recorder (a snapshot's init) that is to leave in time order with the
 * batches' records: one at or after not_before, pushed in time order. False when it is older
 * (the caller writes it at once: nothing decoded precedes it) or out of memory.
 */
bool batch_decoder_inject(struct batch_decoder *d, const struct ct_event *e, uint32_t pid);
uint64_t batch_decoder_refused(const struct batch_decoder *d);

/* Sequence numbers given up as lost past BATCH_SPANS_MAX gaps (never received). */
uint64_t batch_decoder_forgotten(const struct batch_decoder *d);

/*
 * Each gap given up, told with its process (its size is the process's word: sequence numbers
 * are its own, and a made-up one may skip billions): fn(ctx, pid, n), ctx the decoder's.
 */
typedef void batch_gap_fn(void *ctx, uint32_t pid, uint64_t n);
void batch_decoder_on_gap(struct batch_decoder *d, batch_gap_fn *fn);

/* Records received twice (dropped the second time). */
uint64_t batch_decoder_duplicates(const struct batch_decoder *d);

/* Records older than not_before_ns, left out (each counted once). */
uint64_t batch_decoder_stale(const struct batch_decoder *d);

/*
 * Exact time order (docs/probes.md, "Batched events"): an event leaves once no stream can still
 * deliver an earlier one. Each stream (a thread buffer) has a frontier: every record of it not
 * received yet has a later time. A sweep learns new frontiers: batch_decoder_sweep begins one at
 * the recorder's clock now_ns (read before the buffer heads), the poll that follows reports each
 * head it read (batch_decoder_frontier) and each process gone (batch_decoder_gone); once every
 * batch handed over before that poll has been received (the recorder read the ring buffer up to
 * where its producer was after the poll), batch_decoder_commit makes them the frontiers and emits
 * every event older than the earliest. A stream first seen later starts at the last committed
 * sweep's clock: its buffer announced itself (an empty batch) before its first record was stamped.
 */
void batch_decoder_sweep(struct batch_decoder *d, uint64_t now_ns);

/* Whether a sweep is begun and not committed. */
bool batch_decoder_sweeping(const struct batch_decoder *d);

/* In a sweep: no record of stream (pid, buf) still to come is older than ts. */
void batch_decoder_frontier(struct batch_decoder *d, uint32_t pid, uint64_t buf, uint64_t ts);

/* In a sweep: process pid's image (the 16 bits of batch_stream_key) ends: its streams are done. */
void batch_decoder_gone(struct batch_decoder *d, uint32_t pid, uint32_t image);

/* Ends the sweep: its frontiers hold; emits every event older than the earliest frontier. */
void batch_decoder_commit(struct batch_decoder *d);

/* Events that left before their time (past BATCH_HELD_BYTES): 0 unless the recorder fell behind. */
uint64_t batch_decoder_early(const struct batch_decoder *d);
/* Events lost for coming after later ones had left early: the trace stays in time order. */
uint64_t batch_decoder_late(const struct batch_decoder *d);

/* Emits every event held. */
void batch_decoder_flush(struct batch_decoder *d);

void batch_decoder_free(struct batch_decoder *d);

#endif
