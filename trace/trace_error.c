/* Errors returned, not printed (trace_error.h). */
#include "trace_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "trace_text.h"

/*
 * The message into err->text after its prefix, shown as every name is (trace_text.h): a path or a
 * key it quotes may come from anyone, and the text is printed as it is.
 */
static void put_message(struct trace_error *err, const char *prefix, const char *fmt, va_list ap)
{
	char raw[sizeof(err->text)];
	size_t n;

	text_visible(err->text, sizeof(err->text), prefix);
	n = strlen(err->text);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	text_visible(err->text + n, sizeof(err->text) - n, raw);
}

int trace_error_at(struct trace_error *err, const char *file, unsigned long line, const char *fmt,
		   ...)
{
	char prefix[sizeof(err->text)];
	va_list ap;

	if (line)
		snprintf(prefix, sizeof(prefix), "%s:%lu: error: ", file, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: error: ", file);
	err->placed = true;
	err->line = line;
	va_start(ap, fmt);
	put_message(err, prefix, fmt, ap);
	va_end(ap);
	return -1;
}

int trace_error_set(struct trace_error *err, const char *fmt, ...)
{
	va_list ap;

	err->placed = false;
	err->line = 0;
	va_start(ap, fmt);
	put_message(err, "", fmt, ap);
	va_end(ap);
	return -1;
}
