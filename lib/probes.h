/* The probes libclosure fires from inside the library (private). The inline fast paths in
 * closure.h fire theirs directly. Arguments follow docs/probes.md: cl, count, flags, ip, extra. */
#ifndef CLOSURE_LIB_PROBES_H
#define CLOSURE_LIB_PROBES_H

#include "closure.h"

#define PROBE_COUNT(r) ((r) & CLOSURE_REMAINING_MASK)
#define PROBE_FLAGS(r) ((r) & ~CLOSURE_REMAINING_MASK)

/* The common four arguments from a value of remaining. */
#define probe_op(name, cl, r, ip) CLOSURE_PROBE4(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip)
#define probe_op1(name, cl, r, ip, a)                                                              \
	CLOSURE_PROBE5(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a)
#define probe_op2(name, cl, r, ip, a, b)                                                           \
	CLOSURE_PROBE6(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b)
#define probe_op3(name, cl, r, ip, a, b, c)                                                        \
	CLOSURE_PROBE7(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b, c)

#endif
