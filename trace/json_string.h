/*
 * The one writer of JSON strings (docs/trace-format.md, "Strings and bytes that are not UTF-8").
 * Every string closuretrace writes in JSON goes through json_string_write, in one of two forms:
 *
 * JSON_BYTES, the trace: the string is the bytes themselves. Valid UTF-8 is written as it is, '"'
 * and '\' as \" and \\, newline and tab as \n and \t, the other C0 controls as \u00XX, and each
 * byte that is not part of valid UTF-8 as the escape \udcXX (XX the byte: a lone low surrogate,
 * as Python's "surrogateescape"), which the reader (trace_text.c) turns back into the byte.
 *
 * JSON_SHOWN, every output made from a trace (report --json, timeline, check's SARIF, export's
 * rows and so ClickHouse and fleet, ps --json): the string is the text as every name is shown
 * (trace_text.h, text_visible): a byte that is not UTF-8 is the six characters \udcXX and a
 * character a terminal obeys the six characters \uXXXX, written in JSON as "\\udcXX" and
 * "\\u001b", the text report and check print. Names in the model are shown already; showing is
 * idempotent, so a string shown twice is the same.
 *
 * Both are valid UTF-8 JSON for any bytes (ClickHouse's JSONEachRow included). UTF-8 is checked
 * by trace_utf8_seq (trace_text.h), the only check of it.
 */
#ifndef CLOSURETRACE_JSON_STRING_H
#define CLOSURETRACE_JSON_STRING_H

#include <stddef.h>
#include <stdio.h>

enum json_strings { JSON_BYTES, JSON_SHOWN };

/* Where the JSON text goes: n bytes at s appended to out. */
typedef void json_put_fn(void *out, const char *s, size_t n);

/* The n bytes at s (NUL bytes too) as a JSON string, quotes included. */
void json_string_write(json_put_fn *put, void *out, const char *s, size_t n, enum json_strings how);

/* The same for the string s (NULL: "") to f. */
void json_string_fputs(FILE *f, const char *s, enum json_strings how);

#endif
