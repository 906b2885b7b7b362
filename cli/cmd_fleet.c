/* closuretrace fleet: the questions of docs/fleet.md asked of ClickHouse, answered as tables. */
#define _GNU_SOURCE /* memrchr */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "clickhouse.h"
#include "commands.h"
#include "sql_text.h"
#include "trace_text.h"
#include "xalloc.h"

/* The answer of a query is held whole to align its columns: its LIMIT keeps it small. */
#define ANSWER_MAX (16u << 20)

static void list_queries(FILE *out)
{
	for (const struct sql_text *s = sql_texts; s->name; s++) {
		const char *name = s->name, *dot;
		const char *why = s->text + 3, *eol = strchr(why, '\n');

		if (strncmp(name, "fleet/", 6))
			continue;
		name += 6;
		dot = strrchr(name, '.');
		fprintf(out, "  %-18.*s %.*s\n", (int)(dot - name), name, (int)(eol - why), why);
	}
}

struct answer {
	char *buf;
	size_t len, cap;
	bool json;
	bool too_big;
};

/*
 * n bytes of the server's answer as they are printed, shown as every name is (trace_text.h): the
 * rows hold names that any traced program exported, and they reach the operator's terminal.
 * Newlines (rows) and tabs (columns) are kept; in JSON, a character's escape means the character.
 */
static char *shown_answer(const char *s, size_t n)
{
	char *shown = text_visible_ndup(s, n, "\t\n");

	if (!shown) {
		fprintf(stderr, "closuretrace: out of memory\n");
		exit(EXIT_ENVIRONMENT);
	}
	return shown;
}

/* --json: the rows printed as they come, each whole (a character is never cut in two). */
static void put_rows(struct answer *a, bool last)
{
	char *end = last ? a->buf + a->len : memrchr(a->buf, '\n', a->len), *shown;

	if (!end)
		return;
	if (!last)
		end++;
	shown = shown_answer(a->buf, (size_t)(end - a->buf));
	fputs(shown, stdout);
	free(shown);
	a->len -= (size_t)(end - a->buf);
	memmove(a->buf, end, a->len);
}

static int take(void *ctx, const char *data, size_t len)
{
	struct answer *a = ctx;

	if (a->len + len + 1 > ANSWER_MAX) {
		a->too_big = true;
		return 1;
	}
	if (a->len + len + 1 > a->cap) {
		a->cap = (a->len + len + 1) * 2;
		a->buf = xrealloc(a->buf, a->cap);
	}
	memcpy(a->buf + a->len, data, len);
	a->len += len;
	a->buf[a->len] = 0;
	if (a->json)
		put_rows(a, false);
	return 0;
}

/* TabSeparatedWithNames (as shown_answer shows it) as columns: numbers to the right, text to the
 * left. */
static void print_table(char *tsv)
{
	size_t ncols = 1, nrows = 0, *width;
	char *p;
	bool *numeric;

	for (p = tsv; *p && *p != '\n'; p++)
		ncols += *p == '\t';
	width = xcalloc(ncols, sizeof(*width));
	numeric = xcalloc(ncols, sizeof(*numeric));
	for (size_t i = 0; i < ncols; i++)
		numeric[i] = true;
	/* Widths, and which columns hold numbers only. */
	for (char *line = tsv; *line; nrows++) {
		char *eol = strchr(line, '\n');
		size_t col = 0, w = 0;

		if (!eol)
			eol = line + strlen(line);
		for (char *q = line; q <= eol; q++) {
			if (q == eol || *q == '\t') {
				if (col < ncols && w > width[col])
					width[col] = w;
				if (nrows && col < ncols && w && strspn(q - w, "0123456789.-") < w)
					numeric[col] = false;
				col++;
				w = 0;
			} else if ((*q & 0xc0) != 0x80) {
				w++;
			}
		}
		line = *eol ? eol + 1 : eol;
	}
	for (char *line = tsv; *line;) {
		char *eol = strchr(line, '\n'), *field = line;
		size_t col = 0;

		if (!eol)
			eol = line + strlen(line);
		for (char *q = line; q <= eol; q++) {
			if (q != eol && *q != '\t')
				continue;
			size_t bytes = (size_t)(q - field), w = 0;

			for (char *r = field; r < q; r++)
				w += (*r & 0xc0) != 0x80;
			if (col && col < ncols)
				fputs("  ", stdout);
			if (col < ncols && numeric[col])
				printf("%*s%.*s", (int)(width[col] - w), "", (int)bytes, field);
			else if (q == eol)
				printf("%.*s", (int)bytes, field);
			else
				printf("%.*s%*s", (int)bytes, field, (int)(width[col] - w), "");
			col++;
			field = q + 1;
		}
		putchar('\n');
		line = *eol ? eol + 1 : eol;
	}
	free(width);
	free(numeric);
	if (nrows <= 1)
		printf("(no rows)\n");
}

int cmd_fleet(int argc, char **argv)
{
	const char *url = NULL, *text;
	struct answer a = {0};
	struct clickhouse *ch;
	double timeout_s = 60;
	char name[128], why[256], *sql;
	const struct opt opts[] = {
		OPTION(OPT_STRING, 0, "from", &url, "URL", "the server and database"),
		OPTION(OPT_FLAG, 0, "json", &a.json, NULL, "JSON Lines, one object per row"),
		OPTION(OPT_CALL, 0, "timeout", &timeout_s, "TIME",
		       "the longest the query may take (default 60s)",
		       .call = args_timeout_seconds),
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "fleet",
		.synopsis =
			"usage: closuretrace fleet QUERY --from URL [--json]\n"
			"\n"
			"Ask the ClickHouse server at URL (http://HOST:PORT/DATABASE, where\n"
			"'closuretrace export' loads traces) one of the questions of "
			"docs/fleet.md, and\n"
			"print the answer as a table (--json: one JSON object per row). QUERY:\n\n",
		.more_synopsis = list_queries,
		.opts = opts,
	};
	int next, rc = args_parse(&cl, argc, argv, &next);

	if (rc >= 0)
		return rc;
	rc = EXIT_OK;
	if (next == argc)
		return args_error("fleet", "which QUERY?", NULL);
	if (next + 1 < argc)
		return args_extra("fleet", argv[next + 1]);
	snprintf(name, sizeof(name), "fleet/%.100s.sql", argv[next]);
	text = strchr(argv[next], '/') ? NULL : sql_text(name);
	if (!text) {
		fprintf(stderr, "closuretrace fleet: no query '%s'; the queries are:\n",
			argv[next]);
		list_queries(stderr);
		return EXIT_USAGE;
	}
	if (!url)
		return args_error("fleet", "--from URL is needed (http://HOST:PORT/DATABASE)",
				  NULL);
	ch = clickhouse_open(url, timeout_s, why, sizeof(why));
	if (!ch) {
		fprintf(stderr, "closuretrace fleet: %s\n", why);
		return EXIT_USAGE;
	}
	sql = xcalloc(1, strlen(text) + 64);
	sprintf(sql, "%s\nFORMAT %s", text, a.json ? "JSONEachRow" : "TabSeparatedWithNames");
	if (clickhouse_run(ch, sql, NULL, 0, take, &a)) {
		if (a.too_big)
			fprintf(stderr, "closuretrace fleet: %s: %s is over 16 MiB\n",
				clickhouse_name(ch), a.json ? "a row of the answer" : "the answer");
		else
			fprintf(stderr, "closuretrace fleet: %s: %s\n", clickhouse_name(ch),
				clickhouse_error(ch));
		rc = EXIT_ENVIRONMENT;
	} else if (a.json) {
		put_rows(&a, true);
	} else {
		char *shown = shown_answer(a.buf ? a.buf : "", a.len);

		print_table(shown);
		free(shown);
	}
	free(sql);
	free(a.buf);
	clickhouse_close(ch);
	return rc;
}
