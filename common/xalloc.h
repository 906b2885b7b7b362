/* Allocation for the tool's libraries and command: one definition of running out of memory. */
#ifndef CLOSURETRACE_XALLOC_H
#define CLOSURETRACE_XALLOC_H

#include <stddef.h>

/*
 * calloc and realloc that never return NULL. viz/ and the hash map are libraries and never exit;
 * without memory they cannot return a consistent model either, so this says so and aborts (as
 * glib's g_malloc does), which leaves a core that shows who asked; under the tool's memory
 * limit, mem_limit_exceeded()'s error instead.
 */
void *xcalloc(size_t n, size_t size);
/* The same end, for memory another allocator could not find. */
_Noreturn void xalloc_oom(void);
void *xrealloc(void *p, size_t size);

#endif
