/* closuretrace export: a trace into ClickHouse; --create-schema makes its tables (docs/fleet.md).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "clickhouse.h"
#include "commands.h"
#include "export.h"
#include "sql_text.h"
#include "xalloc.h"

/* sql/NAME with {local}, {cluster} and {database} put in, one statement at a time. */
static int run_file(struct clickhouse *ch, const char *name, const char *cluster)
{
	const char *text = sql_text(name), *local = cluster ? "_local" : "";
	char *sql = xcalloc(1, strlen(text) * 2 + 256), *w = sql, *stmt;
	const char *p = text;
	int rc = 0;

	/* Comments out (a ';' in one would split a statement), placeholders in. */
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);

		if (strncmp(p, "--", 2))
			for (const char *q = p; q < p + n; q++) {
				const char *v = NULL;
				size_t skip = 0;

				if (!strncmp(q, "{local}", 7))
					v = local, skip = 7;
				else if (!strncmp(q, "{cluster}", 9))
					v = cluster, skip = 9;
				else if (!strncmp(q, "{database}", 10))
					v = clickhouse_database(ch), skip = 10;
				if (v) {
					w += sprintf(w, "%s", v);
					q += skip - 1;
				} else {
					*w++ = *q;
				}
			}
		p += n;
	}
	*w = 0;
	for (char *save = NULL, *s = sql; (stmt = strtok_r(s, ";", &save)); s = NULL) {
		if (strspn(stmt, " \t\n") == strlen(stmt))
			continue;
		if (clickhouse_run(ch, stmt, NULL, 0, NULL, NULL)) {
			rc = -1;
			break;
		}
	}
	free(sql);
	return rc;
}

static int create_schema(const char *url, const char *cluster, double timeout_s)
{
	struct clickhouse *ch;
	char why[256];
	int rc = EXIT_OK;

	if (cluster &&
	    strspn(cluster, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
		    strlen(cluster))
		return args_error("export", "--cluster wants a plain name (letters, digits, _)",
				  cluster);
	ch = clickhouse_open(url, timeout_s, why, sizeof(why));
	if (!ch) {
		fprintf(stderr, "closuretrace export: %s\n", why);
		return EXIT_USAGE;
	}
	if (clickhouse_create_database(ch) || run_file(ch, "schema.sql", cluster) ||
	    (cluster && run_file(ch, "distributed.sql", cluster))) {
		fprintf(stderr, "closuretrace export: %s: %s\n", clickhouse_name(ch),
			clickhouse_error(ch));
		rc = EXIT_ENVIRONMENT;
	} else {
		printf("closuretrace export: the tables of closuretrace are in %s%s%s\n",
		       clickhouse_name(ch), cluster ? ", over cluster " : "",
		       cluster ? cluster : "");
	}
	clickhouse_close(ch);
	return rc;
}

static int batch_arg(void *bytes, const char *arg, const char *cmd)
{
	char *end;

	*(size_t *)bytes = strtoul(arg, &end, 10);
	if (*end || end == arg || !*(size_t *)bytes)
		return args_error(cmd, "--batch-bytes wants a number of bytes", arg);
	return 0;
}

/*
 * --create-schema without -i exports nothing: what only an export reads (--label, --host,
 * --run-id, --batch-bytes) is refused beside it, never ignored. EXIT_USAGE after saying which,
 * or -1 when none was given.
 */
static int trace_options_alone(const struct export_labels *labels, const struct export_opts *o)
{
	const char *lone = labels->n	    ? "--label"
			   : o->meta.host   ? "--host"
			   : o->meta.run_id ? "--run-id"
			   : o->batch_bytes ? "--batch-bytes"
					    : NULL;
	char what[128];

	if (!lone)
		return -1;
	snprintf(what, sizeof(what),
		 "%s is for a trace to export: beside --create-schema, give -i TRACE", lone);
	return args_error("export", what, NULL);
}

int cmd_export(int argc, char **argv)
{
	struct export_labels labels = {0};
	struct export_opts o = {.timeout_s = EXPORT_TIMEOUT_S};
	const char *input = NULL, *cluster = NULL; /* input NULL: DEFAULT_TRACE, or none beside
						      --create-schema */
	struct export_result res;
	bool schema = false;
	const struct opt opts[] = {
		OPTION(OPT_STRING, 'i', "input", &input, "TRACE", "the trace to read (a file)"),
		OPTION(OPT_STRING, 0, "to", &o.url, "URL",
		       "the server and database: http://HOST:PORT/DATABASE"),
		OPTION(OPT_CALL, 0, "label", &labels, "KEY=VALUE",
		       "a label of the run (repeatable): ci=nightly, commit=abc1",
		       .call = export_label_opt),
		OPTION(OPT_STRING, 0, "host", &o.meta.host, "NAME",
		       "the machine it ran on (default: this machine's name)"),
		OPTION(OPT_STRING, 0, "run-id", &o.meta.run_id, "ID",
		       "the run's name (default: the trace id)"),
		OPTION(OPT_CALL, 0, "timeout", &o.timeout_s, "TIME",
		       "the longest one request may take (default 60s)",
		       .call = args_timeout_seconds),
		OPTION(OPT_FLAG, 0, "create-schema", &schema, NULL,
		       "create the database and the tables of sql/ (IF NOT\nEXISTS); with -i, "
		       "then export TRACE"),
		OPTION(OPT_STRING, 0, "cluster", &cluster, "NAME",
		       "with --create-schema, on a shard of cluster NAME (the\nserver's "
		       "remote_servers): local tables and Distributed\ntables over them; run it on "
		       "every shard"),
		OPTION(OPT_CALL, 0, "batch-bytes", &o.batch_bytes, "N",
		       "rows per request, in bytes (for the tests: many batches)",
		       .call = batch_arg),
		OPTION_MAX_MEMORY,
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "export",
		.synopsis =
			"usage: closuretrace export [-i TRACE] --to URL [--label KEY=VALUE]...\n"
			"                           [--host NAME] [--run-id ID] [--timeout "
			"SECONDS]\n"
			"       closuretrace export --create-schema --to URL [--cluster NAME]\n"
			"                           [-i TRACE [--label KEY=VALUE]... ...]\n"
			"\n"
			"Load TRACE (default " DEFAULT_TRACE ") into the ClickHouse server at URL\n"
			"(http://HOST:PORT/DATABASE, its HTTP interface): one row per event, per\n"
			"closure (kind, sites, lifetime, verdict, blame), per leak or stuck\n"
			"diagnostic, and one for the trace (host, run id, labels, program, build "
			"ids,\n"
			"totals). The whole trace is read first: a damaged one sends nothing.\n"
			"Exporting the same trace again stores nothing twice (docs/fleet.md, 'the\n"
			"dedupe rule'), so a failed export is finished by running it again.\n"
			"--create-schema makes the tables first, and exports only when -i names a\n"
			"trace.\n",
		.opts = opts,
	};
	int rc = args_parse_only(&cl, argc, argv);

	if (rc >= 0)
		return rc;
	if (!o.url)
		return args_error("export", "--to URL is needed (http://HOST:PORT/DATABASE)", NULL);
	if (cluster && !schema)
		return args_error("export", "--cluster goes with --create-schema", cluster);
	if (schema && !input && (rc = trace_options_alone(&labels, &o)) >= 0)
		return rc;
	if (schema && ((rc = create_schema(o.url, cluster, o.timeout_s)) || !input))
		return rc;
	if (!input)
		input = DEFAULT_TRACE;
	o.meta.labels = labels.v;
	o.meta.nlabels = labels.n;
	rc = export_trace_to("closuretrace export", input, &o, &res);
	if (rc == EXIT_OK)
		printf("closuretrace export: trace %s: %" PRIu64 " events, %" PRIu64
		       " closures, %" PRIu64 " diagnostics, %" PRIu64 " bytes sent to %s\n",
		       res.trace_id, res.rows[EXPORT_EVENTS], res.rows[EXPORT_CLOSURES],
		       res.rows[EXPORT_DIAGNOSTICS], res.bytes, o.url);
	return rc;
}
