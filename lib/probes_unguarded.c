/*
 * The get and put probes the library fires itself. get and put also fire from closure.h's inline
 * fast paths, inside the user's object, where no semaphore can guard them; and a probe name must
 * be guarded at every site or at none (bpftrace 0.17 counts only one kind). So these two are fired
 * from this file, which has no semaphores, while closure.c guards all the others.
 */
#include "probes.h"
#include "internal.h"

void probe_get(struct closure *cl, uint32_t r, uintptr_t ip)
{
	(void)cl, (void)r, (void)ip;
	probe_op1(get, cl, r, ip, 0);
}

void probe_put(struct closure *cl, uint32_t r, uintptr_t ip)
{
	(void)cl, (void)r, (void)ip;
	probe_op(put, cl, r, ip);
}
