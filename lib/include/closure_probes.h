/* SPDX-License-Identifier: MIT */
/*
 * The probe contract of libclosure (docs/probes.md), written once: the USDT probe names and their
 * arguments, the "how" codes of continue_at, the bug codes, and the flag letters of a trace.
 * libclosure fires these probes; closuretrace's BPF side, recorder, trace writer and trace reader
 * all expand the lists below instead of keeping tables of their own, so that adding a probe is one
 * line here (plus its firing in the library).
 *
 * Plain preprocessor lists ("X macros") and nothing else: no includes, no declarations, so that C,
 * C++ and the BPF target can all use it. Each list takes a macro X that it applies to every entry.
 * This header is installed with closure.h; the lists are versioned with docs/probes.md.
 */
#ifndef CLOSURE_PROBES_H
#define CLOSURE_PROBES_H

/* The provider of every probe, and the two probes that are not operations (below). */
#define CLOSURE_PROBE_PROVIDER "closure"
#define CLOSURE_PROBE_MODULE   "module"
#define CLOSURE_PROBE_BATCH    "batch"

/*
 * Every operation probe: X(name, NAME, arg4, arg5, arg6). The first four arguments are always
 * cl, count, flags, ip (CLOSURE_PROBE_COMMON_ARGS); arg4..arg6 are the extras, each a pair
 * (TYPE, field): its type, and its name in a trace (a JSON key) and in a reader's event record.
 * Types: ADDR (a data address, "0x..."), FN (a code address, "0x...", which a tracer names by its
 * symbol), BOOL, INT (signed), BUG (a code of CLOSURE_BUG_LIST, written by its name), HOW (a code
 * of CLOSURE_HOW_LIST, by its name); (NONE, _) where there is none.
 * CLOSURE_ARG_TYPE(pair) and CLOSURE_ARG_NAME(pair) take a pair apart.
 * The order is docs/probes.md's; tracers number probes by it (closuretrace's BPF cookie), so a new
 * probe goes at the end.
 */
#define CLOSURE_PROBE_LIST(X)                                                                      \
	X(init, INIT, (ADDR, parent), (BOOL, stack), (NONE, _))                                    \
	X(get, GET, (BOOL, not_zero), (NONE, _), (NONE, _))                                        \
	X(put, PUT, (NONE, _), (NONE, _), (NONE, _))                                               \
	X(sub, SUB, (INT, v), (NONE, _), (NONE, _))                                                \
	X(continue_at, CONTINUE_AT, (FN, fn), (ADDR, wq), (HOW, how))                              \
	X(run, RUN, (FN, fn), (ADDR, wq), (NONE, _))                                               \
	X(finish, FINISH, (ADDR, parent), (NONE, _), (NONE, _))                                    \
	X(destructor, DESTRUCTOR, (FN, fn), (NONE, _), (NONE, _))                                  \
	X(wait, WAIT, (ADDR, waitlist), (NONE, _), (NONE, _))                                      \
	X(wake, WAKE, (ADDR, waitlist), (NONE, _), (NONE, _))                                      \
	X(sync_begin, SYNC_BEGIN, (INT, timeout_ms), (NONE, _), (NONE, _))                         \
	X(sync_end, SYNC_END, (INT, ret), (NONE, _), (NONE, _))                                    \
	X(bug, BUG, (BUG, bug), (NONE, _), (NONE, _))                                              \
	X(destroy, DESTROY, (NONE, _), (NONE, _), (NONE, _))

/* The argument types, as numbers (CLOSURE_ARG_TYPE gives one). */
#define CLOSURE_ARG_NONE 0
#define CLOSURE_ARG_ADDR 1
#define CLOSURE_ARG_BOOL 2
#define CLOSURE_ARG_INT	 3
#define CLOSURE_ARG_BUG	 4
#define CLOSURE_ARG_HOW	 5
#define CLOSURE_ARG_FN	 6

/* An extra argument (TYPE, field): its type's number, its name as a string (0 for NONE), and
 * M_TYPE(field) for a macro family M (M_NONE, M_ADDR, M_FN, ...: what to do with each type). */
#define CLOSURE_ARG_TYPE(pair)		    CLOSURE_ARG_TYPE_ pair
#define CLOSURE_ARG_TYPE_(type, field)	    CLOSURE_ARG_##type
#define CLOSURE_ARG_NAME(pair)		    CLOSURE_ARG_NAME_ pair
#define CLOSURE_ARG_NAME_(type, field)	    CLOSURE_ARG_NAME_##type(field)
#define CLOSURE_ARG_NAME_NONE(field)	    0
#define CLOSURE_ARG_NAME_ADDR(field)	    #field
#define CLOSURE_ARG_NAME_BOOL(field)	    #field
#define CLOSURE_ARG_NAME_INT(field)	    #field
#define CLOSURE_ARG_NAME_BUG(field)	    #field
#define CLOSURE_ARG_NAME_HOW(field)	    #field
#define CLOSURE_ARG_NAME_FN(field)	    #field
#define CLOSURE_ARG_APPLY(M, pair)	    CLOSURE_ARG_APPLY_(M, CLOSURE_ARG_UNPACK_ pair)
#define CLOSURE_ARG_UNPACK_(type, field)    type, field
#define CLOSURE_ARG_APPLY_(M, ...)	    CLOSURE_ARG_APPLY__(M, __VA_ARGS__)
#define CLOSURE_ARG_APPLY__(M, type, field) M##_##type(field)

/* The four arguments every operation probe starts with. */
#define CLOSURE_PROBE_COMMON_ARGS "cl", "count", "flags", "ip"

/* Not an operation: where the objects of the process are mapped. closure:module(path, base). */
#define CLOSURE_PROBE_MODULE_ARGS "path", "base"

/*
 * Not an operation: a thread's buffer of operation records (closure_batch.h), while batching.
 * closure:batch(registry, records, n, tid, handed, dropped).
 */
#define CLOSURE_PROBE_BATCH_ARGS "registry", "records", "n", "tid", "handed", "dropped"

/* continue_at's arg6: X(NAME, code, trace name). */
#define CLOSURE_HOW_LIST(X)                                                                        \
	X(CONTINUE_AT, 0, "continue_at")                                                           \
	X(RETURN, 1, "return")                                                                     \
	X(DESTRUCTOR, 2, "destructor")                                                             \
	X(NOBARRIER, 3, "nobarrier")

/*
 * The bug probe's arg4, a broken rule: X(NAME, code, trace name, meaning). Trace names are at
 * most 15 characters. Code 0 is never fired; a reader shows an unknown code as "unknown". Code 3
 * (second_waitlist) is retired: closure_wait on a closure already waiting returns false, as in the
 * kernel. Codes are never reused.
 */
#define CLOSURE_BUG_LIST(X)                                                                        \
	X(UNDERFLOW, 1, "underflow", "the count would go below zero")                              \
	X(BAD_FLAGS, 2, "bad_flags",                                                               \
	  "a flag set twice or cleared while not set, or zero while running")                      \
	X(NOT_RUNNING, 4, "not_running", "continue_at or closure_return without the running ref")  \
	X(GET_FINISHED, 5, "get_finished", "closure_get on a finished closure (count 0)")          \
	X(NOT_ALIVE, 6, "not_alive",                                                               \
	  "closure_debug_destroy, or (CLOSURE_DEBUG) get, put or sub, of a closure not alive")     \
	X(QUEUED_TWICE, 7, "queued_twice", "closure_queue while its continuation is still queued") \
	X(INIT_LIVE, 8, "init_live", "closure_init of a live closure (CLOSURE_DEBUG builds)")      \
	X(OWN_PARENT, 9, "own_parent", "closure_init(cl, cl): a closure that waits for itself")    \
	X(NO_EXECUTOR, 10, "no_executor",                                                          \
	  "queued on a program's workqueue_struct that its queue_work refused, or none")           \
	X(OVERFLOW, 11, "overflow", "closure_get past the count's limit (its guard bit, 2^23)")    \
	X(DEAD_WORKQUEUE, 12, "dead_workqueue",                                                    \
	  "a continuation given or queued on a destroyed workqueue, or one destroyed twice")

/*
 * The flag bits of remaining (closure.h) and their letters in a trace's "flags":
 * X(NAME, bit, letter). A trace writes the letters in this order.
 */
#define CLOSURE_FLAG_LIST(X)                                                                       \
	X(RUNNING, 30, 'R')                                                                        \
	X(WAITING, 28, 'W')                                                                        \
	X(DESTRUCTOR, 24, 'D')                                                                     \
	X(SLEEPING, 26, 'S')

#endif /* CLOSURE_PROBES_H */
