/* Closures on the stack (private; lib/stack.c): closure_init_stack's and CLASS(closure_stack)'s. */
#ifndef CLOSURE_LIB_STACK_H
#define CLOSURE_LIB_STACK_H

#include <stdint.h>

#include "closure.h"

#pragma GCC visibility push(hidden)

/*
 * A CLASS(closure_stack) closure's first traced operation (closure.h), before: the value of
 * remaining before the operation. Fires its init, as a stack closure initialised at ip, where it
 * now is (before that it was a value that may have moved), when only its running reference was
 * there: references taken before out of the library's sight (an inline get traced per operation,
 * an open-coded wait) would come after its init in the trace, so then it is marked seen and
 * traced without one, as a closure created before recording.
 */
void closure_announce_stack(struct closure *cl, uintptr_t ip, uint32_t before);
static inline void closure_stack_first_use(struct closure *cl, uintptr_t ip, uint32_t before)
{
	if (__builtin_expect(!cl->init_ip, 0) && cl->magic == CLOSURE_MAGIC_STACK)
		closure_announce_stack(cl, ip, before);
}

#pragma GCC visibility pop

#endif
