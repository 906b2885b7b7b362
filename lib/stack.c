/*
 * Closures on the stack: closure_init_stack(), and a CLASS(closure_stack) closure, a value until
 * its first operation through the library announces it (stack.h). Neither is listed in the live
 * registry but while it sleeps in closure_sync (lib/debug.c). Their probes are guarded, as
 * closure.c's (lib/probes.h).
 */
#define _SDT_HAS_SEMAPHORES 1

#include <string.h>

#include "probes.h" /* first: it declares the semaphores */
#include "debug.h"
#include "sleep.h"
#include "stack.h"

/* Where, when and in which thread it began: what `closuretrace ps` shows of it. */
static inline void stamp_init(struct closure *cl, uintptr_t ip)
{
	cl->ip = cl->init_ip = ip;
	cl->init_ns = registry_now_ns();
	closure_debug_stamp(&cl->ip_ns);
	cl->init_tid = registry_tid();
}

PROBE_BODY void init_stack_body(struct closure *cl, uintptr_t ip, const bool traced)
{
	/* A listed closure cleared here would break the live list. */
	closure_debug_check_init(cl, "closure_init_stack", ip);
	closure_side_stack_prepare();
	memset(cl, 0, sizeof(*cl));
	stamp_init(cl, ip);
	cl->magic = CLOSURE_MAGIC_STACK;
	if (traced)
		cl->left_out = closure_batch_left_out(true, 0); /* a stack closure is a root */
	/* Before the count is published, as in closure_init: no event precedes the init. */
	probe_op2_in(traced, init, cl, CLOSURE_REMAINING_INITIALIZER, cl->ip, 0, 1);
	/* Release, always: closure_init_stack_release() is the same function. */
	__atomic_store_n(CLOSURE_WORD(cl), CLOSURE_REMAINING_INITIALIZER, __ATOMIC_RELEASE);
}

PROBE_COLD void init_stack_traced(struct closure *cl, uintptr_t ip)
{
	init_stack_body(cl, ip, true);
}

void closure_init_stack(struct closure *cl)
{
	if (PROBE_OP_TRACED(init))
		init_stack_traced(cl, CALLER_IP());
	else
		init_stack_body(cl, CALLER_IP(), false);
}

/* closure.h says why it is the same function. */
extern __typeof__(closure_init_stack) closure_init_stack_release
	__attribute__((alias("closure_init_stack")));

__attribute__((cold)) void closure_announce_stack(struct closure *cl, uintptr_t ip, uint32_t before)
{
	stamp_init(cl, ip);
	cl->left_out = closure_batch_left_out(true, 0); /* a stack closure is a root */
	if ((before & CLOSURE_REMAINING_MASK) == 1)
		probe_op2(init, cl, CLOSURE_REMAINING_INITIALIZER, ip, 0, 1);
}

/*
 * closure.h's inline get while batching is on: out of line, so that the return address is the
 * user's call site (the inline put's are lib/probes_unguarded.c's). A stack closure's first
 * record is its init.
 */
void closure_batch_get(struct closure *cl, uint32_t r, int not_zero)
{
	closure_stack_first_use(cl, CALLER_IP(), r - 1);
	closure_batch_append(CLOSURE_BATCH_OP_get, (uintptr_t)cl, r, CALLER_IP(),
			     (uint64_t)not_zero, 0, 0);
}
