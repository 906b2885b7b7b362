/*
 * The live closures of `closuretrace ps` as a tree (each closure under its parent when the
 * parent is listed too), with their addresses resolved, printed as text or JSON.
 */
#ifndef CLOSURETRACE_PS_TREE_H
#define CLOSURETRACE_PS_TREE_H

#include <stdio.h>
#include <sys/types.h>

#include "live_list.h"
#include "symbols.h"

struct ps_view {
	pid_t pid;
	const char *exe; /* the process's executable, as /proc/PID/exe names it */
	const struct live_list *list;
	struct symbols *syms; /* over the process's objects */
	uint64_t now_ns;      /* CLOCK_MONOTONIC when the list was read: ages count to it */
};

/* The tree as text: one line per closure (identical leaf siblings fold), wait lines below. */
void ps_print_text(FILE *out, const struct ps_view *v);

/* The tree as one JSON document (docs/closuretrace-ps.1 lists the fields). 0, or -1. */
int ps_print_json(FILE *out, const struct ps_view *v);

#endif
