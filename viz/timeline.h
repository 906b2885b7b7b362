/*
 * The timeline: a trace as Chrome trace-event JSON (the "traceEvents" object form that Perfetto
 * and chrome://tracing open). Threads are tracks, each closure's life an async slice on a track of
 * its kind, operations instant events on the thread that did them, closure_sync a slice, and the
 * hops between threads flow arrows. It streams: memory holds the live closures and the threads,
 * never the events.
 */
#ifndef CLOSURETRACE_TIMELINE_H
#define CLOSURETRACE_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

struct timeline_opts {
	const char *path;	/* the trace ("-": standard input) */
	int64_t from_ns, to_ns; /* only what happened in [from, to] (INT64_MIN/MAX: all) */
	bool select;		/* --closure: one closure, its ancestors and descendants */
	struct model_id sel;	/* pid 0: any process; nth 0: the last life */
};

struct timeline_stats {
	uint64_t events; /* trace events written, of every phase */
	uint64_t slices, instants, flows, syncs;
};

/*
 * Write the timeline of o->path to out. Returns 0; 2 after printing why (bad input: "FILE:LINE:
 * error: ...", or a --closure that names no closure of the trace, or several).
 */
int render_timeline(const struct timeline_opts *o, FILE *out, struct timeline_stats *st);

#endif
