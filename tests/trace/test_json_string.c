/*
 * The one writer of JSON strings (trace/json_string.c, docs/trace-format.md "Strings and bytes
 * that are not UTF-8"): hostile bytes (controls, quotes, backslashes, C1 and bidi controls, bytes
 * that are not UTF-8: lone, overlong forms, surrogates encoded in UTF-8, past U+10FFFF, a cut
 * sequence, escape-like text) written exactly, in the trace's form (read back to the same bytes)
 * and in every output's (the text stderr shows); and a jansson document written by json_value.c
 * exactly as json_dumps writes it.
 *   test_json_string                 the checks
 *   test_json_string --trace FILE    a trace of the hostile name, by the trace writer, for
 *                                    json_strings.py to feed to every output
 */
#define _GNU_SOURCE /* open_memstream */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_string.h"
#include "json_value.h"
#include "trace_text.h"
#include "trace_writer.h"

/* The hostile name (json_strings.py's HOSTILE). */
static const char hostile[] = "q\"b\\s"			       /* quote, backslash */
			      "\x01\x1b[2J\x7f"		       /* C0, ESC, DEL */
			      "\xc2\x85"		       /* C1 as UTF-8 */
			      "\xe2\x80\xae"		       /* U+202E, a bidi control */
			      "\xe9"			       /* a lone byte */
			      "\xc0\xaf"		       /* '/' overlong in 2 bytes */
			      "\xe0\x80\xaf"		       /* ... in 3 */
			      "\xed\xa0\x80"		       /* U+D800 encoded */
			      "\xed\xb3\xa9"		       /* U+DCE9 encoded */
			      "\xf4\x90\x80\x80"	       /* past U+10FFFF */
			      "\xff"			       /* never UTF-8 */
			      "\xe2\x82"		       /* a cut sequence */
			      " caf\xc3\xa9 \xf0\x9f\x98\x80 " /* valid UTF-8 */
			      "\\udce9 \\u001b"		       /* escape-like text */
			      "\t\n_end";		       /* tab, newline */

/* The trace's form: the bytes, \udcXX for each that is not UTF-8. */
static const char want_bytes[] = "\"q\\\"b\\\\s"
				 "\\u0001\\u001b[2J\x7f"
				 "\xc2\x85"
				 "\xe2\x80\xae"
				 "\\udce9"
				 "\\udcc0\\udcaf"
				 "\\udce0\\udc80\\udcaf"
				 "\\udced\\udca0\\udc80"
				 "\\udced\\udcb3\\udca9"
				 "\\udcf4\\udc90\\udc80\\udc80"
				 "\\udcff"
				 "\\udce2\\udc82"
				 " caf\xc3\xa9 \xf0\x9f\x98\x80 "
				 "\\\\udce9 \\\\u001b"
				 "\\t\\n_end\"";

/* Every output's form: the text stderr shows, each escape's backslash escaped. */
static const char want_shown[] = "\"q\\\"b\\\\s"
				 "\\\\u0001\\\\u001b[2J\\\\u007f"
				 "\\\\u0085"
				 "\\\\u202e"
				 "\\\\udce9"
				 "\\\\udcc0\\\\udcaf"
				 "\\\\udce0\\\\udc80\\\\udcaf"
				 "\\\\udced\\\\udca0\\\\udc80"
				 "\\\\udced\\\\udcb3\\\\udca9"
				 "\\\\udcf4\\\\udc90\\\\udc80\\\\udc80"
				 "\\\\udcff"
				 "\\\\udce2\\\\udc82"
				 " caf\xc3\xa9 \xf0\x9f\x98\x80 "
				 "\\\\udce9 \\\\u001b"
				 "\\\\u0009\\\\u000a_end\"";

static int failures;

static void expect(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want)) {
		printf("FAIL %s:\n  got  %s\n  want %s\n", what, got, want);
		failures++;
	} else {
		printf("ok: %s\n", what);
	}
}

static void put_file(void *f, const char *s, size_t n)
{
	fwrite(s, 1, n, f);
}

/* The n bytes at s written in form how, in memory of its own (free it). */
static char *written(const char *s, size_t n, enum json_strings how)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		exit(2);
	json_string_write(put_file, f, s, n, how);
	fclose(f);
	return buf;
}

/* Both forms of the hostile name, exactly; the trace's read back to the same bytes. */
static void check_strings(void)
{
	char *bytes = written(hostile, strlen(hostile), JSON_BYTES);
	char *shown = written(hostile, strlen(hostile), JSON_SHOWN);
	size_t len = strlen(bytes);
	bool escaped;
	const char *close = trace_string_scan(bytes + 1, bytes + len, &escaped);

	expect("the trace's form of the hostile name", bytes, want_bytes);
	expect("every output's form of the hostile name", shown, want_shown);
	if (close != bytes + len - 1 ||
	    trace_string_decode(bytes + 1, len - 2) != strlen(hostile) ||
	    memcmp(bytes + 1, hostile, strlen(hostile))) {
		printf("FAIL the trace's form does not read back to the same bytes\n");
		failures++;
	} else {
		printf("ok: the trace's form reads back to the same bytes\n");
	}
	free(bytes);
	free(shown);
	/* Text shown already (a model's names) is written the same: only '"' and '\' escaped. */
	shown = written("a\\u001b\"", 8, JSON_SHOWN);
	expect("shown text shown again", shown, "\"a\\\\u001b\\\"\"");
	free(shown);
	/* A NUL byte, in both forms. */
	bytes = written("a\0b", 3, JSON_BYTES);
	shown = written("a\0b", 3, JSON_SHOWN);
	expect("a NUL byte, the trace's form", bytes, "\"a\\u0000b\"");
	expect("a NUL byte, every output's form", shown, "\"a\\\\u0000b\"");
	free(bytes);
	free(shown);
}

/* A document as json_dumps writes it with flags, and as json_value_write does. */
static void check_document(const char *what, json_t *doc, size_t flags, int indent, int margin)
{
	char *want = json_dumps(doc, flags), *got = NULL, *w;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&got, &len);

	if (!want || !f)
		exit(2);
	json_value_write(f, doc, indent, margin);
	fclose(f);
	/* margin: spaces after every newline of jansson's. */
	w = calloc(1, strlen(want) * (size_t)(margin + 1) + 1);
	for (const char *p = want; *p; p++) {
		w[n++] = *p;
		for (int i = 0; *p == '\n' && i < margin; i++)
			w[n++] = ' ';
	}
	expect(what, got, w);
	free(want);
	free(got);
	free(w);
}

static void check_documents(void)
{
	json_t *doc = json_pack("{s:[i,f,f,f,f,f,f,f,f],s:{},s:[],s:{s:s,s:b,s:b,s:n,s:[[]]},s:I}",
				"numbers", 1, 2.5, 1.0, 1e20, 1e-5, 123456789.0, 0.1, -3.0, 1e300,
				"empty", "none", "nested", "text", "x\"y\\z/\xc3\xa9", "yes", 1,
				"no", 0, "null", "deep", "big", (json_int_t)-9007199254740993LL);

	if (!doc)
		exit(2);
	check_document("a document, indented", doc, JSON_INDENT(2) | JSON_REAL_PRECISION(6), 2, 0);
	check_document("a document, indented in a margin", doc,
		       JSON_INDENT(2) | JSON_REAL_PRECISION(6), 2, 4);
	check_document("a document, compact", doc, JSON_COMPACT | JSON_REAL_PRECISION(6), 0, 0);
	json_decref(doc);
}

/* A trace of the hostile name by the trace writer: the program's path and a function's name, a
 * closure initialised there and never finished (a leak, for check and export). */
static int write_trace(const char *path)
{
	char exe[sizeof(hostile) + 8] = "/opt/";
	char *argv[] = {exe, (char *)hostile, NULL};
	struct sym_info si = {.func = (char *)hostile};
	struct trace_end end = {.reason = "exit", .exit_code = 0, .events = 1, .duration_ns = 100};
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return 2;
	}
	strcat(exe, hostile);
	trace_write_header(f, 901, exe, argv, 0);
	trace_write_sym(f, 0x401000, &si);
	fputs("{\"type\":\"event\",\"ts\":10,\"tid\":901,\"ev\":\"init\",\"cl\":\"0x7f0000001000\","
	      "\"remaining\":1,\"flags\":\"R\",\"ip\":\"0x401000\",\"parent\":\"0x0\"}\n",
	      f);
	trace_write_end(f, &end);
	return fclose(f) ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--trace"))
		return write_trace(argv[2]);
	check_strings();
	check_documents();
	if (failures)
		printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
