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

/*
 * Every operation probe: X(name, NAME, arg4, arg5, arg6). The first four arguments are always
 * cl, count, flags, ip (CLOSURE_PROBE_COMMON_ARGS); arg4..arg6 name the extras, 0 when absent.
 * The order is docs/probes.md's; tracers number probes by it (closuretrace's BPF cookie), so a new
 * probe goes at the end.
 */
#define CLOSURE_PROBE_LIST(X)                                                                      \
	X(init, INIT, "parent", "stack", 0)                                                        \
	X(get, GET, "not_zero", 0, 0)                                                              \
	X(put, PUT, 0, 0, 0)                                                                       \
	X(sub, SUB, "v", 0, 0)                                                                     \
	X(continue_at, CONTINUE_AT, "fn", "wq", "how")                                             \
	X(run, RUN, "fn", "wq", 0)                                                                 \
	X(finish, FINISH, "parent", 0, 0)                                                          \
	X(destructor, DESTRUCTOR, "fn", 0, 0)                                                      \
	X(wait, WAIT, "waitlist", 0, 0)                                                            \
	X(wake, WAKE, "waitlist", 0, 0)                                                            \
	X(sync_begin, SYNC_BEGIN, "timeout_ms", 0, 0)                                              \
	X(sync_end, SYNC_END, "ret", 0, 0)                                                         \
	X(bug, BUG, "bug", 0, 0)                                                                   \
	X(destroy, DESTROY, 0, 0, 0)

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
	X(NOT_ALIVE, 6, "not_alive", "closure_debug_destroy of a closure not alive")               \
	X(QUEUED_TWICE, 7, "queued_twice", "closure_queue while its continuation is still queued") \
	X(INIT_LIVE, 8, "init_live", "closure_init of a live closure (CLOSURE_DEBUG builds)")      \
	X(OWN_PARENT, 9, "own_parent", "closure_init(cl, cl): a closure that waits for itself")    \
	X(NO_EXECUTOR, 10, "no_executor",                                                          \
	  "queued on a program's workqueue_struct that its queue_work refused, or none")           \
	X(OVERFLOW, 11, "overflow", "closure_get past the count's limit (its guard bit, 2^23)")

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
