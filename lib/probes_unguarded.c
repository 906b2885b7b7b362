/*
 * The get and put probes the library fires itself. get and put also fire from closure.h's inline
 * fast paths, inside the user's object, where no semaphore can guard them; and a probe name must
 * be guarded at every site or at none (bpftrace 0.17 counts only one kind). So these two are fired
 * from this file, which has no semaphores, while closure.c guards all the others.
 */
#include "probes.h"

PROBE_BODY void get_body(struct closure *cl, uint32_t r, uintptr_t ip, const bool traced)
{
	(void)cl, (void)r, (void)ip;
	probe_op1_in(traced, get, cl, r, ip, 0);
}

PROBE_COLD void get_traced(struct closure *cl, uint32_t r, uintptr_t ip)
{
	get_body(cl, r, ip, true);
}

/* Traced here means batched: the probe itself fires either way (it has no semaphore). */
void probe_get(struct closure *cl, uint32_t r, uintptr_t ip)
{
	if (PROBE_OP_TRACED(get))
		get_traced(cl, r, ip);
	else
		get_body(cl, r, ip, false);
}

/* The put probe fires either way (it has no semaphore); the record when bts (lib/batch.h). */
void probe_put(struct closure *cl, uint32_t r, uintptr_t ip, uint64_t bts)
{
	(void)cl, (void)r, (void)ip;
	if (bts)
		closure_batch_append_at(bts, CLOSURE_BATCH_OP_put, (uintptr_t)cl, r, ip, 0, 0, 0);
	CLOSURE_PROBE4(put, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip);
}

_Static_assert(CLOSURE_BATCH_COUNT_MASK == CLOSURE_REMAINING_MASK, "lib/batch.h's mask");

/*
 * closure.h's inline put while batching is on: here, out of line, so that the return address is
 * the user's call site. (The inline get's, closure_batch_get, is closure.c's: it may announce a
 * stack closure, whose init probe is guarded there.)
 */
void closure_batch_put(struct closure *cl, uint32_t r)
{
	closure_batch_append(CLOSURE_BATCH_OP_put, (uintptr_t)cl, r, CALLER_IP(), 0, 0, 0);
}

uint64_t closure_batch_clock(void)
{
	return closure_batch_clock_in();
}

void closure_batch_put_at(struct closure *cl, uint32_t r, uint64_t ts)
{
	closure_batch_append_at(ts, CLOSURE_BATCH_OP_put, (uintptr_t)cl, r, CALLER_IP(), 0, 0, 0);
}

void closure_batch_unclock(void)
{
	closure_batch_unclock_in();
}
