/*
 * A trace as rows of closuretrace's ClickHouse tables (sql/schema.sql): one per event, one per
 * closure, one per leak or stuck diagnostic, and last one for the trace. The model, the kinds and
 * the verdicts are viz's (report's and check's); this only writes them down. Rows are produced
 * one at a time while the trace streams through the model, so memory stays bounded.
 */
#ifndef CLOSURETRACE_EXPORT_ROWS_H
#define CLOSURETRACE_EXPORT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "trace_error.h"

enum export_table { EXPORT_EVENTS, EXPORT_CLOSURES, EXPORT_DIAGNOSTICS, EXPORT_TRACES, EXPORT_NR };

/* "events", "closures", "diagnostics", "traces" (static). */
const char *export_table_name(enum export_table t);

struct export_label {
	const char *key, *value;
};

/* What the command line adds to a trace's rows. */
struct export_meta {
	const char *host;   /* NULL: this machine's name */
	const char *run_id; /* NULL: the trace id */
	const struct export_label *labels;
	size_t nlabels;
};

/* One row for table t: a JSON object on one line, without its newline (borrowed for the call).
 * Returns 0, or non-zero to stop (the export then fails with it). */
typedef int export_row_fn(void *ctx, enum export_table t, const char *row, size_t len);

struct export_trace;

/*
 * Read the whole trace at path once before anything is sent: a damaged trace is refused here
 * (err: "FILE:LINE: error: ..."), its id computed (a hash of the file's bytes) and its symbols
 * kept. Standard input is refused (it is read twice). Returns a new export_trace, or NULL.
 */
struct export_trace *export_prepare(const char *path, struct trace_error *err);
void export_trace_free(struct export_trace *t);

/* The trace id: 16 hex digits of the hash, '-', the file's size in bytes (borrowed). */
const char *export_trace_id(const struct export_trace *t);

/*
 * Read the trace again and hand every row to row, the traces row last. Returns 0; -1 with err
 * saying why when the file changed since export_prepare; or row's non-zero.
 */
int export_rows(struct export_trace *t, const struct export_meta *meta, export_row_fn *row,
		void *ctx, struct trace_error *err);

#endif
