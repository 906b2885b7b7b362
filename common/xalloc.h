/* Allocation for viz/: one definition used by the model and every renderer. */
#ifndef CLOSURETRACE_VIZ_XALLOC_H
#define CLOSURETRACE_VIZ_XALLOC_H

#include <stddef.h>

/*
 * calloc and realloc that never return NULL. viz/ is a library and never exits; without memory
 * it cannot return a consistent model either, so it says so and aborts (as glib's g_malloc does),
 * which leaves a core that shows who asked.
 */
void *viz_xcalloc(size_t n, size_t size);
/* The same end, for memory another allocator could not find. */
_Noreturn void viz_oom(void);
void *viz_xrealloc(void *p, size_t size);

#endif
