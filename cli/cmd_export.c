/* closuretrace export: a trace into ClickHouse; --create-schema makes its tables (docs/fleet.md).
 */
#include <getopt.h>
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

#define MAX_LABELS 32

static void usage(FILE *out)
{
	fprintf(out,
		"usage: closuretrace export [-i TRACE] --to URL [--label KEY=VALUE]... [--host "
		"NAME]\n"
		"                           [--run-id ID] [--timeout SECONDS]\n"
		"       closuretrace export --create-schema --to URL [--cluster NAME]\n"
		"\n"
		"Load TRACE (default closuretrace.json) into the ClickHouse server at URL\n"
		"(http://HOST:PORT/DATABASE, its HTTP interface): one row per event, per closure\n"
		"(kind, sites, lifetime, verdict, blame), per leak or stuck diagnostic, and one "
		"for\n"
		"the trace (host, run id, labels, program, build ids, totals). The whole trace is\n"
		"read first: a damaged one sends nothing. Exporting the same trace again stores\n"
		"nothing twice (docs/fleet.md, 'the dedupe rule'), so a failed export is finished\n"
		"by running it again.\n"
		"\n"
		"  -i, --input TRACE      the trace to read (a file)\n"
		"      --to URL           the server and database: http://HOST:PORT/DATABASE\n"
		"      --label KEY=VALUE  a label of the run (repeatable): ci=nightly, "
		"commit=abc1\n"
		"      --host NAME        the machine it ran on (default: this machine's name)\n"
		"      --run-id ID        the run's name (default: the trace id)\n"
		"      --timeout SECONDS  the longest one request may take (default 60)\n"
		"      --create-schema    create the database and the tables of sql/ (IF NOT "
		"EXISTS)\n"
		"      --cluster NAME     with --create-schema, on a shard of cluster NAME (the\n"
		"                         server's remote_servers): local tables and Distributed\n"
		"                         tables over them; run it on every shard\n");
}

/* sql/NAME with {local}, {cluster} and {database} put in, one statement at a time. */
static int run_file(struct clickhouse *ch, const char *name, const char *cluster)
{
	const char *text = sql_text(name), *local = cluster ? "_local" : "";
	char *sql = viz_xcalloc(1, strlen(text) * 2 + 256), *w = sql, *stmt;
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
		return usage_error("export", "--cluster wants a plain name (letters, digits, _)",
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

int cmd_export(int argc, char **argv)
{
	enum {
		OPT_TO = 256,
		OPT_LABEL,
		OPT_HOST,
		OPT_RUN,
		OPT_TIMEOUT,
		OPT_SCHEMA,
		OPT_CLUSTER,
		OPT_BATCH
	};
	static const struct option options[] = {
		{"input", required_argument, NULL, 'i'},
		{"to", required_argument, NULL, OPT_TO},
		{"label", required_argument, NULL, OPT_LABEL},
		{"host", required_argument, NULL, OPT_HOST},
		{"run-id", required_argument, NULL, OPT_RUN},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"create-schema", no_argument, NULL, OPT_SCHEMA},
		{"cluster", required_argument, NULL, OPT_CLUSTER},
		{"batch-bytes", required_argument, NULL,
		 OPT_BATCH}, /* for the tests: many batches */
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct export_label labels[MAX_LABELS];
	struct export_opts o = {.timeout_s = EXPORT_TIMEOUT_S};
	const char *input = "closuretrace.json", *cluster = NULL;
	struct export_result res;
	bool schema = false;
	uint64_t ns;
	char *end;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case OPT_TO:
			o.url = optarg;
			break;
		case OPT_LABEL:
			if (o.meta.nlabels == MAX_LABELS)
				return usage_error("export", "at most 32 --label", optarg);
			if (export_label_arg("export", optarg, &labels[o.meta.nlabels]))
				return EXIT_USAGE;
			o.meta.nlabels++;
			break;
		case OPT_HOST:
			o.meta.host = optarg;
			break;
		case OPT_RUN:
			o.meta.run_id = optarg;
			break;
		case OPT_TIMEOUT:
			if (seconds_arg("export", "--timeout", optarg, &ns))
				return EXIT_USAGE;
			o.timeout_s = (double)ns / 1e9;
			break;
		case OPT_SCHEMA:
			schema = true;
			break;
		case OPT_CLUSTER:
			cluster = optarg;
			break;
		case OPT_BATCH:
			o.batch_bytes = strtoul(optarg, &end, 10);
			if (*end || !o.batch_bytes)
				return usage_error("export",
						   "--batch-bytes wants a number of bytes", optarg);
			break;
		case 'h':
		default:
			return help_or_usage(usage, c);
		}
	}
	if (optind < argc)
		return extra_arg("export", argv[optind]);
	if (!o.url)
		return usage_error("export", "--to URL is needed (http://HOST:PORT/DATABASE)",
				   NULL);
	if (cluster && !schema)
		return usage_error("export", "--cluster goes with --create-schema", cluster);
	if (schema)
		return create_schema(o.url, cluster, o.timeout_s);
	o.meta.labels = labels;
	rc = export_trace_to("closuretrace export", input, &o, &res);
	if (rc == EXIT_OK)
		printf("closuretrace export: trace %s: %" PRIu64 " events, %" PRIu64
		       " closures, %" PRIu64 " diagnostics, %" PRIu64 " bytes sent to %s\n",
		       res.trace_id, res.rows[EXPORT_EVENTS], res.rows[EXPORT_CLOSURES],
		       res.rows[EXPORT_DIAGNOSTICS], res.bytes, o.url);
	return rc;
}
