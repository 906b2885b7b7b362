/*
 * Reading the in-process sink's directory once the command has exited (lib/include/closure_batch.h,
 * docs/probes.md "In-process sink"): each process image's stream, then what its thread buffers
 * still held, into a session's batch decoder.
 */
#ifndef CLOSURETRACE_SINK_READ_H
#define CLOSURETRACE_SINK_READ_H

#include <stdint.h>

struct session;

struct sink_totals {
	unsigned processes; /* processes that left files */
	unsigned abrupt;    /* of them, those whose last image did not run its exit handlers */
	unsigned damaged;   /* files that did not read to their end (said on stderr) */
	uint64_t lost;	    /* records the library could not keep (a full file system) */
	uint64_t cut;	    /* records a kill interrupted while they were being written */
	uint64_t recovered; /* records taken from the buffer files (never handed over) */
};

/* Every file of dir into s, in order of process and image; removes them. */
void sink_read_dir(struct session *s, const char *dir, struct sink_totals *t);

#endif
