/* SARIF 2.1.0 output: see check_sarif.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "check_sarif.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"

static const char *const rule_ids[CHECK_NR_RULES] = {"closure-leak", "closure-stuck"};
static const char *const rule_texts[CHECK_NR_RULES] = {
	"A closure was initialised and never finished: references taken were not put back.",
	"A closure was still inside closure_sync or on a waitlist when the program exited.",
};

static json_t *message(const char *text)
{
	return json_pack("{s:s}", "text", text);
}

/*
 * A path as a URI reference (RFC 3986): every byte but the unreserved ones and '/' is
 * percent-encoded ('#', '%', spaces, non-ASCII); an absolute path becomes a file: URI. NULL when
 * it does not fit.
 */
static const char *path_uri(const char *path, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	if (path[0] == '/') {
		if (len < 8)
			return NULL;
		memcpy(buf, "file://", 7);
		n = 7;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (n + 4 > len)
			return NULL;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
			buf[n++] = (char)*p;
		} else {
			buf[n++] = '%';
			buf[n++] = hex[*p >> 4];
			buf[n++] = hex[*p & 15];
		}
	}
	buf[n] = 0;
	return buf;
}

/* A physical location; NULL when the file is not known. */
static json_t *location(const struct check_site *s, const char *text)
{
	char uri[3 * 4096 + 8];
	json_t *region, *loc;

	if (!s->file || !path_uri(check_display_path(s->file), uri, sizeof(uri)))
		return NULL;
	loc = json_pack("{s:{s:{s:s}}}", "physicalLocation", "artifactLocation", "uri", uri);
	if (s->line > 0) {
		region = json_pack("{s:I}", "startLine", (json_int_t)s->line);
		json_object_set_new(json_object_get(loc, "physicalLocation"), "region", region);
	}
	if (text)
		json_object_set_new(loc, "message", message(text));
	return loc;
}

static json_t *result(const struct check_diag *g)
{
	json_t *r = json_pack("{s:s,s:s,s:o}", "ruleId", rule_ids[g->rule], "level", "error",
			      "message", message(g->message));
	json_t *locs = json_array(), *related = json_array(), *loc = location(&g->at, NULL);

	if (loc)
		json_array_append_new(locs, loc);
	json_object_set_new(r, "locations", locs);
	for (unsigned k = 0; k < g->nnotes; k++) {
		loc = location(&g->notes[k].at, g->notes[k].text);
		if (loc)
			json_array_append_new(related, loc);
	}
	json_object_set_new(r, "relatedLocations", related);
	json_object_set_new(r, "occurrenceCount", json_integer(g->count));
	if (g->suppressed) {
		char why[128];

		snprintf(why, sizeof(why), "%s:%lu", g->suppressed->file, g->suppressed->file_line);
		json_object_set_new(
			r, "suppressions",
			json_pack("[{s:s,s:s}]", "kind", "external", "justification", why));
	}
	return r;
}

int check_sarif_write(const struct check_diags *d, FILE *out, const char *version,
		      struct viz_error *err)
{
	json_t *rules = json_array(), *results = json_array(), *log;
	int failed;

	for (int i = 0; i < CHECK_NR_RULES; i++)
		json_array_append_new(rules, json_pack("{s:s,s:o,s:{s:s}}", "id", rule_ids[i],
						       "shortDescription", message(rule_texts[i]),
						       "defaultConfiguration", "level", "error"));
	for (size_t i = 0; i < d->n; i++)
		json_array_append_new(results, result(&d->v[i]));
	log = json_pack("{s:s,s:s,s:[{s:{s:{s:s,s:s,s:o}},s:o}]}", "version", "2.1.0", "$schema",
			SARIF_SCHEMA, "runs", "tool", "driver", "name", "closuretrace", "version",
			version, "rules", rules, "results", results);
	failed = log ? json_dumpf(log, out, JSON_INDENT(2) | JSON_ENSURE_ASCII) : -1;
	if (failed)
		viz_error_set(err, "cannot write the SARIF log: %s",
			      log ? strerror(errno) : "out of memory");
	json_decref(log);
	return failed ? -1 : 0;
}
