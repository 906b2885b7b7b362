/* Loading a trace into ClickHouse (export.h). */
#include "export.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "clickhouse.h"
#include "commands.h"
#include "xalloc.h"

struct batch {
	char *buf;
	size_t len, cap;
	uint64_t rows;
};

struct loader {
	struct clickhouse *ch;
	struct export_result *res;
	size_t batch_bytes;
	struct batch b[EXPORT_NR];
};

static int send(struct loader *ld, enum export_table t)
{
	struct batch *b = &ld->b[t];
	char sql[96];

	if (!b->rows)
		return 0;
	snprintf(sql, sizeof(sql), "INSERT INTO %s FORMAT JSONEachRow", export_table_name(t));
	if (clickhouse_run(ld->ch, sql, b->buf, b->len, NULL, NULL))
		return -1;
	ld->res->rows[t] += b->rows;
	ld->res->bytes += b->len;
	b->len = 0;
	b->rows = 0;
	return 0;
}

static int add_row(void *ctx, enum export_table t, const char *row, size_t len)
{
	struct loader *ld = ctx;
	struct batch *b = &ld->b[t];

	/* The trace's row says the export is complete: every other row is stored first. */
	if (t == EXPORT_TRACES)
		for (int i = 0; i < EXPORT_NR; i++)
			if (i != EXPORT_TRACES && send(ld, i))
				return 1;
	if (b->len + len + 1 > b->cap) {
		b->cap = b->len + len + 1 > 2 * b->cap ? b->len + len + 1 : 2 * b->cap;
		b->buf = viz_xrealloc(b->buf, b->cap);
	}
	memcpy(b->buf + b->len, row, len);
	b->len += len;
	b->buf[b->len++] = '\n';
	b->rows++;
	if ((b->len >= ld->batch_bytes || t == EXPORT_TRACES) && send(ld, t))
		return 1; /* the server failed: export_rows stops and returns it */
	return 0;
}

/* "events 20000, closures 4000" of what was stored. */
static void rows_text(const struct export_result *res, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int t = 0; t < EXPORT_NR && used < len; t++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s %" PRIu64, t ? ", " : "",
					 export_table_name(t), res->rows[t]);
}

int export_trace_to(const char *cmd, const char *path, const struct export_opts *o,
		    struct export_result *res)
{
	struct loader ld = {.res = res};
	struct export_trace *t;
	struct viz_error err;
	char why[256], rows[256];
	int rc;

	memset(res, 0, sizeof(*res));
	ld.batch_bytes = o->batch_bytes ? o->batch_bytes : EXPORT_BATCH_BYTES;
	ld.ch = clickhouse_open(o->url, o->timeout_s > 0 ? o->timeout_s : EXPORT_TIMEOUT_S, why,
				sizeof(why));
	if (!ld.ch) {
		fprintf(stderr, "%s: %s\n", cmd, why);
		return EXIT_USAGE;
	}
	/* The whole trace is read before anything is sent: a damaged one sends nothing. */
	t = export_prepare(path, &err);
	if (!t) {
		fprintf(stderr, "%s\n%s: nothing was sent to %s\n", err.text, cmd,
			clickhouse_name(ld.ch));
		clickhouse_close(ld.ch);
		return EXIT_USAGE;
	}
	snprintf(res->trace_id, sizeof(res->trace_id), "%s", export_trace_id(t));
	rc = export_rows(t, &o->meta, add_row, &ld, &err);
	if (rc == -1) { /* the file changed under us */
		fprintf(stderr, "%s\n", err.text);
		rc = EXIT_USAGE;
	} else if (rc) {
		rows_text(res, rows, sizeof(rows));
		fprintf(stderr,
			"%s: %s: %s\n%s: trace %s (%s) is not complete there: rows stored before "
			"the "
			"failure: %s; the trace is left as it was: export it again (a row sent "
			"twice "
			"counts once)\n",
			cmd, clickhouse_name(ld.ch), clickhouse_error(ld.ch), cmd, res->trace_id,
			path, rows);
		rc = EXIT_ENVIRONMENT;
	}
	for (int i = 0; i < EXPORT_NR; i++)
		free(ld.b[i].buf);
	export_trace_free(t);
	clickhouse_close(ld.ch);
	return rc;
}

int export_label_opt(void *labels, const char *arg, const char *cmd)
{
	struct export_labels *l = labels;
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return args_error(cmd, "--label wants KEY=VALUE", arg);
	if (l->n == EXPORT_MAX_LABELS)
		return args_error(cmd, "at most 32 --label", arg);
	*eq = 0; /* argv's own string, kept for the run */
	l->v[l->n++] = (struct export_label){.key = arg, .value = eq + 1};
	return 0;
}

void export_after_run(const char *path, const struct export_opts *o)
{
	struct export_result res;

	if (export_trace_to("closuretrace: warning", path, o, &res) == EXIT_OK)
		fprintf(stderr,
			"closuretrace: exported trace %s to %s: %" PRIu64 " events, %" PRIu64
			" closures, %" PRIu64 " diagnostics\n",
			res.trace_id, o->url, res.rows[EXPORT_EVENTS], res.rows[EXPORT_CLOSURES],
			res.rows[EXPORT_DIAGNOSTICS]);
	else
		fprintf(stderr,
			"closuretrace: warning: the export to %s failed; the verdict above "
			"stands\n",
			o->url);
}
