/*
 * Strings in a trace (docs/trace-format.md, "Strings"): JSON strings that carry any byte string.
 * Valid UTF-8 is written as it is; a byte that is not part of valid UTF-8 is written as the
 * escape \udcXX (XX the byte, 80 to ff: a lone low surrogate, as Python's "surrogateescape"), and
 * read back to the same byte.
 */
#ifndef CLOSURETRACE_TRACE_TEXT_H
#define CLOSURETRACE_TRACE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The length of the valid UTF-8 sequence at p (1 for ASCII), or 0 when p[0] starts none. */
size_t trace_utf8_seq(const char *p, const char *end);

/*
 * A JSON string's body from p (just after its opening quote): returns where its closing quote is,
 * or NULL when it is not valid JSON or holds an escape of a surrogate that stands for no byte.
 * *escaped: whether it holds escapes (trace_string_decode then turns them into bytes).
 */
const char *trace_string_scan(const char *p, const char *end, bool *escaped);

/* Decode a body that trace_string_scan accepted, in place; returns its length in bytes. */
size_t trace_string_decode(char *s, size_t len);

/*
 * Makes a string from the traced process (a symbol, a path) safe to print on a terminal, in
 * place: each control character (C0, DEL, and C1 written as UTF-8, U+0080..U+009F, which some
 * terminals obey as escape sequences) becomes '?'. Every presentation prints names through
 * this. Returns s (NULL stays NULL).
 */
char *text_visible(char *s);

#endif
