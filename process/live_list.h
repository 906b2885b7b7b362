/*
 * The closures alive in a running process, copied out of libclosure's live registry (every build
 * since version 4 of lib/include/closure_debug.h), or its live list (CLOSURE_DEBUG builds of
 * versions 1-3). The process is never stopped. A registry's chunks are walked to a bound (a cycle,
 * a chunk that is none), each closure read where its slot says, in groups of a system call each,
 * and kept only when its magic is alive and it names that slot. A list is walked while it
 * changes, each node checked against its neighbour and its list, the walk bounded whatever the
 * memory says, and taken again once when a list changed under it. Oldest first (init time).
 */
#ifndef CLOSURETRACE_LIVE_LIST_H
#define CLOSURETRACE_LIVE_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/include/closure_debug.h"
#include "hashmap.h"
#include "live_closure.h"
#include "objects.h"

enum live_status {
	LIVE_OK,
	LIVE_NO_PROCESS,     /* no such process */
	LIVE_NOT_PERMITTED,  /* its maps or memory may not be read */
	LIVE_NO_LIBCLOSURE,  /* no object of it carries the descriptor (or an older libclosure) */
	LIVE_NO_LIST,	     /* its libclosure (before version 4) was built without CLOSURE_DEBUG */
	LIVE_NEWER,	     /* the descriptor's version is newer than this reader */
	LIVE_BAD_DESCRIPTOR, /* the descriptor does not make sense (see message) */
};

struct live_list {
	struct live_closure *v; /* owned, oldest first (the lists merged by init time) */
	size_t n;
	struct closure_debug_info info;
	const char *library; /* the object holding the descriptor (a path of objects) */
	bool consistent;     /* no list changed while the lists were read */
	bool complete;	     /* the walk reached the end of the list */
	bool too_long;	     /* not complete: longer than closuretrace reads (1 << 20 closures) */
	unsigned walks;	     /* 1, or 2 when the first walk met a change */
};

/*
 * Finds libclosure in pid through objs (maps read here) and copies its live list into *out.
 * Returns LIVE_OK (out filled; free with live_list_free), or why not.
 */
enum live_status live_list_read(pid_t pid, struct objects *objs, struct live_list *out);
/* The same, reading about max closures at most (rounded up to a power of two from 1024):
 * beyond, the list is not complete (too_long). */
enum live_status live_list_read_max(pid_t pid, struct objects *objs, struct live_list *out,
				    size_t max);
void live_list_free(struct live_list *l);

/* Why a read failed, in a few words (for a warning: a status of LIVE_OK names nothing). */
const char *live_status_text(enum live_status st);

/* Parents read beside the list at most (live_list_add_parents). */
#define LIVE_PARENTS_MAX 4096

/*
 * Adds to l the closures its closures name as parents that it does not hold (a stack closure
 * outside closure_sync is not listed), read from pid's memory and validated as listed nodes are,
 * and their parents in turn: at most LIVE_PARENTS_MAX. Returns how many were added. at (given
 * empty, value size sizeof(size_t)) is left holding each closure of l by address: its index.
 */
size_t live_list_add_parents(pid_t pid, struct live_list *l, struct hashmap *at);

/* Orders l->v by init time, then seq (which the caller may have set), then as it was. */
void live_list_sort(struct live_list *l);

/* The count and the flags of remaining, with the masks of the descriptor. */
static inline uint32_t live_count(const struct live_list *l, const struct live_closure *c)
{
	return c->remaining & l->info.remaining_mask;
}

#endif
