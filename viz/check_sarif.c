/* SARIF 2.1.0 output: see check_sarif.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check_sarif.h"
#include "json_value.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"

static const char *const rule_ids[CHECK_NR_RULES] = {"closure-leak", "closure-stuck"};
static const char *const rule_texts[CHECK_NR_RULES] = {
	"A closure was initialised and never finished: references taken were not put back.",
	"A closure was still inside closure_sync or on a waitlist when the program exited.",
};

static json_t *message(const char *text)
{
	return json_pack("{s:o}", "text", json_text(text));
}

/*
 * A path as a URI reference (RFC 3986): every byte but the unreserved ones and '/' is
 * percent-encoded ('#', '%', spaces, non-ASCII, a byte that is not UTF-8); an absolute path
 * becomes a file: URI. NULL out of memory.
 */
static char *path_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *buf = n < (SIZE_MAX - 8) / 3 ? malloc(3 * n + 8) : NULL;

	if (!buf)
		return NULL;
	n = 0;
	if (path[0] == '/') {
		memcpy(buf, "file://", 7);
		n = 7;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
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

/*
 * A location: where the file is known, a physical one (the file by its own bytes: a name shown
 * with escapes is found by its URI); else the function, as the text diagnostics say it
 * ("(in FUNC)"); with its message when text is given, so that a note of no place is kept too.
 * *loc is NULL when nothing is known; -1 out of memory.
 */
static int location(const struct check_site *s, const char *text, json_t **loc)
{
	char *uri = NULL;

	*loc = NULL;
	if (!s->file && !s->func && !text)
		return 0;
	if (!(*loc = json_object()))
		return -1;
	if (s->file) {
		uri = path_uri(check_site_file(s, true));
		if (json_object_set_new(*loc, "physicalLocation",
					uri ? json_pack("{s:{s:s}}", "artifactLocation", "uri", uri)
					    : NULL))
			goto fail;
		if (s->line > 0 &&
		    json_object_set_new(json_object_get(*loc, "physicalLocation"), "region",
					json_pack("{s:I}", "startLine", (json_int_t)s->line)))
			goto fail;
	} else if (s->func &&
		   json_object_set_new(*loc, "logicalLocations",
				       json_pack("[{s:o,s:s}]", "name", json_text(s->func), "kind",
						 "function"))) {
		goto fail;
	}
	if (text && json_object_set_new(*loc, "message", message(text)))
		goto fail;
	free(uri);
	return 0;
fail:
	free(uri);
	json_decref(*loc);
	*loc = NULL;
	return -1;
}

/* Appends value (its reference taken, NULL: out of memory) to a: 0, or -1. */
static int append(json_t *a, json_t *value)
{
	return value ? json_array_append_new(a, value) : -1;
}

/*
 * --stacks: the blamed site's stack as a code flow, a thread flow of its frames outermost first
 * (SARIF's order of execution; the text shows them innermost first, as LSan). 0, or -1.
 */
static int code_flow(json_t *r, const struct check_diag *g)
{
	json_t *locs = json_array(), *loc;

	if (!locs ||
	    json_object_set_new(
		    r, "codeFlows",
		    json_pack("[{s:o,s:[{s:o}]}]", "message",
			      message(g->frames_of_init ? "the stack of the closure's init"
							: "the stack of the blamed call site"),
			      "threadFlows", "locations", locs)))
		return -1;
	for (unsigned i = g->nframes; i-- > 0;) {
		if (location(&g->frames[i], g->frames[i].func, &loc))
			return -1;
		if (!loc && !(loc = json_object()))
			return -1;
		if (append(locs, json_pack("{s:o}", "location", loc)))
			return -1;
	}
	return 0;
}

/* One diagnostic as a result; NULL when it cannot be built (out of memory). */
static json_t *result(const struct check_diag *g)
{
	/* properties: the first closure's id and its verdict word, as report and explain say */
	json_t *r =
		json_pack("{s:s,s:s,s:o,s:[],s:[],s:I,s:{s:s,s:s}}", "ruleId", rule_ids[g->rule],
			  "level", "error", "message", message(g->message), "locations",
			  "relatedLocations", "occurrenceCount", (json_int_t)g->count, "properties",
			  "closure", g->id, "verdict", g->verdict);
	json_t *loc;

	if (!r || location(&g->at, NULL, &loc) ||
	    (loc && append(json_object_get(r, "locations"), loc)))
		goto fail;
	for (unsigned k = 0; k < g->nnotes; k++)
		if (location(&g->notes[k].at, g->notes[k].text, &loc) ||
		    (loc && append(json_object_get(r, "relatedLocations"), loc)))
			goto fail;
	if (g->nframes && code_flow(r, g))
		goto fail;
	if (g->suppressed) {
		char why[4200];

		snprintf(why, sizeof(why), "%s:%lu", g->suppressed->file, g->suppressed->file_line);
		if (json_object_set_new(r, "suppressions",
					json_pack("[{s:s,s:o}]", "kind", "external",
						  "justification", json_text(why))))
			goto fail;
	}
	return r;
fail:
	json_decref(r);
	return NULL;
}

int check_sarif_write(const struct check_diags *d, FILE *out, const char *version,
		      struct trace_error *err)
{
	json_t *rules = json_array(), *results = json_array(), *log;
	int failed;

	for (int i = 0; i < CHECK_NR_RULES; i++)
		if (!rules || append(rules, json_pack("{s:s,s:o,s:{s:s}}", "id", rule_ids[i],
						      "shortDescription", message(rule_texts[i]),
						      "defaultConfiguration", "level", "error")))
			goto out_of_memory;
	/* Every diagnostic is a result, or nothing is written: a log that lacks one would pass
	 * for a run with fewer errors. */
	for (size_t i = 0; i < d->n; i++)
		if (!results || append(results, result(&d->v[i])))
			goto out_of_memory;
	log = json_pack("{s:s,s:s,s:[{s:{s:{s:s,s:s,s:o}},s:o}]}", "version", "2.1.0", "$schema",
			SARIF_SCHEMA, "runs", "tool", "driver", "name", "closuretrace", "version",
			version, "rules", rules, "results", results);
	if (!log)
		return trace_error_set(err, "cannot write the SARIF log: out of memory");
	/* Every string as every output writes it (json_value.h): the text the diagnostics show. */
	failed = json_value_write(out, log, 2, 0);
	if (failed)
		trace_error_set(err, "cannot write the SARIF log: %s", strerror(errno));
	json_decref(log);
	return failed ? -1 : 0;
out_of_memory:
	json_decref(rules);
	json_decref(results);
	return trace_error_set(err, "cannot write the SARIF log: out of memory");
}
