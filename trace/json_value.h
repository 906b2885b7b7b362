/*
 * A jansson value written as json_dumpf writes it (JSON_INDENT(indent), or JSON_COMPACT for 0;
 * reals with 6 significant digits, JSON_REAL_PRECISION(6)), every string and key by the one
 * writer of JSON strings as it is shown (json_string.h, JSON_SHOWN). So a document built with
 * jansson holds any bytes (json_text) and is written as every output writes names.
 */
#ifndef CLOSURETRACE_JSON_VALUE_H
#define CLOSURETRACE_JSON_VALUE_H

#include <jansson.h>
#include <stdio.h>

/* v to f; margin: spaces after every newline written (the value sits that deep in a document
 * written by hand). Returns 0, or -1 when f has an error. */
int json_value_write(FILE *f, const json_t *v, int indent, int margin);

/* A jansson string of any bytes (NULL: ""), not checked for UTF-8: json_value_write shows it.
 * NULL out of memory. */
json_t *json_text(const char *s);

#endif
