/*
 * A ClickHouse server over its HTTP interface (libcurl): statements and queries posted to
 * http://HOST:PORT/?database=DB, rows sent as JSONEachRow. One connection, kept alive.
 */
#ifndef CLOSURETRACE_CLICKHOUSE_H
#define CLOSURETRACE_CLICKHOUSE_H

#include <stddef.h>

struct clickhouse;

/*
 * Parse url ("http://HOST:PORT/DB"; no DB: "default") and prepare a connection (nothing is sent
 * yet). timeout_s: the longest a request may take. Returns a new connection, or NULL with err
 * (caller-owned) saying why (a URL that is not one).
 */
struct clickhouse *clickhouse_open(const char *url, double timeout_s, char *err, size_t len);
void clickhouse_close(struct clickhouse *ch);

/* The server, as messages name it: "http://127.0.0.1:8123/fleet" (borrowed). */
const char *clickhouse_name(const struct clickhouse *ch);
/* The database the URL names (borrowed). */
const char *clickhouse_database(const struct clickhouse *ch);

/*
 * Run sql (a statement or a query), with body (len bytes, may be NULL) sent as its data: an INSERT
 * ... FORMAT JSONEachRow reads its rows from it. The answer's body is handed to out (NULL: thrown
 * away), which returns non-zero to stop. Returns 0, or -1 with clickhouse_error() saying why
 * (the connection, or the server's own message).
 */
typedef int clickhouse_out_fn(void *ctx, const char *data, size_t len);
int clickhouse_run(struct clickhouse *ch, const char *sql, const char *body, size_t len,
		   clickhouse_out_fn *out, void *ctx);

/* CREATE DATABASE IF NOT EXISTS the URL's database: 0, or -1 (clickhouse_error). */
int clickhouse_create_database(struct clickhouse *ch);

/* Why the last clickhouse_run failed, one line (borrowed until the next run). */
const char *clickhouse_error(const struct clickhouse *ch);

#endif
