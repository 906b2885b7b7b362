/* The probes libclosure fires from inside the library (private). The inline fast paths in
 * closure.h fire theirs directly. Arguments follow docs/probes.md: cl, count, flags, ip, extra. */
#ifndef CLOSURE_LIB_PROBES_H
#define CLOSURE_LIB_PROBES_H

#include "closure_config.h"
#include "closure_probes.h"

#define PROBE_COUNT(r) ((r)&CLOSURE_REMAINING_MASK)
#define PROBE_FLAGS(r) ((r) & ~CLOSURE_REMAINING_MASK)

/*
 * A file that defines _SDT_HAS_SEMAPHORES before its first include (closure.c) guards each probe
 * with its semaphore, which the kernel raises while a tracer has the probe armed: untraced, not
 * even the arguments are set up. sys/sdt.h then wants a semaphore for every probe in that file.
 */
#if CLOSURE_PROBES && defined(_SDT_HAS_SEMAPHORES) && _SDT_HAS_SEMAPHORES
#define PROBE_SEMAPHORE(name)                                                                      \
	unsigned short closure_##name##_semaphore                                                  \
		__attribute__((unused, section(".probes"), visibility("hidden")))
/* One for every probe of the contract; those fired elsewhere (get, put, bug) stay unused. */
#define PROBE_SEMAPHORE_OF(name, NAME, a4, a5, a6) PROBE_SEMAPHORE(name);
CLOSURE_PROBE_LIST(PROBE_SEMAPHORE_OF)
#undef PROBE_SEMAPHORE_OF
#define PROBE_ARMED(name)                                                                          \
	__builtin_expect(*(volatile unsigned short *)&closure_##name##_semaphore != 0, 0)
#else
#define PROBE_ARMED(name) 1
#endif

#define PROBE_IF_ARMED(name, probe)                                                                \
	do {                                                                                       \
		if (PROBE_ARMED(name))                                                             \
			probe;                                                                     \
	} while (0)

#include "closure.h" /* after the semaphores: its inline fast paths have probes too */

/* The common four arguments from a value of remaining, then the extras. */
#define probe_op(name, cl, r, ip)                                                                  \
	PROBE_IF_ARMED(name, CLOSURE_PROBE4(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip))
#define probe_op1(name, cl, r, ip, a)                                                              \
	PROBE_IF_ARMED(name, CLOSURE_PROBE5(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a))
#define probe_op2(name, cl, r, ip, a, b)                                                           \
	PROBE_IF_ARMED(name, CLOSURE_PROBE6(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b))
#define probe_op3(name, cl, r, ip, a, b, c)                                                        \
	PROBE_IF_ARMED(name, CLOSURE_PROBE7(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b, c))

#endif
