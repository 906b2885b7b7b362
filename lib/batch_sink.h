/*
 * The in-process sink (private): when CLOSURETRACE_SINK names a directory at start-up, the
 * library writes its batches and module records to a file of its own process there, for a tool
 * without BPF to turn into a trace (docs/probes.md, "In-process sink").
 */
#ifndef CLOSURE_LIB_BATCH_SINK_H
#define CLOSURE_LIB_BATCH_SINK_H

#include <stdint.h>

#include "closure_batch.h"

#pragma GCC visibility push(hidden)

extern struct closure_batch_registry closure_batch_registry;

void closure_batch_sink_start(void);
void closure_batch_sink_write(const struct closure_batch_buf *b, uint32_t n);
void closure_batch_sink_forked(void);
void closure_batch_sink_stop(void);

#pragma GCC visibility pop

#endif
