/* What libclosure's files share with each other (private). */
#ifndef CLOSURE_LIB_INTERNAL_H
#define CLOSURE_LIB_INTERNAL_H

#include <stdint.h>
#include <time.h>
#include <stdnoreturn.h>

#include "closure.h"
#include "closure_probes.h"
#include "registry.h"

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

/* Aborts (bug not_running) unless cl holds its running reference: op's rule at ip (lib/debug.c). */
void closure_require_running(struct closure *cl, const char *op, uintptr_t ip);

/* closure_not_alive() at the call site ip (op: the operation), from the library's own checks. */
noreturn void closure_not_alive_at(struct closure *cl, uint32_t remaining, const char *op,
				   uintptr_t ip);
/* With CLOSURE_DEBUG: aborts (bug not_alive) when cl is not alive (closure_magic_live). */
static inline void closure_debug_check_live(struct closure *cl, uint32_t remaining, const char *op,
					    uintptr_t ip)
{
#ifdef CLOSURE_DEBUG
	if (__builtin_expect(!closure_magic_live(cl), 0))
		closure_not_alive_at(cl, remaining, op, ip);
#else
	(void)cl, (void)remaining, (void)op, (void)ip;
#endif
}

/* The bug line for a workqueue itself (destroyed twice): no closure, so no count. */
noreturn void workqueue_bug(struct workqueue *wq, const char *op, uintptr_t ip, const char *detail);

/* Created and not destroyed yet (workqueue.c keeps what it destroyed, to tell). */
bool workqueue_live(struct workqueue *wq);
/* cl given or queued (op at ip) on wq, destroyed: the bug dead_workqueue, at that site. */
noreturn void workqueue_dead(struct closure *cl, const char *op, uintptr_t ip);
static inline void workqueue_check_live(struct workqueue *wq, struct closure *cl, const char *op,
					uintptr_t ip)
{
	if (wq && __builtin_expect(!workqueue_live(wq), 0))
		workqueue_dead(cl, op, ip);
}

/*
 * Hand cl to a worker of wq; the worker calls closure_run(). ip, op: for the bug when wq was
 * destroyed since it was named (continue_at with references out, then the last put).
 */
void workqueue_queue(struct workqueue *wq, struct closure *cl, uintptr_t ip, const char *op);
/* Hand cl to a program's own workqueue through its queue_work() (closure.h); ip, op: for a bug. */
void workqueue_queue_program(struct workqueue_struct *wq, struct closure *cl, uintptr_t ip,
			     const char *op);

/* The get and put probes, fired unguarded (lib/probes_unguarded.c says why). */
void probe_get(struct closure *cl, uint32_t r, uintptr_t ip);
/* rec: CLOSURE_RECORDED(cl), read before the put (cl may be gone by now). */
void probe_put(struct closure *cl, uint32_t r, uintptr_t ip, uint64_t bts);

/*
 * Sleeps while *word is val (the caller re-checks why it woke), until until_ns on CLOCK_MONOTONIC
 * (0: no limit); ETIMEDOUT once until_ns has passed, else 0 (lib/sleep.c).
 */
int closure_sleep_on(uint32_t *word, uint32_t val, uint64_t until_ns);
/* Wakes every thread sleeping on word. */
void closure_futex_wake(uint32_t *word);

/*
 * Under valgrind's memcheck, the sleeping part of a sync runs on a side stack of the thread's own
 * (lib/sleep.c says why): closure_sleep_off_stack(fn, a, b, c, d) is fn(a, b, c, d) there (called
 * only when closure_under_memcheck; in place when on the side stack already).
 */
typedef uintptr_t closure_word_fn(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d);
extern bool closure_under_memcheck;
uintptr_t closure_sleep_off_stack(closure_word_fn *fn, uintptr_t a, uintptr_t b, uintptr_t c,
				  uintptr_t d);
/* closure_sync's sleep (lib/closure.c), and the same on the side stack (lib/sleep.c). */
int closure_sync_sleep(struct closure *cl, uint32_t r, long timeout_ms, uintptr_t ip);
int closure_sync_off_stack(struct closure *cl, uint32_t r, long timeout_ms, uintptr_t ip);
/* Maps this thread's side stack (if it has none), so that its first sleep need not. */
void closure_side_stack_map(void);
/* At a closure's init, before the program hands out references that a sleep would wait for. */
static inline void closure_side_stack_prepare(void)
{
	if (__builtin_expect(closure_under_memcheck, 0))
		closure_side_stack_map();
}

/*
 * A CLASS(closure_stack) closure's first traced operation (closure.h), before: the value of
 * remaining before the operation. Fires its init, as a stack closure initialised at ip, where it
 * now is (before that it was a value that may have moved), when only its running reference was
 * there: references taken before out of the library's sight (an inline get traced per operation,
 * an open-coded wait) would come after its init in the trace, so then it is marked seen and
 * traced without one, as a closure created before recording.
 */
void closure_announce_stack(struct closure *cl, uintptr_t ip, uint32_t before);
static inline void closure_stack_first_use(struct closure *cl, uintptr_t ip, uint32_t before)
{
	if (__builtin_expect(!cl->init_ip, 0) && cl->magic == CLOSURE_MAGIC_STACK)
		closure_announce_stack(cl, ip, before);
}

/* Run cl's continuation in this thread (fires the run probe). */
void closure_run(struct closure *cl);

/* With CLOSURE_DEBUG: aborts (bug init_live) when cl is alive and listed, about to be reused. */
void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip);

/* Out of the registry and dead (CLOSURE_MAGIC_DEAD); a closure that is not alive is left alone. */
static inline void closure_debug_unlist(struct closure *cl)
{
	if (cl->magic != CLOSURE_MAGIC_ALIVE)
		return; /* stack closures are listed only while they sleep */
	registry_remove(cl);
	/* Atomic: the inline get and put read it (closure_magic_live). */
	__atomic_store_n(&cl->magic, CLOSURE_MAGIC_DEAD, __ATOMIC_RELAXED);
}

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
void closure_debug_sync_begin(struct closure *cl, uintptr_t ip);
void closure_debug_sync_end(struct closure *cl);

/* The call site as a return address (docs/probes.md: arg3); tracers resolve ip - 1. */
#define CALLER_IP() ((uintptr_t)__builtin_return_address(0))

#pragma GCC visibility pop

#endif
