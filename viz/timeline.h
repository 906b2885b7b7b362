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
#include "trace_error.h"

struct timeline_opts {
	const char *path;	/* the trace ("-": standard input) */
	int64_t from_ns, to_ns; /* only what happened in [from, to] (INT64_MIN/MAX: all) */
	bool select;		/* --closure: one closure, its ancestors and descendants */
	struct model_id sel;	/* pid 0: any process; nth 0: the last life */
};

#define TIMELINE_MAX_WARNINGS 3
#define TIMELINE_WARNING_LEN  (4096 + 160) /* a file's name shown up to 4 KiB, and the words */

/* What the timeline wrote, and what it warns of: for the command to say. */
struct timeline_result {
	uint64_t events; /* trace events written, of every phase */
	uint64_t slices, instants, flows, syncs;
	/* Arrows not drawn: more open gets, or children finished before their parent's next step,
	 * on one closure than the timeline holds (a reference given back past them is counted
	 * whichever thread took it). The output's "otherData" says it too. */
	uint64_t flows_dropped;
	/* What makes the timeline incomplete (cut short, lost events, arrows not drawn), one line
	 * each ("FILE: warning: ..."), for the command to print. */
	unsigned nwarnings;
	char warnings[TIMELINE_MAX_WARNINGS][TIMELINE_WARNING_LEN];
};

/*
 * Write the timeline of o->path to out. Returns 0, or -1 with err saying why: bad input
 * ("FILE:LINE: error: ...", placed), a --closure that names no closure of the trace or several,
 * or a --closure on standard input (with no place: the command says whose it is).
 */
int render_timeline(const struct timeline_opts *o, FILE *out, struct timeline_result *res,
		    struct trace_error *err);

#endif
