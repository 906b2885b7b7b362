/*
 * The recorder's side of a traced process's batch registry (lib/include/closure_batch.h): read
 * with process_vm_readv at stop to drain what is still buffered, written with process_vm_writev
 * to make the library wait for the recorder (lossless mode).
 */
#ifndef CLOSURETRACE_BATCH_PROC_H
#define CLOSURETRACE_BATCH_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "batch_decode.h"

/* The most buffers a drain reads (a registry list is only ever appended to). */
#define BATCH_DRAIN_MAX_BUFFERS 65536

/*
 * Feeds every record still in the buffers of process pid, whose registry is at registry, to d.
 * Returns the number of new records, or -errno (the process is gone: -ESRCH).
 */
long batch_drain(struct batch_decoder *d, pid_t pid, uint64_t registry);

/* Tells the library of pid that the recorder received everything up to handed. 0 or -errno. */
int batch_ack(pid_t pid, uint64_t registry, uint64_t handed);

/* Lossless mode: the library waits when more than limit records are handed and not acked. */
int batch_set_wait_limit(pid_t pid, uint64_t registry, uint64_t limit);

#endif
