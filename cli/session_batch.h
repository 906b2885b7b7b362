/*
 * The batched transport in a recording session: closure:batch records from the ring buffer are
 * decoded, put back in time order and written as the same events the per-operation probes give;
 * at stop, what the processes still hold in their buffers is drained. Launched commands are
 * recorded losslessly: the library waits (bounded) while the recorder is behind.
 */
#ifndef CLOSURETRACE_SESSION_BATCH_H
#define CLOSURETRACE_SESSION_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct session;

/* A traced process that handed over batches: where its registry is. */
struct batch_process {
	uint32_t pid;
	uint64_t registry;
	uint64_t handed; /* the highest total received */
	uint64_t acked;	 /* what the process was last told */
};

/* Prepares s for batches (events not before not_before_ns). 0, or -ENOMEM. */
int session_batch_init(struct session *s, uint64_t not_before_ns);

/* A ring-buffer record of kind CT_BATCH: false when it is not one. */
bool session_batch_record(struct session *s, const void *data, size_t size);

/* Once per loop: tells waiting processes what was received; writes events out of the window. */
void session_batch_tick(struct session *s);

/* At stop: drains the buffers of the processes still alive and writes every event held. */
void session_batch_stop(struct session *s);

/* Records lost on the way: dropped by the library or by BPF (ring buffer full). */
uint64_t session_batch_lost(struct session *s);

void session_batch_free(struct session *s);

#endif
