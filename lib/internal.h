/* What libclosure's files share with each other (private). */
#ifndef CLOSURE_LIB_INTERNAL_H
#define CLOSURE_LIB_INTERNAL_H

#include <stdint.h>
#include <time.h>
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

/* Hand cl to a worker of wq; the worker calls closure_run(). */
void workqueue_queue(struct workqueue *wq, struct closure *cl);
/* Hand cl to a program's own workqueue through its queue_work() (closure.h); ip, op: for a bug. */
void workqueue_queue_program(struct workqueue_struct *wq, struct closure *cl, uintptr_t ip,
			     const char *op);

/* The get and put probes, fired unguarded (lib/probes_unguarded.c says why). */
void probe_get(struct closure *cl, uint32_t r, uintptr_t ip);
/* rec: CLOSURE_RECORDED(cl), read before the put (cl may be gone by now). */
void probe_put(struct closure *cl, uint32_t r, uintptr_t ip, uint64_t bts);

/* Run cl's continuation in this thread (fires the run probe). */
void closure_run(struct closure *cl);

/* The live-closure list behind closure_debug_dump(); no-ops unless CLOSURE_DEBUG. */
void closure_debug_create(struct closure *cl);
/* With CLOSURE_DEBUG: aborts (bug init_live) when cl is alive and listed, about to be reused. */
void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip);
/* Off the list and dead (CLOSURE_MAGIC_DEAD); a closure that is not alive is left alone. */
void closure_debug_unlist(struct closure *cl);

/* With CLOSURE_DEBUG: *at = CLOCK_MONOTONIC now (the ages `closuretrace ps` shows). */
static inline void closure_debug_stamp(uint64_t *at)
{
#ifdef CLOSURE_DEBUG
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* Relaxed: another thread (closure_debug_dump) or process may be reading it. */
	__atomic_store_n(at, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
			 __ATOMIC_RELAXED);
#else
	(void)at;
#endif
}

/* The owner sleeps in closure_sync() at ip, then wakes (lists a stack closure meanwhile). */
#ifdef CLOSURE_DEBUG
void closure_debug_sync_begin(struct closure *cl, uintptr_t ip);
void closure_debug_sync_end(struct closure *cl);
#else
static inline void closure_debug_sync_begin(struct closure *cl, uintptr_t ip)
{
	(void)cl;
	(void)ip;
}
static inline void closure_debug_sync_end(struct closure *cl)
{
	(void)cl;
}
#endif

#define CLOSURE_MAGIC_DEAD  0xc054deadu
#define CLOSURE_MAGIC_ALIVE 0xc054a11eu
#define CLOSURE_MAGIC_STACK 0xc05451ccu

/* The call site as a return address (docs/probes.md: arg3); tracers resolve ip - 1. */
#define CALLER_IP() ((uintptr_t)__builtin_return_address(0))

#pragma GCC visibility pop

#endif
