/*
 * One line of a trace (a flat JSON object) split into its fields, for the reader (trace_reader.c)
 * alone. Speed: jansson parses about 0.6 M lines/s here, too slow for big traces. The recorder
 * writes flat objects (strings, integers, booleans, the header's array of strings), so a small
 * strict parser reads those, and decodes the strings itself (trace_text.c: jansson refuses the
 * \udcXX escapes that carry bytes which are not UTF-8); a line it does not fully understand
 * (nested values, numbers with fractions) goes to jansson, which accepts it or gives the error.
 * The fast path accepts only valid JSON, so malformed input is caught either way.
 */
#ifndef CLOSURETRACE_TRACE_LINE_H
#define CLOSURETRACE_TRACE_LINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum value_kind { V_STR, V_INT, V_BOOL, V_NULL, V_OTHER };

/* A key and its value; strings point into the line or into a jansson value (not terminated). */
struct field {
	const char *key;
	size_t klen;
	enum value_kind kind;
	const char *s;
	size_t slen;
	long long i;
	bool kescaped, escaped; /* the fast path's strings: escapes still to decode */
	json_t *json; /* an array jansson read (the slow path), else NULL: the fast path's arrays
			 are V_OTHER with s, slen their text from '[' to ']' */
};

#define MAX_FIELDS 48 /* more than the keys any record has (known_keys) */

/* The fields of a flat object from p to end (the fast path): their number, or -1 when the line is
 * not such an object (then trace_line_slow decides). Strings are left escaped: */
int trace_line_fast(const char *p, const char *end, struct field *fields);
/* ... and decoded in place by this, once the line is known to be good. */
void trace_line_fast_decode(struct field *fields, int n);

/* The fields of any JSON line, by jansson (*root holds them: json_decref it after), the keys a
 * record may have only (an unknown field is ignored, as the format promises): their number, or
 * -2 with why the line is not a record in why. */
int trace_line_slow(const char *line, size_t len, struct field *fields, json_t **root, char *why,
		    size_t whylen);

/* p past white space (at most end). */
const char *trace_line_skip_ws(const char *p, const char *end);

#endif
