/*
 * The closure state machine. Every operation that drops references or flags (put, sub,
 * continue_at, wake-up, sync) ends in one funnel, SUB_AND_SETTLE: sub_value() publishes the new
 * value with a compare-and-swap and checks the rules once, the operation fires its probe, and
 * settle() acts on the last reference: run the continuation, wake a sleeper, or finish.
 */
/*
 * Each probe in this file is guarded by its semaphore (lib/probes.h): the operations are cheap,
 * and an untraced probe should cost less than setting up its arguments.
 */
#define _SDT_HAS_SEMAPHORES 1

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "probes.h" /* first: it declares the semaphores */
#include "bug.h"
#include "debug.h"
#include "sleep.h"
#include "stack.h"
#include "workqueue.h"

/* What dropping references left behind, and what the last reference means. */
enum sub_outcome { SUB_NORMAL, SUB_REQUEUE, SUB_DONE, SUB_WAKE };

struct sub_result {
	enum sub_outcome outcome;
	uint32_t after; /* the value the operation published, before any requeue: the probe's */
	uint32_t now;	/* the value in memory after the compare-and-swap */
};

static void settle(struct closure *cl, struct sub_result res, const char *name, uintptr_t ip);
static inline __attribute__((always_inline)) struct sub_result
sub_value(struct closure *cl, uint32_t v, const char *name, uintptr_t ip);

/*
 * The funnel: drop v, fire the operation's own probe (a statement that may use r, the value
 * after), then act on the last reference. Each operation names its probe here, so there is one
 * probe site per operation and no dispatch on a kind.
 */
#define SUB_AND_SETTLE(traced, cl, v, name, ip, probe)                                             \
	do {                                                                                       \
		/* Before the sub: afterwards another thread may finish and free cl. */            \
		const bool rec = CLOSURE_RECORDED(cl);                                             \
		/* The record's time, also before the sub (lib/batch.h); 0: no record. */          \
		const uint64_t bts_ =                                                              \
			(traced) && rec && CLOSURE_BATCH_ON() ? closure_batch_clock_in() : 0;      \
		struct sub_result res_ = sub_value(cl, v, name, ip);                               \
		uint32_t r = res_.after;                                                           \
		(void)r, (void)bts_;                                                               \
		probe;                                                                             \
		if (res_.outcome != SUB_NORMAL)                                                    \
			settle(cl, res_, name, ip);                                                \
	} while (0)

/* Keeps modules.o (the module probe) in every static link that uses closures. */
extern const char closure_modules_anchor;
__attribute__((used)) static const char *const keep_modules = &closure_modules_anchor;

/*
 * The last reference is gone and there is no continuation: destructor, then the parent.
 * The destructor may free cl, so everything needed afterwards is read first.
 */
/* Call fn with the argument its form declares (closure.h: both forms of a continuation). */
static void call_fn(closure_fn *fn, bool takes_closure, struct closure *cl)
{
	if (takes_closure)
		((closure_fn_cl *)fn)(cl);
	else
		fn(&cl->work);
}

PROBE_BODY void finish_body(struct closure *cl, uint32_t r, uintptr_t ip, const bool traced)
{
	struct closure *parent = cl->parent;
	closure_fn *destructor = (r & CLOSURE_DESTRUCTOR) ? cl->fn : NULL;
	bool takes_closure = cl->fn_takes_closure;

	probe_op1_in(traced, finish, cl, r, ip, (uintptr_t)parent);
	closure_debug_unlist(cl);
	if (destructor) {
		/* Rare: tested here, not at the entry, in the untraced copy. */
		probe_op1_in(traced || PROBE_TRACED(destructor), destructor, cl, r, ip,
			     (uintptr_t)destructor);
		call_fn(destructor, takes_closure, cl);
	}
	if (parent)
		SUB_AND_SETTLE(traced, parent, 1, "closure_put", ip,
			       probe_put(parent, r, ip, bts_));
}

PROBE_COLD void finish_traced(struct closure *cl, uint32_t r, uintptr_t ip)
{
	finish_body(cl, r, ip, true);
}

static void closure_finish(struct closure *cl, uint32_t r, uintptr_t ip)
{
	if (PROBE_OP_TRACED(finish))
		finish_traced(cl, r, ip);
	else
		finish_body(cl, r, ip, false);
}

PROBE_BODY void run_body(struct closure *cl, const bool traced)
{
	uint32_t r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);

	(void)r;
	probe_op2_in(traced, run, cl, r, cl->released_at, (uintptr_t)cl->fn,
		     cl->wq ? (uintptr_t)cl->wq : (uintptr_t)cl->program_wq);
	call_fn(cl->fn, cl->fn_takes_closure, cl);
}

PROBE_COLD void run_traced(struct closure *cl)
{
	run_body(cl, true);
}

/* Run cl's continuation in this thread (fires the run probe). */
static void closure_run(struct closure *cl)
{
	if (PROBE_OP_TRACED(run))
		run_traced(cl);
	else
		run_body(cl, false);
}

/* What a worker calls (work->func): the closure's continuation, on the worker's thread. */
static void run_work(struct closure_work *work)
{
	struct closure *cl = container_of(work, struct closure, work);

	/* Started: it may be queued again from now on (closure_queue_at checks). */
	__atomic_store_n(&cl->queued, 0, __ATOMIC_RELEASE);
	closure_run(cl);
}

/* wq given or queued (op at ip) after workqueue_destroy: the continuation would never run. */
static void check_wq_live(struct workqueue *wq, struct closure *cl, const char *op, uintptr_t ip)
{
	if (wq && __builtin_expect(!workqueue_live(wq), 0))
		closure_bug(
			cl, CLOSURE_BUG_DEAD_WORKQUEUE, op,
			__atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), ip,
			"its workqueue was destroyed (workqueue_destroy): the continuation would "
			"never run");
}

/* A program's own workqueue: its queue_work() (closure.h, "A program's own executor"). */
static void queue_program(struct closure *cl, uintptr_t ip, const char *name)
{
	closure_queue_work_fn *queue_work = workqueue_program_queue_work();

	if (!queue_work)
		closure_bug(cl, CLOSURE_BUG_NO_EXECUTOR, name,
			    __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), ip,
			    "continued on a struct workqueue_struct, but the program has no "
			    "queue_work() and none was given to closure_set_queue_work()");
	if (!queue_work(cl->program_wq, &cl->work))
		closure_bug(cl, CLOSURE_BUG_NO_EXECUTOR, name,
			    __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), ip,
			    "the program's queue_work() refused it: already pending");
}

/* The kernel's closure_queue(): the work item runs the continuation, on wq or right here. */
static void closure_queue_at(struct closure *cl, uintptr_t ip, const char *name)
{
	struct workqueue *wq = cl->wq;

	if (!wq && !cl->program_wq) {
		cl->released_at = ip;
		closure_run(cl);
		return;
	}
	/* run_work clears queued as it starts, as the kernel's PENDING bit. */
	if (__atomic_exchange_n(&cl->queued, 1, __ATOMIC_ACQ_REL))
		closure_bug(cl, CLOSURE_BUG_QUEUED_TWICE, name,
			    __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), ip,
			    "its continuation is still queued (not started yet)");
	cl->released_at = ip;
	/* The kernel's INIT_WORK: not pending, on no list, and what to run. */
	cl->work.data = 0;
	cl->work.entry.next = cl->work.entry.prev = &cl->work.entry;
	cl->work.func = run_work;
	if (wq) {
		check_wq_live(wq, cl, name, ip); /* destroyed since continue_at named it */
		workqueue_queue(wq, &cl->work);
	} else {
		queue_program(cl, ip, name);
	}
}

static inline __attribute__((always_inline)) struct sub_result
sub_value(struct closure *cl, uint32_t v, const char *name, uintptr_t ip)
{
	uint32_t old = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_ACQUIRE);
	struct sub_result res;

	do {
		res.now = old - v;
		res.after = res.now;
		res.outcome = SUB_NORMAL;
		closure_check_value(cl, old, res.now, name, ip);
		/* After the count's checks, whose message says more when both fail. */
		closure_debug_check_live(cl, old, name, ip);
		if (!(res.now & CLOSURE_REMAINING_MASK)) {
			/* The last reference: this thread now owns the closure. */
			bool sleeper = res.now & CLOSURE_SLEEPING;

			if ((cl->fn || sleeper) && !(res.now & CLOSURE_DESTRUCTOR)) {
				res.outcome = sleeper ? SUB_WAKE : SUB_REQUEUE;
				res.now += CLOSURE_REMAINING_INITIALIZER;
			} else {
				res.outcome = sleeper ? SUB_WAKE : SUB_DONE;
			}
			res.now &= ~CLOSURE_SLEEPING;
		}
		/*
		 * Release: our earlier writes go with the reference. Acquire: when this is the last
		 * one, the writes of every earlier put (fn and its data) are visible to what runs
		 * next. One ordering on the CAS rather than a fence, which ThreadSanitizer cannot
		 * follow (GCC refuses atomic_thread_fence under -fsanitize=thread).
		 */
	} while (!__atomic_compare_exchange_n(CLOSURE_WORD(cl), &old, res.now, true,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return res;
}

/* The last reference is gone: wake the sleeper, run the continuation, or finish. */
static void settle(struct closure *cl, struct sub_result res, const char *name, uintptr_t ip)
{
	switch (res.outcome) {
	case SUB_WAKE:
		/*
		 * The sleeper owns the closure again and may return and free it at once; a wake on
		 * a stale private futex address touches no memory, so this is safe.
		 */
		closure_futex_wake(CLOSURE_WORD(cl));
		break;
	case SUB_REQUEUE:
		closure_queue_at(cl, ip, name);
		break;
	case SUB_DONE:
		closure_finish(cl, res.now, ip);
		break;
	case SUB_NORMAL:
		break;
	}
}

/* A sub (the sub probe, argument v) or a put (the put probe: lib/probes_unguarded.c, always). */
PROBE_BODY void sub_body(struct closure *cl, uint32_t v, int kind, const char *name, uintptr_t ip,
			 const bool traced)
{
	if (traced)
		closure_stack_first_use(cl, ip,
					__atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED));
	if (kind == CLOSURE_OP_SUB)
		SUB_AND_SETTLE(traced, cl, v, name, ip,
			       probe_op1_settle(traced, sub, cl, r, ip, (long)(int)v));
	else
		SUB_AND_SETTLE(traced, cl, v, "closure_put", ip, probe_put(cl, r, ip, bts_));
}

PROBE_COLD void sub_traced(struct closure *cl, uint32_t v, int kind, const char *name, uintptr_t ip)
{
	sub_body(cl, v, kind, name, ip, true);
}

static inline void sub_at(struct closure *cl, uint32_t v, int kind, const char *name, uintptr_t ip)
{
	if (PROBE_OP_TRACED(sub))
		sub_traced(cl, v, kind, name, ip);
	else
		sub_body(cl, v, kind, name, ip, false);
}

void closure_sub_slow(struct closure *cl, uint32_t v, int kind)
{
	sub_at(cl, v, kind, "closure_sub", CALLER_IP());
}

void closure_sub(struct closure *cl, int v)
{
	sub_at(cl, (uint32_t)v, CLOSURE_OP_SUB, "closure_sub", CALLER_IP());
}

static void closure_get_at(struct closure *cl, uintptr_t ip)
{
	uint32_t r = __atomic_add_fetch(CLOSURE_WORD(cl), 1, __ATOMIC_RELAXED);

	(void)r;
	(void)ip; /* only the probe uses it */
	probe_get(cl, r, ip);
}

PROBE_BODY void init_body(struct closure *cl, struct closure *parent, uintptr_t ip,
			  const bool traced)
{
	if (parent == cl)
		closure_bug(cl, CLOSURE_BUG_OWN_PARENT, "closure_init",
			    __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), ip,
			    "a closure cannot be its own parent (it would wait for itself)");
	closure_debug_check_init(cl, "closure_init", ip);
	closure_side_stack_prepare();
	cl->wq = NULL;
	cl->program_wq = NULL;
	cl->queued = 0;
	cl->next = NULL;
	/* Atomic stores: a closure initialised again while still listed may be being dumped. */
	__atomic_store_n(&cl->parent, parent, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->fn, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->waitlist, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->ip, ip, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->init_ip, ip, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->init_ns, registry_now_ns(), __ATOMIC_RELAXED);
	closure_debug_stamp(&cl->ip_ns);
	/* Whether its tree is recorded: decided before its first record (and its parent's get). */
	if (traced && parent)
		closure_stack_first_use(parent, ip, /* before its tree is inherited */
					__atomic_load_n(CLOSURE_WORD(parent), __ATOMIC_RELAXED));
	cl->left_out = traced ? closure_batch_left_out(!parent, parent ? parent->left_out : 0) : 0;
	if (parent)
		closure_get_at(parent, ip);
	cl->fn_takes_closure = 0;
	/*
	 * The probe fires before the count is published: a closure_get_not_zero() on another thread
	 * can only succeed after this store, so its event never precedes the init in the trace.
	 */
	probe_op2_in(traced, init, cl, CLOSURE_REMAINING_INITIALIZER, ip, (uintptr_t)parent, 0);
	closure_debug_create(cl); /* alive and listed, before the count */
	/* Release: closure_get_not_zero() elsewhere sees a fully set up closure. */
	__atomic_store_n(CLOSURE_WORD(cl), CLOSURE_REMAINING_INITIALIZER, __ATOMIC_RELEASE);
}

PROBE_COLD void init_traced(struct closure *cl, struct closure *parent, uintptr_t ip)
{
	init_body(cl, parent, ip, true);
}

static inline void closure_init_at(struct closure *cl, struct closure *parent, uintptr_t ip)
{
	if (PROBE_OP_TRACED(init))
		init_traced(cl, parent, ip);
	else
		init_body(cl, parent, ip, false);
}

void closure_init(struct closure *cl, struct closure *parent)
{
	closure_init_at(cl, parent, CALLER_IP());
}

void closure_set_stopped(struct closure *cl)
{
	/* A sub of the flag alone: clearing a RUNNING that is not set is caught as bad flags. */
	sub_at(cl, CLOSURE_RUNNING, CLOSURE_OP_SUB, "closure_set_stopped", CALLER_IP());
}

void closure_debug_destroy(struct closure *cl)
{
	uintptr_t ip = CALLER_IP();
	uint32_t r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);

	if (cl->magic == CLOSURE_MAGIC_STACK)
		return; /* never listed: nothing to do, as in the kernel */
	if (cl->magic != CLOSURE_MAGIC_ALIVE)
		closure_bug(cl, CLOSURE_BUG_NOT_ALIVE, "closure_debug_destroy", r, ip,
			    "not alive: finished or destroyed already, or never initialised");
	probe_op(destroy, cl, r, ip);
	closure_debug_unlist(cl);
}

/* A plain store, as in the kernel: allowed on a closure that is not running. */
static void set_fn_at(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq,
		      const char *name, uintptr_t ip)
{
	check_wq_live(wq.own, cl, name, ip); /* where it is named, not at the last put */
	/* Atomic stores: closure_debug_dump() may be reading them from another thread. */
	__atomic_store_n(&cl->ip, ip, __ATOMIC_RELAXED);
	closure_debug_stamp(&cl->ip_ns);
	__atomic_store_n(&cl->fn, fn.fn, __ATOMIC_RELAXED);
	cl->fn_takes_closure = fn.takes_closure;
	cl->wq = wq.own;
	cl->program_wq = wq.program;
}

/* The workqueue a probe names: whichever of the two it is. */
static uintptr_t wq_addr(struct closure_wq_ref wq)
{
	return wq.own ? (uintptr_t)wq.own : (uintptr_t)wq.program;
}

void set_closure_fn(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq)
{
	set_fn_at(cl, fn, wq, "set_closure_fn", CALLER_IP());
}

/* continue_at's how (closure_probes.h). */
enum {
#define HOW_ENUM(name, code, trace_name) HOW_##name = code,
	CLOSURE_HOW_LIST(HOW_ENUM)
#undef HOW_ENUM
};

/*
 * Give up the running reference (how: continue_at, return, or destructor). With a destructor, one
 * step drops the running reference, clears RUNNING and sets DESTRUCTOR.
 */
PROBE_BODY void continue_at_body(struct closure *cl, struct closure_fn_ref fn,
				 struct closure_wq_ref wq, int how, const char *name, uintptr_t ip,
				 const bool traced)
{
	uint32_t v = how == HOW_DESTRUCTOR ? CLOSURE_RUNNING - CLOSURE_DESTRUCTOR + 1
					   : CLOSURE_RUNNING + 1;

	closure_require_running(cl, name, ip);
	set_fn_at(cl, fn, wq, name, ip);
	SUB_AND_SETTLE(traced, cl, v, name, ip,
		       probe_op3_settle(traced, continue_at, cl, r, ip, (uintptr_t)fn.fn,
					wq_addr(wq), how));
}

PROBE_COLD void continue_at_traced(struct closure *cl, struct closure_fn_ref fn,
				   struct closure_wq_ref wq, int how, const char *name,
				   uintptr_t ip)
{
	continue_at_body(cl, fn, wq, how, name, ip, true);
}

static inline void continue_at_at(struct closure *cl, struct closure_fn_ref fn,
				  struct closure_wq_ref wq, int how, const char *name, uintptr_t ip)
{
	if (PROBE_OP_TRACED(continue_at))
		continue_at_traced(cl, fn, wq, how, name, ip);
	else
		continue_at_body(cl, fn, wq, how, name, ip, false);
}

void continue_at(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq)
{
	continue_at_at(cl, fn, wq, fn.fn ? HOW_CONTINUE_AT : HOW_RETURN, "continue_at",
		       CALLER_IP());
}

void closure_return(struct closure *cl)
{
	continue_at_at(cl, (struct closure_fn_ref){NULL, 0}, (struct closure_wq_ref){NULL, NULL},
		       HOW_RETURN, "closure_return", CALLER_IP());
}

void closure_return_with_destructor(struct closure *cl, struct closure_fn_ref destructor)
{
	continue_at_at(cl, destructor, (struct closure_wq_ref){NULL, NULL}, HOW_DESTRUCTOR,
		       "closure_return_with_destructor", CALLER_IP());
}

PROBE_BODY void continue_at_nobarrier_body(struct closure *cl, struct closure_fn_ref fn,
					   struct closure_wq_ref wq, uintptr_t ip,
					   const bool traced)
{
	uint32_t r;

	set_fn_at(cl, fn, wq, "continue_at_nobarrier", ip);
	r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);
	(void)r;
	probe_op3_in(traced, continue_at, cl, r, ip, (uintptr_t)fn.fn, wq_addr(wq), HOW_NOBARRIER);
	closure_queue_at(cl, ip, "continue_at_nobarrier");
}

PROBE_COLD void continue_at_nobarrier_traced(struct closure *cl, struct closure_fn_ref fn,
					     struct closure_wq_ref wq, uintptr_t ip)
{
	continue_at_nobarrier_body(cl, fn, wq, ip, true);
}

static inline void continue_at_nobarrier_at(struct closure *cl, struct closure_fn_ref fn,
					    struct closure_wq_ref wq, uintptr_t ip)
{
	if (PROBE_OP_TRACED(continue_at))
		continue_at_nobarrier_traced(cl, fn, wq, ip);
	else
		continue_at_nobarrier_body(cl, fn, wq, ip, false);
}

void continue_at_nobarrier(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq)
{
	continue_at_nobarrier_at(cl, fn, wq, CALLER_IP());
}

void closure_queue(struct closure *cl)
{
	closure_queue_at(cl, CALLER_IP(), "closure_queue");
}

/* Sleeps while the last put has not cleared CLOSURE_SLEEPING. */
static void sleep_while_sleeping(struct closure *cl)
{
	uint32_t r;

	while ((r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_ACQUIRE)) & CLOSURE_SLEEPING)
		closure_sleep_on(CLOSURE_WORD(cl), r, 0);
}

/* closure_return_sync up to the last put: give up the running reference, sleep until woken. */
PROBE_BODY void return_sync_sleep(struct closure *cl, uintptr_t ip, const bool traced)
{
	const char *name = "closure_return_sync";

	closure_require_running(cl, name, ip);
	set_fn_at(cl, (struct closure_fn_ref){NULL, 0}, (struct closure_wq_ref){NULL, NULL}, name,
		  ip);
	/*
	 * One step: drop the running reference, clear RUNNING, set DESTRUCTOR (so that the last put
	 * finishes rather than requeues) and SLEEPING (so that it only wakes us: the count stays
	 * 0).
	 */
	SUB_AND_SETTLE(traced, cl,
		       CLOSURE_REMAINING_INITIALIZER - CLOSURE_DESTRUCTOR - CLOSURE_SLEEPING, name,
		       ip, probe_op3_settle(traced, continue_at, cl, r, ip, 0, 0, HOW_RETURN));
	sleep_while_sleeping(cl);
}

/* The same, as closure_sleep_off_stack() calls it (lib/sleep.c: under memcheck). */
static uintptr_t return_sync_sleep_words(uintptr_t cl, uintptr_t ip, uintptr_t traced, uintptr_t d)
{
	if (traced)
		return_sync_sleep((struct closure *)cl, ip, true);
	else
		return_sync_sleep((struct closure *)cl, ip, false);
	return d; /* 0 */
}

/* The parent's put stays on the program's stack: it may run the program's own code. */
PROBE_BODY void return_sync_body(struct closure *cl, uintptr_t ip, const bool traced)
{
	struct closure *parent = cl->parent;
	uint32_t r;

	if (__builtin_expect(closure_under_memcheck, 0))
		closure_sleep_off_stack(return_sync_sleep_words, (uintptr_t)cl, ip, traced, 0);
	else
		return_sync_sleep(cl, ip, traced);
	r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);
	(void)r; /* only the probes use it */
	/* Tested again after the sleep: a tracer may have attached meanwhile. */
	probe_op1_in(traced || PROBE_TRACED(finish), finish, cl, r, ip, (uintptr_t)parent);
	closure_debug_unlist(cl);
	if (parent)
		SUB_AND_SETTLE(traced, parent, 1, "closure_put", ip,
			       probe_put(parent, r, ip, bts_));
}

PROBE_COLD void return_sync_traced(struct closure *cl, uintptr_t ip)
{
	return_sync_body(cl, ip, true);
}

void closure_return_sync(struct closure *cl)
{
	if (PROBE_OP_TRACED(continue_at))
		return_sync_traced(cl, CALLER_IP());
	else
		return_sync_body(cl, CALLER_IP(), false);
}

void closure_call(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq,
		  struct closure *parent)
{
	uintptr_t ip = CALLER_IP();

	closure_init_at(cl, parent, ip);
	continue_at_nobarrier_at(cl, fn, wq, ip);
}

PROBE_BODY bool wait_body(struct closure_waitlist *list, struct closure *cl, uintptr_t ip,
			  const bool traced)
{
	/*
	 * Acquire: pairs with the put of the waker that cleared WAITING, whose last touch of
	 * cl->list came before it; we are about to link cl->list again.
	 */
	uint32_t r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_ACQUIRE);

	/*
	 * Already waiting, on this list or another: false, as in the kernel (one list at a time).
	 * Only the owner calls closure_wait(), so check-then-add is not racy.
	 */
	if (r & CLOSURE_WAITING)
		return false;
	/* Atomic stores: closure_debug_dump() may be reading them from another thread. */
	__atomic_store_n(&cl->waitlist, list, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->waiting_on, ip, __ATOMIC_RELAXED);
	closure_debug_stamp(&cl->wait_ns);
	if (traced)
		closure_stack_first_use(cl, ip, r);
	r = __atomic_add_fetch(CLOSURE_WORD(cl), CLOSURE_WAITING + 1, __ATOMIC_RELAXED);
	probe_op1_in(traced, wait, cl, r, ip, (uintptr_t)list);

	/*
	 * Acquire as well as release: if a waker took the list before we got on it, its writes
	 * (the condition the caller checks next) are visible to us; otherwise it sees us and
	 * wakes us. Both sides are read-modify-writes of list->list.first, so one of the two holds.
	 */
	cl->list.next = __atomic_load_n(&list->list.first, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&list->list.first, &cl->list.next, &cl->list, true,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		;
	return true;
}

PROBE_COLD bool wait_traced(struct closure_waitlist *list, struct closure *cl, uintptr_t ip)
{
	return wait_body(list, cl, ip, true);
}

bool closure_wait(struct closure_waitlist *list, struct closure *cl)
{
	if (PROBE_OP_TRACED(wait))
		return wait_traced(list, cl, CALLER_IP());
	return wait_body(list, cl, CALLER_IP(), false);
}

PROBE_BODY void wake_up_body(struct closure_waitlist *list, uintptr_t ip, const bool traced)
{
	struct closure_llist_node *node, *reversed = NULL, *next;
	struct closure *cl;

	/*
	 * Release: the waker's earlier writes are visible to a closure that waits after this
	 * (closure_wait pairs with it), and each put below releases them to the closures woken.
	 * Acquire: the waiters' links and fields are visible here.
	 */
	node = __atomic_exchange_n(&list->list.first, NULL, __ATOMIC_ACQ_REL);
	/* The list is LIFO; reverse it so that the first to wait is the first woken. */
	for (; node; node = next) {
		next = node->next;
		node->next = reversed;
		reversed = node;
	}
	for (node = reversed; node; node = next) {
		cl = container_of(node, struct closure, list);
		next = node->next; /* the put below may requeue cl, reusing its link */
		/* closure_set_waiting(cl, 0), as the kernel's wake-up */
		__atomic_store_n(&cl->waiting_on, 0, __ATOMIC_RELAXED);
		SUB_AND_SETTLE(traced, cl, CLOSURE_WAITING + 1, "closure_wake_up", ip,
			       probe_op1_settle(traced, wake, cl, r, ip, (uintptr_t)list));
	}
}

PROBE_COLD void wake_up_traced(struct closure_waitlist *list, uintptr_t ip)
{
	wake_up_body(list, ip, true);
}

void closure_wake_up(struct closure_waitlist *list)
{
	if (PROBE_OP_TRACED(wake))
		wake_up_traced(list, CALLER_IP());
	else
		wake_up_body(list, CALLER_IP(), false);
}

/* The longest timeout honoured as such (31 years): longer is no limit, and no overflow. */
#define SYNC_TIMEOUT_MAX_MS (1000ll * 1000 * 1000 * 1000)

/* Sleeps until only the running reference is left (r: the count when it was called). */
static __attribute__((noinline)) int closure_sync_sleep(struct closure *cl, uint32_t r,
							long timeout_ms, uintptr_t ip)
{
	uint64_t deadline = 0; /* none */
	int ret = 0;

	closure_require_running(cl, "closure_sync",
				ip); /* only its owner may wait for the others */
	if (timeout_ms >= 0 && timeout_ms <= SYNC_TIMEOUT_MAX_MS)
		deadline = closure_clock_ns() + (uint64_t)timeout_ms * 1000000u;
	closure_debug_sync_begin(cl, ip);
	if (PROBE_TRACED(sync_begin))
		closure_stack_first_use(cl, ip, r);
	/* One step: give up the running reference and ask the last put to wake us. */
	SUB_AND_SETTLE(
		PROBE_TRACED(sync_begin), cl, CLOSURE_REMAINING_INITIALIZER - CLOSURE_SLEEPING,
		"closure_sync", ip,
		probe_op1_settle(PROBE_TRACED(sync_begin), sync_begin, cl, r, ip, timeout_ms));
	for (;;) {
		r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_ACQUIRE);
		if (!(r & CLOSURE_SLEEPING))
			break;
		if (closure_sleep_on(CLOSURE_WORD(cl), r, deadline) != ETIMEDOUT)
			continue;
		/* Timed out: take the running reference back, unless the last put just did. */
		r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_ACQUIRE);
		while ((r & CLOSURE_SLEEPING) &&
		       !__atomic_compare_exchange_n(CLOSURE_WORD(cl), &r,
						    r + CLOSURE_REMAINING_INITIALIZER -
							    CLOSURE_SLEEPING,
						    true, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			;
		if (r & CLOSURE_SLEEPING)
			ret = -ETIME;
		break;
	}
	closure_debug_sync_end(cl);
	r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);
	probe_op1(sync_end, cl, r, ip, (long)ret);
	return ret;
}

/* The same, as closure_sleep_off_stack() calls it (lib/sleep.c: under memcheck). */
static uintptr_t sync_sleep_words(uintptr_t cl, uintptr_t r, uintptr_t timeout_ms, uintptr_t ip)
{
	return (uintptr_t)(intptr_t)closure_sync_sleep((struct closure *)cl, (uint32_t)r,
						       (long)timeout_ms, ip);
}

/* Nothing outstanding, and traced: both probes. */
static __attribute__((noinline)) int sync_nothing_traced(struct closure *cl, uint32_t r,
							 long timeout_ms, uintptr_t ip)
{
	closure_stack_first_use(cl, ip, r);
	probe_op1(sync_begin, cl, r, ip, timeout_ms);
	r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);
	probe_op1(sync_end, cl, r, ip, 0L);
	return 0;
}

/*
 * With nothing outstanding (the common case: kernel code syncs on fast paths too), untraced, a
 * sync is a load and two branches; the rest is out of line, called last so that nothing has to
 * be kept across it.
 */
static inline int closure_sync_at(struct closure *cl, long timeout_ms, uintptr_t ip)
{
	/* Acquire: when nothing is outstanding, the last put's writes are still visible. */
	uint32_t r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_ACQUIRE);

	/*
	 * Only the running reference left, held by the caller: done; so is a closure never
	 * initialised (all zero), as in the kernel, where no closure_get happened on it. Not
	 * running with a reference out (its owner gave the running one up; this caller does not own
	 * it): the slow path, which says the rule is broken.
	 */
	if ((r & CLOSURE_REMAINING_MASK) > 1 || (r && !(r & CLOSURE_RUNNING))) {
		/* Under memcheck: off the program's stack (lib/sleep.c). */
		if (__builtin_expect(closure_under_memcheck, 0))
			return (int)(intptr_t)closure_sleep_off_stack(
				sync_sleep_words, (uintptr_t)cl, r, (uintptr_t)timeout_ms, ip);
		return closure_sync_sleep(cl, r, timeout_ms, ip);
	}
	if (PROBE_TRACED_IF(PROBE_WORD(sync_begin) | PROBE_WORD(sync_end)))
		return sync_nothing_traced(cl, r, timeout_ms, ip);
	return 0;
}

void closure_sync(struct closure *cl)
{
	closure_sync_at(cl, -1, CALLER_IP());
}

int closure_sync_timeout(struct closure *cl, unsigned long timeout_ms)
{
	long ms = timeout_ms > (unsigned long)LONG_MAX ? LONG_MAX : (long)timeout_ms;

	return closure_sync_at(cl, ms, CALLER_IP());
}

/* bcachefs's exported names (closure.h): the same functions; the call site stays the caller's. */
#define CLOSURE_ALIAS(name, target) extern __typeof__(target) name __attribute__((alias(#target)))
/* And the names that are the same function here (closure.h says why; stack.c has another). */
CLOSURE_ALIAS(closure_sync_unbounded, closure_sync);
CLOSURE_ALIAS(bch2_closure_sub, closure_sub);
CLOSURE_ALIAS(__bch2_closure_wake_up, closure_wake_up);
CLOSURE_ALIAS(bch2_closure_wait, closure_wait);
CLOSURE_ALIAS(__bch2_closure_sync, closure_sync);
CLOSURE_ALIAS(__bch2_closure_sync_timeout, closure_sync_timeout);
CLOSURE_ALIAS(bch2_closure_return_sync, closure_return_sync);
CLOSURE_ALIAS(bch2_closure_sync_unbounded, closure_sync);
