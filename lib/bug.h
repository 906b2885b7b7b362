/*
 * The rules libclosure enforces, broken (private): each ends in one line on stderr and abort()
 * (lib/bug.c), as the kernel BUG()s. The call site, ip, is the caller's (probes.h's CALLER_IP).
 */
#ifndef CLOSURE_LIB_BUG_H
#define CLOSURE_LIB_BUG_H

#include <stdint.h>
#include <stdnoreturn.h>

#include "closure.h"
#include "closure_probes.h"

#pragma GCC visibility push(hidden)

/* Broken rules: the code is the bug probe's argument (closure_probes.h, docs/probes.md). */
enum closure_bug {
#define CLOSURE_BUG_ENUM(name, code, trace_name, meaning) CLOSURE_BUG_##name = code,
	CLOSURE_BUG_LIST(CLOSURE_BUG_ENUM)
#undef CLOSURE_BUG_ENUM
};

/* One line naming the closure, the operation and the call site; fires the bug probe; aborts. */
noreturn void closure_bug(struct closure *cl, enum closure_bug bug, const char *op,
			  uint32_t remaining, uintptr_t ip, const char *detail);

/* The bug line for a workqueue itself (destroyed twice): no closure, so no count. */
noreturn void workqueue_bug(struct workqueue *wq, const char *op, uintptr_t ip, const char *detail);

/* Aborts (bug not_running) unless cl holds its running reference: op's rule at ip. */
void closure_require_running(struct closure *cl, const char *op, uintptr_t ip);

/* closure_not_alive() at the call site ip (op: the operation), from the library's own checks. */
noreturn void closure_not_alive_at(struct closure *cl, uint32_t remaining, const char *op,
				   uintptr_t ip);

/* The count's rules, checked on the value about to be published (lib/closure.c, sub_value). */
static inline __attribute__((always_inline)) void
closure_check_value(struct closure *cl, uint32_t old, uint32_t now, const char *name, uintptr_t ip)
{
	/*
	 * More references taken off than the count holds (the low bits of what was subtracted are
	 * references; flags are above them): an underflow, however far it borrows into the flags.
	 */
	if (((old - now) & CLOSURE_REMAINING_MASK) > (old & CLOSURE_REMAINING_MASK) ||
	    ((now & CLOSURE_GUARD_MASK) && (now & (CLOSURE_DESTRUCTOR >> 1))))
		closure_bug(cl, CLOSURE_BUG_UNDERFLOW, name, old, ip, "count would go below zero");
	if (now & CLOSURE_GUARD_MASK)
		closure_bug(cl, CLOSURE_BUG_BAD_FLAGS, name, old, ip,
			    "a flag was set twice or cleared while not set");
	if (!(now & CLOSURE_REMAINING_MASK) &&
	    (now & ~(CLOSURE_DESTRUCTOR | CLOSURE_SLEEPING | CLOSURE_REMAINING_MASK))) {
		closure_bug(cl, CLOSURE_BUG_BAD_FLAGS, name, old, ip,
			    now & CLOSURE_RUNNING
				    ? "count reached zero while running (give up the running "
				      "reference with continue_at, closure_return or closure_sync)"
				    : "count reached zero while on a waitlist");
	}
}

#pragma GCC visibility pop

#endif
