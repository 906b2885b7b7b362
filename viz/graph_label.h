/*
 * A Graphviz label being built (an escString): text from the trace is shown as every
 * presentation shows names (trace_text.h), then its backslashes are doubled, since one would
 * start an escape (\N, \G, \l) in a label; lines end with "\n".
 */
#ifndef CLOSURETRACE_GRAPH_LABEL_H
#define CLOSURETRACE_GRAPH_LABEL_H

#include <stdbool.h>
#include <stddef.h>

struct graph_label {
	char *text; /* NUL-terminated once anything was put (NULL before) */
	size_t len, cap;
	bool oom; /* a put found no memory: the label is cut there */
};

/* Empty again (the memory is kept). */
void label_reset(struct graph_label *l);
/* Text from the trace or the tool, as said above. */
void label_text(struct graph_label *l, const char *s);
__attribute__((format(printf, 2, 3))) void label_printf(struct graph_label *l, const char *fmt,
							...);
/* A line break. */
void label_newline(struct graph_label *l);
void label_free(struct graph_label *l);

#endif
