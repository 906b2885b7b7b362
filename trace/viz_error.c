/* Errors returned, not printed (viz_error.h). */
#include "viz_error.h"

#include <stdarg.h>
#include <stdio.h>

int viz_error_at(struct viz_error *err, const char *file, unsigned long line, const char *fmt, ...)
{
	va_list ap;
	int n = line ? snprintf(err->text, sizeof(err->text), "%s:%lu: error: ", file, line)
		     : snprintf(err->text, sizeof(err->text), "%s: error: ", file);

	err->placed = true;
	err->line = line;
	if (n < 0 || (size_t)n >= sizeof(err->text))
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->text + n, sizeof(err->text) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

int viz_error_set(struct viz_error *err, const char *fmt, ...)
{
	va_list ap;

	err->placed = false;
	err->line = 0;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return -1;
}
