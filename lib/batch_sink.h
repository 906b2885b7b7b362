/*
 * The in-process sink (private): when CLOSURETRACE_SINK names a directory at start-up, the
 * library writes its batches and module records to a stream file of its process image there, and
 * keeps each thread's buffer in a file of that directory mapped shared, so that what a killed
 * process had not handed over outlives it (docs/probes.md, "In-process sink").
 */
#ifndef CLOSURE_LIB_BATCH_SINK_H
#define CLOSURE_LIB_BATCH_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "closure_batch.h"

#pragma GCC visibility push(hidden)

/* The sink is on in this process image: its buffers come from closure_batch_sink_buffer. */
extern bool closure_batch_sink_on;

/* At start-up: true when the environment names a sink and its stream is open (then batching is
 * to be on for the life of the image, as if traced). */
bool closure_batch_sink_start(void);

/* A new buffer in a file of the sink, zeroed but for its number; NULL when none can be made. */
struct closure_batch_buf *closure_batch_sink_buffer(void);

/* Counts n records the sink could not keep (no buffer for them). */
void closure_batch_sink_lost(uint32_t n);

/* Writes records [0, n) of b as a batch; what cannot be written is counted as lost. */
void closure_batch_sink_write(const struct closure_batch_buf *b, uint32_t n);

/* What a fork left of the sink (closure_batch_sink_forked), for batching to follow. */
enum closure_sink_fork {
	CLOSURE_SINK_FORK_OFF,	  /* the sink was off: nothing done */
	CLOSURE_SINK_FORK_ON,	  /* the child has its own stream and buffer files */
	CLOSURE_SINK_FORK_ENDED,  /* no stream for the child: the sink is off (undo its raise) */
	CLOSURE_SINK_FORK_BROKEN, /* a buffer still maps the parent's file: batching must stop */
};

/*
 * In a forked child, before anything touches a buffer (the sink's are shared with the parent):
 * opens the child's stream, gives *mine a new file of the child's and retires every other
 * buffer of the list at head (*mine becomes NULL when it cannot have one).
 */
enum closure_sink_fork closure_batch_sink_forked(struct closure_batch_buf *head,
						 struct closure_batch_buf **mine);

void closure_batch_sink_stop(void);

#pragma GCC visibility pop

#endif
