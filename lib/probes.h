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
#include "batch.h"   /* each probe also appends a batch record while batching is on */

/*
 * Whether an operation is traced at all (batched, or its probe armed): in a file with semaphores,
 * both are loaded and tested in one branch, so that untraced an operation pays one predictable
 * branch per probe. The branch is marked very unlikely, so that the traced work (a call into
 * lib/batch.c, the probe's arguments) is laid out off the untraced path. (Values the operation
 * needs after that call may still cost it callee-saved registers: closure_sync's untraced path
 * avoids even that by calling its traced part last.)
 */
#if CLOSURE_PROBES && defined(_SDT_HAS_SEMAPHORES) && _SDT_HAS_SEMAPHORES
#define PROBE_WORD(name)       (*(volatile unsigned short *)&closure_##name##_semaphore)
#define PROBE_TRACED_IF(words) __builtin_expect_with_probability((words) != 0, 0, 0.0001)
#define PROBE_TRACED(name)     PROBE_TRACED_IF(CLOSURE_BATCH_WORD() | PROBE_WORD(name))
/* Either of two probes (one branch for both). */
#define PROBE_TRACED2(a, b) PROBE_TRACED_IF(CLOSURE_BATCH_WORD() | PROBE_WORD(a) | PROBE_WORD(b))
#else
#define PROBE_TRACED(name)  1
#define PROBE_TRACED2(a, b) 1
#endif

/*
 * The common four arguments from a value of remaining, then the extras. While batching is on
 * (lib/batch.c) the operation is also appended as a record; the probe still fires for any other
 * tracer that armed it.
 */
#define probe_op_(name, cl, r, ip, a, b, c, probe)                                                 \
	do {                                                                                       \
		if (PROBE_TRACED(name)) {                                                          \
			CLOSURE_BATCH(name, cl, r, ip, a, b, c);                                   \
			PROBE_IF_ARMED(name, probe);                                               \
		}                                                                                  \
	} while (0)
#define probe_op(name, cl, r, ip)                                                                  \
	probe_op_(name, cl, r, ip, 0, 0, 0,                                                        \
		  CLOSURE_PROBE4(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip))
#define probe_op1(name, cl, r, ip, a)                                                              \
	probe_op_(name, cl, r, ip, a, 0, 0,                                                        \
		  CLOSURE_PROBE5(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a))
#define probe_op2(name, cl, r, ip, a, b)                                                           \
	probe_op_(name, cl, r, ip, a, b, 0,                                                        \
		  CLOSURE_PROBE6(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b))
#define probe_op3(name, cl, r, ip, a, b, c)                                                        \
	probe_op_(name, cl, r, ip, a, b, c,                                                        \
		  CLOSURE_PROBE7(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b, c))

#endif
