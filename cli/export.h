/*
 * Loading a trace into ClickHouse (docs/fleet.md): export_rows' rows, batched per table and sent
 * as INSERT ... FORMAT JSONEachRow; the traces row last, once every other row is stored. What
 * `closuretrace export`, `check --export` and `record --export` share.
 */
#ifndef CLOSURETRACE_EXPORT_H
#define CLOSURETRACE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "export_rows.h"

/* A batch is sent when its rows reach this many bytes. */
#define EXPORT_BATCH_BYTES (4u << 20)
/* The longest one request may take, by default (--timeout). */
#define EXPORT_TIMEOUT_S 60.0

struct export_opts {
	const char *url; /* http://HOST:PORT/DATABASE */
	struct export_meta meta;
	double timeout_s;
	size_t batch_bytes; /* 0: EXPORT_BATCH_BYTES */
};

struct export_result {
	char trace_id[40];
	uint64_t rows[EXPORT_NR]; /* sent and acknowledged, per table */
	uint64_t bytes;		  /* of rows sent */
};

/*
 * Export the trace at path. Returns EXIT_OK; EXIT_USAGE when the trace is damaged (nothing was
 * sent) or the URL is not one; EXIT_ENVIRONMENT when the server failed (the message names it and
 * the rows it stored before). Messages go to standard error, each starting with "CMD: ".
 */
int export_trace_to(const char *cmd, const char *path, const struct export_opts *o,
		    struct export_result *res);

/*
 * The trace a command (check, record) just wrote, exported with --export: what happened, on
 * standard error ("closuretrace: exported ..." or a warning). Never fails the command. Returns 0
 * when the trace is stored; -1 when not, after saying where the trace is (path, which the caller
 * then keeps) and the exact command that exports it again (the dedupe rule makes that command
 * finish an export that stopped midway: docs/fleet.md).
 */
int export_after_run(const char *path, const struct export_opts *o);

/* --export URL of check and record (an OPT_CALL of args.h into a const char *): a URL that
 * clickhouse_open takes, checked before the command runs; else EXIT_USAGE after args_error. */
int export_url_opt(void *url, const char *arg, const char *cmd);

/* The labels of --label KEY=VALUE (repeatable), as export, check and record read them. */
#define EXPORT_MAX_LABELS 32
struct export_labels {
	size_t n;
	struct export_label v[EXPORT_MAX_LABELS];
};

/* One --label KEY=VALUE into labels (a struct export_labels; an OPT_CALL of args.h): 0 with the
 * label pointing into arg (argv's, kept), or EXIT_USAGE after args_error's "--label wants
 * KEY=VALUE" or "at most 32 --label". */
int export_label_opt(void *labels, const char *arg, const char *cmd);

#endif
