/*
 * The rows `closuretrace export` would send for a trace, one per line ("TABLE<tab>ROW"), without a
 * server: export_rows on its own, for golden tests that run under the sanitizers too. What
 * depends on the clock, the file's time or the machine (exported_at, start, build ids) is zeroed;
 * --keep-build-ids keeps the build ids (for a trace whose module records give them).
 *   fleet_rows_dump [--keep-build-ids] TRACE
 */
#include <stdio.h>
#include <string.h>

#include "export_rows.h"

/* Replaces the value of "key": in row (a number, a string or an array) with zero. */
static void blank(char *row, const char *key, const char *zero)
{
	char pat[64], *p, *v, *end;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(row, pat);
	if (!p)
		return;
	v = p + strlen(pat);
	end = v;
	if (*end == '"')
		for (end++; *end && *end != '"'; end++)
			end += *end == '\\';
	else if (*end == '[')
		while (*end && *end != ']')
			end++;
	else
		while (*end >= '0' && *end <= '9')
			end++;
	if (*end == '"' || *end == ']')
		end++;
	memmove(v + strlen(zero), end, strlen(end) + 1);
	memcpy(v, zero, strlen(zero));
}

static int keep_build_ids;

static int print_row(void *ctx, enum export_table t, const char *row, size_t len)
{
	char buf[1 << 16];

	(void)ctx;
	if (len >= sizeof(buf))
		return 1;
	memcpy(buf, row, len + 1);
	blank(buf, "exported_at", "0");
	blank(buf, "start", "0");
	blank(buf, "start_unix_ns", "0");
	if (!keep_build_ids) {
		blank(buf, "build_id", "\"\"");
		blank(buf, "module_build_ids", "[]");
	}
	printf("%s\t%s\n", export_table_name(t), buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct export_label labels[] = {{"ci", "golden"}};
	const struct export_meta meta = {
		.host = "host", .run_id = "run", .labels = labels, .nlabels = 1};
	struct export_trace *t;
	struct trace_error err;
	int rc;

	keep_build_ids = argc == 3 && !strcmp(argv[1], "--keep-build-ids");
	if (argc != 2 + keep_build_ids) {
		fprintf(stderr, "usage: fleet_rows_dump [--keep-build-ids] TRACE\n");
		return 2;
	}
	t = export_prepare(argv[argc - 1], &err);
	if (!t) {
		fprintf(stderr, "%s\n", err.text);
		return 2;
	}
	rc = export_rows(t, &meta, print_row, NULL, &err);
	if (rc == -1)
		fprintf(stderr, "%s\n", err.text);
	export_trace_free(t);
	return rc ? 2 : 0;
}
