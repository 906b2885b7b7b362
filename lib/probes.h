/* The probes libclosure fires from inside the library (private). The inline fast paths in
 * closure.h fire theirs directly. Arguments follow docs/probes.md: cl, count, flags, ip, extra. */
#ifndef CLOSURE_LIB_PROBES_H
#define CLOSURE_LIB_PROBES_H

#include "closure_config.h"
#include "closure_probes.h"

#define PROBE_COUNT(r) ((r)&CLOSURE_REMAINING_MASK)
#define PROBE_FLAGS(r) ((r) & ~CLOSURE_REMAINING_MASK)

/*
 * A file that defines _SDT_HAS_SEMAPHORES before its first include (closure.c, stack.c) guards
 * each probe with its semaphore, which the kernel raises while a tracer has the probe armed:
 * untraced, not even the arguments are set up. sys/sdt.h then wants a semaphore for every probe
 * in that file: one for every probe of the contract, defined once (lib/probes.c); those fired
 * unguarded (get, put, bug) stay unused.
 */
#if CLOSURE_PROBES
#define PROBE_SEMAPHORE(name)                                                                      \
	unsigned short closure_##name##_semaphore                                                  \
		__attribute__((unused, section(".probes"), visibility("hidden")))
#define PROBE_SEMAPHORE_OF(name, NAME, a4, a5, a6) extern PROBE_SEMAPHORE(name);
CLOSURE_PROBE_LIST(PROBE_SEMAPHORE_OF)
#undef PROBE_SEMAPHORE_OF
#endif
#if CLOSURE_PROBES && defined(_SDT_HAS_SEMAPHORES) && _SDT_HAS_SEMAPHORES
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

/* The call site as a return address (docs/probes.md: arg3); tracers resolve ip - 1. */
#define CALLER_IP() ((uintptr_t)__builtin_return_address(0))

#pragma GCC visibility push(hidden)
/* The get and put probes, fired unguarded (lib/probes_unguarded.c says why). */
void probe_get(struct closure *cl, uint32_t r, uintptr_t ip);
/* bts: the batch record's time, taken before the put (lib/batch.h), or 0 for none. */
void probe_put(struct closure *cl, uint32_t r, uintptr_t ip, uint64_t bts);
#pragma GCC visibility pop

/*
 * Whether an operation is traced at all (batched, or one of its probes armed): the batch word and
 * the probes' semaphores, loaded and tested in one branch, marked very unlikely. In a file without
 * semaphores (probes_unguarded.c, lib/bug.c, every file built with CLOSURE_PROBES=0) a probe has
 * no semaphore: PROBE_TRACED(name) is then always true (an unguarded probe always fires), while
 * PROBE_TRACED_IF(PROBE_WORD(name)) is the batch word alone (an operation split as below has only
 * its batch records to make: closure.c without probes).
 *
 * The batch word is read as volatile (lib/batch.h), the semaphores plainly, so that the compiler
 * folds each into an `or` from memory: the test costs what the batch word's alone would (a load,
 * an or per semaphore, a branch), not a load and a register per word. Each test stands at the
 * entry of an operation, which it decides as a whole; a tracer that attaches meanwhile sees the
 * next operation, as with any USDT semaphore.
 */
#if CLOSURE_PROBES && defined(_SDT_HAS_SEMAPHORES) && _SDT_HAS_SEMAPHORES
#define PROBE_GUARDED	   1
#define PROBE_WORD(name)   closure_##name##_semaphore
#define PROBE_TRACED(name) PROBE_TRACED_IF(PROBE_WORD(name))
#else
#define PROBE_GUARDED	   0
#define PROBE_WORD(name)   0
#define PROBE_TRACED(name) 1
#endif
#define PROBE_TRACED_IF(words)                                                                     \
	__builtin_expect_with_probability((CLOSURE_BATCH_WORD() | (words)) != 0, 0, 0.0001)
/* The entry test of an operation that fires one probe (see below). */
#define PROBE_OP_TRACED(name) PROBE_TRACED_IF(PROBE_WORD(name))

/*
 * An operation in two copies, compiled from one body: an always_inline function (PROBE_BODY)
 * that takes a compile-time constant `traced` and fires its probes with probe_op*_in(traced, ...).
 * The entry point tests PROBE_TRACED_IF(the words of every probe the body fires) once and, when
 * traced, tail-calls the PROBE_COLD copy built with traced = true, passing the call site; the
 * untraced copy then holds no probe code at all: no second load of a semaphore, no probe
 * arguments or call into lib/batch.c keeping values alive, so no extra saved registers or frame.
 */
#define PROBE_BODY static inline __attribute__((always_inline))
/* cold: without it GCC splits the untraced copy in two (a partial inline) and stops there. */
#define PROBE_COLD static __attribute__((noinline, cold))

/*
 * The common four arguments from a value of remaining, then the extras, when traced. While
 * batching is on (lib/batch.c) the operation is also appended as a record; the probe still fires
 * for any other tracer that armed it. probe_op*(name, ...) decide themselves (PROBE_TRACED);
 * probe_op*_in(traced, name, ...) are for a PROBE_BODY. An unguarded probe (a file without
 * semaphores) fires in both copies: no tracer that attaches to it raises anything.
 */
#define probe_op_(traced, name, cl, r, ip, a, b, c, probe)                                         \
	probe_op_rec_(traced, (traced) && CLOSURE_RECORDED(cl), name, cl, r, ip, a, b, c, probe)
/* rec: whether cl's tree is recorded (closure.h's CLOSURE_RECORDED), read while cl was surely
 * alive: an operation that may give up its last reference reads it first (SUB_AND_SETTLE). */
#define probe_op_rec_(traced, rec, name, cl, r, ip, a, b, c, probe)                                \
	do {                                                                                       \
		if ((traced) && (rec))                                                             \
			CLOSURE_BATCH(name, cl, r, ip, a, b, c);                                   \
		if ((traced) || !PROBE_GUARDED)                                                    \
			PROBE_IF_ARMED(name, probe);                                               \
	} while (0)
#define probe_op_in(traced, name, cl, r, ip)                                                       \
	probe_op_(traced, name, cl, r, ip, 0, 0, 0,                                                \
		  CLOSURE_PROBE4(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip))
#define probe_op1_in(traced, name, cl, r, ip, a)                                                   \
	probe_op_(traced, name, cl, r, ip, a, 0, 0,                                                \
		  CLOSURE_PROBE5(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a))
#define probe_op2_in(traced, name, cl, r, ip, a, b)                                                \
	probe_op_(traced, name, cl, r, ip, a, b, 0,                                                \
		  CLOSURE_PROBE6(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b))
#define probe_op3_in(traced, name, cl, r, ip, a, b, c)                                             \
	probe_op_(traced, name, cl, r, ip, a, b, c,                                                \
		  CLOSURE_PROBE7(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b, c))
#define probe_op1_rec_in(traced, rec, name, cl, r, ip, a)                                          \
	probe_op_rec_(traced, rec, name, cl, r, ip, a, 0, 0,                                       \
		      CLOSURE_PROBE5(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a))
/*
 * In SUB_AND_SETTLE's probe statement: the record stamped before the sub (its bts_, 0 for none:
 * lib/batch.h's closure_batch_clock_in), then the probe.
 */
#define probe_op_settle_(traced, name, cl, r, ip, a, b, c, probe)                                  \
	do {                                                                                       \
		if (bts_)                                                                          \
			closure_batch_append_at(bts_, CLOSURE_BATCH_OP_##name, (uintptr_t)(cl),    \
						(r), (ip), (uint64_t)(a), (uint64_t)(b),           \
						(uint64_t)(c));                                    \
		if ((traced) || !PROBE_GUARDED)                                                    \
			PROBE_IF_ARMED(name, probe);                                               \
	} while (0)
#define probe_op1_settle(traced, name, cl, r, ip, a)                                               \
	probe_op_settle_(traced, name, cl, r, ip, a, 0, 0,                                         \
			 CLOSURE_PROBE5(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a))
#define probe_op3_settle(traced, name, cl, r, ip, a, b, c)                                         \
	probe_op_settle_(traced, name, cl, r, ip, a, b, c,                                         \
			 CLOSURE_PROBE7(name, cl, PROBE_COUNT(r), PROBE_FLAGS(r), ip, a, b, c))
#define probe_op(name, cl, r, ip)	 probe_op_in(PROBE_TRACED(name), name, cl, r, ip)
#define probe_op1(name, cl, r, ip, a)	 probe_op1_in(PROBE_TRACED(name), name, cl, r, ip, a)
#define probe_op2(name, cl, r, ip, a, b) probe_op2_in(PROBE_TRACED(name), name, cl, r, ip, a, b)

#endif
