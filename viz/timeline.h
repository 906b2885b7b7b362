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

struct timeline_opts {
	const char *path;	/* the trace ("-": standard input) */
	int64_t from_ns, to_ns; /* only what happened in [from, to] (INT64_MIN/MAX: all) */
	bool select;		/* --closure: one closure, its ancestors and descendants */
	int64_t sel_pid;	/* 0: any process */
	uint64_t sel_addr;
	unsigned sel_nth;     /* 0: the last life at sel_addr */
	const char *sel_text; /* as the user wrote it, for messages */
};

struct timeline_stats {
	uint64_t events; /* trace events written, of every phase */
	uint64_t slices, instants, flows, syncs;
};

/*
 * Write the timeline of o->path to out. Returns 0; 2 after printing why (bad input: "FILE:LINE:
 * error: ...", or a --closure that names no closure of the trace).
 */
int render_timeline(const struct timeline_opts *o, FILE *out, struct timeline_stats *st);

/* Parse "PID:0xADDR#N", "0xADDR#N" or "0xADDR" (pid 0, nth 0 when not given); 0, or -1. */
int timeline_parse_closure(const char *s, int64_t *pid, uint64_t *addr, unsigned *nth);

/* Parse a time: "1500" (ns), "1.5s", "20ms", "3us", "40ns"; 0, or -1. */
int timeline_parse_time(const char *s, int64_t *ns);

#endif
