/* A Graphviz label being built: see graph_label.h. */
#include "graph_label.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace_text.h"

/* A line of a label at most, before it is shown (the shown form may be longer). */
#define LINE_MAX_BYTES 1024

static bool grow(struct graph_label *l, size_t more)
{
	char *bigger;

	if (l->len + more + 1 <= l->cap)
		return true;
	bigger = realloc(l->text, (l->len + more + 1) * 2);
	if (!bigger) {
		l->oom = true;
		return false;
	}
	l->text = bigger;
	l->cap = (l->len + more + 1) * 2;
	return true;
}

void label_text(struct graph_label *l, const char *s)
{
	const char *end = s + strlen(s);

	while (s < end) {
		char esc[TEXT_ESCAPE_MAX + 1];
		const char *shown;
		size_t len;

		s += text_visible_char(s, end, esc, &shown, &len);
		if (!grow(l, 2 * len))
			return;
		for (size_t i = 0; i < len; i++) {
			if (shown[i] == '\\')
				l->text[l->len++] = '\\';
			l->text[l->len++] = shown[i];
		}
	}
	if (grow(l, 0))
		l->text[l->len] = 0;
}

void label_printf(struct graph_label *l, const char *fmt, ...)
{
	char buf[LINE_MAX_BYTES];
	va_list ap;

	va_start(ap, fmt);
	text_vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	label_text(l, buf);
}

void label_newline(struct graph_label *l)
{
	if (!grow(l, 2))
		return;
	l->text[l->len++] = '\\';
	l->text[l->len++] = 'n';
	l->text[l->len] = 0;
}

void label_reset(struct graph_label *l)
{
	l->len = 0;
	if (grow(l, 1))
		l->text[0] = 0;
}

void label_free(struct graph_label *l)
{
	free(l->text);
	*l = (struct graph_label){0};
}
