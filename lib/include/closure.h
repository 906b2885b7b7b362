/* SPDX-License-Identifier: MIT */
#ifndef CLOSURE_H
#define CLOSURE_H

/*
 * Closures: a reference count, a continuation, and a parent.
 *
 * A closure stands for a piece of asynchronous work that is "still happening". Its count says how
 * many things it still waits for; each outstanding thing (an I/O in flight, a child closure, a
 * slot on a waitlist) holds one reference. When the last reference is put back, the closure does
 * what it was told to do next:
 *
 *  - run its continuation, if one was set with continue_at(cl, fn, wq): fn runs on the workqueue
 *    wq, or, when wq is NULL, right there in the thread that dropped the last reference;
 *  - otherwise it is finished: its destructor (if any) runs, then the reference it holds on its
 *    parent is put back, which may finish or continue the parent in turn.
 *
 * The thread that initialises a closure owns its first reference, the "running" reference. While
 * the owner holds it the closure cannot complete, so the owner can start work and take references
 * without racing the completion:
 *
 *	struct request { struct closure cl; ... };
 *
 *	static void request_done(struct closure *cl)
 *	{
 *		struct request *r = container_of(cl, struct request, cl);
 *		...				// every I/O has completed
 *		closure_return(cl);		// finished: the parent is put
 *	}
 *
 *	void submit(struct request *r, struct closure *parent)
 *	{
 *		closure_init(&r->cl, parent);	// count 1, a reference on parent
 *		for (i = 0; i < n; i++) {
 *			closure_get(&r->cl);	// one per I/O, put by its completion
 *			start_io(r, i);
 *		}
 *		continue_at(&r->cl, request_done, wq);	// drop the running reference
 *		return;				// r may already be running elsewhere, or gone
 *	}
 *
 *	void io_completion(struct request *r) { closure_put(&r->cl); }
 *
 * continue_at() gives up the running reference: after it the closure may run on another thread,
 * so the caller must return at once. When fn runs it owns a fresh running reference and may take
 * references and continue_at() again, so a chain of steps reads like straight-line code.
 *
 * A parent waits for its children the way a stack frame waits for the calls it makes: a child
 * holds a reference on its parent from closure_init() until it finishes. A continuation of the
 * child does not release the parent; only finishing does.
 *
 * Waiting: closure_sync(cl) sleeps until the owner's running reference is the only one left.
 * A closure on the stack (closure_init_stack) is used this way: take references, hand them out,
 * closure_sync(). A waitlist (struct closure_waitlist) lets closures wait for an event:
 * closure_wait(list, cl) takes a reference that closure_wake_up(list) puts back.
 *
 * This is the kernel's API (include/linux/closure.h; LWN, "The kernel closure API") with the
 * kernel's semantics, in userspace: workqueues are thread pools (workqueue_create) and sleeping is
 * a futex. The rules the kernel BUG()s or WARN()s on are enforced: a count that would go below
 * zero, a closure put on a second waitlist, a continuation given up by a closure that is not
 * running, a continuation queued while still queued; so is a continuation given or queued on a
 * workqueue already destroyed and, built with CLOSURE_DEBUG, a get, put or sub on a closure that
 * is not alive (freed and reused, or never initialised). Each prints one line naming the closure,
 * the operation and the call site (object+offset, for addr2line), and aborts.
 *
 * Continuations come in both of the kernel's forms, and one program may mix them:
 *
 *	static void old_step(struct closure *cl) { ... }	// before Linux 6.8, and LWN
 *
 *	static CLOSURE_CALLBACK(new_step)			// Linux 6.8 and later
 *	{
 *		closure_type(r, struct request, cl);	// r: the struct request around the closure
 *		...
 *	}
 *
 * closure_fn is the newest form, void (struct closure_work *), as the kernel's closure_fn takes
 * its work_struct; &cl->work is that argument, so a callback may also be called directly,
 * new_step(&cl->work). continue_at() and the other functions that take a continuation accept
 * either form: a C11 _Generic in their macros (CLOSURE_FN_REF below) records which form it is, and
 * the library calls each with the argument its type declares, so no function is ever called
 * through a pointer of the wrong type.
 *
 * Every operation fires a USDT probe (provider "closure"), so closuretrace, bpftrace or any USDT
 * tool can show what each closure waits for; docs/probes.md lists them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "closure_config.h"

#ifndef CLOSURE_PROBES
#define CLOSURE_PROBES 0
#endif

#if CLOSURE_PROBES
#ifndef STAP_SDT_ARG_CONSTRAINT
/* Registers and immediates only: libbpf 1.1 rejects some memory operand forms. */
#define STAP_SDT_ARG_CONSTRAINT nr
#endif
#include <sys/sdt.h>
#ifdef __clang__
/* sys/sdt.h passes no argument to a macro's "...": clang -pedantic would say so at every probe. */
#define CLOSURE_SDT_BEGIN                                                                          \
	_Pragma("clang diagnostic push")                                                           \
		_Pragma("clang diagnostic ignored \"-Wgnu-zero-variadic-macro-arguments\"")
#define CLOSURE_SDT_END _Pragma("clang diagnostic pop")
#else
#define CLOSURE_SDT_BEGIN
#define CLOSURE_SDT_END
#endif
#define CLOSURE_PROBE4(name, a, b, c, d)                                                           \
	CLOSURE_SDT_BEGIN STAP_PROBE4(closure, name, a, b, c, d) CLOSURE_SDT_END
#define CLOSURE_PROBE5(name, a, b, c, d, e)                                                        \
	CLOSURE_SDT_BEGIN STAP_PROBE5(closure, name, a, b, c, d, e) CLOSURE_SDT_END
#define CLOSURE_PROBE6(name, a, b, c, d, e, f)                                                     \
	CLOSURE_SDT_BEGIN STAP_PROBE6(closure, name, a, b, c, d, e, f) CLOSURE_SDT_END
#define CLOSURE_PROBE7(name, a, b, c, d, e, f, g)                                                  \
	CLOSURE_SDT_BEGIN STAP_PROBE7(closure, name, a, b, c, d, e, f, g) CLOSURE_SDT_END
#else
#define CLOSURE_PROBE4(name, a, b, c, d)          ((void)0)
#define CLOSURE_PROBE5(name, a, b, c, d, e)       ((void)0)
#define CLOSURE_PROBE6(name, a, b, c, d, e, f)    ((void)0)
#define CLOSURE_PROBE7(name, a, b, c, d, e, f, g) ((void)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct closure;
/* libclosure's own workqueue, a pool of threads: workqueue_create(). */
struct workqueue;
/*
 * A program's own workqueue, the kernel's type name, opaque to libclosure. A closure continued on
 * one is handed to the program's queue_work() (see "A program's own executor" below).
 */
struct workqueue_struct;

/*
 * &cl->work: what a CLOSURE_CALLBACK function receives, and the work item a program's own
 * executor queues. Laid out as the kernel's struct work_struct (data, entry, func) under its own
 * name, so that a program's work_struct does not clash: a program's queue_work() links it on its
 * queue and its worker calls func(work), which runs the continuation.
 */
struct closure_work {
	unsigned long data; /* the executor's: the kernel keeps its PENDING bit here */
	struct closure_work_entry {
		struct closure_work_entry *next, *prev;
	} entry;				 /* the executor's queue link */
	void (*func)(struct closure_work *work); /* set by libclosure when it queues */
};

/* A continuation, the newest kernel form (6.8+): write it as CLOSURE_CALLBACK(name). */
typedef void(closure_fn)(struct closure_work *ws);
/* A continuation in the older form, void fn(struct closure *cl). */
typedef void(closure_fn_cl)(struct closure *cl);

/* void name(struct closure_work *ws): a continuation or destructor in the newest form. */
#define CLOSURE_CALLBACK(name) void name(struct closure_work *ws)

/* In a CLOSURE_CALLBACK: declares cl, the closure, and name, the type around it at member. */
#define closure_type(name, type, member)                                                           \
	struct closure *cl = container_of(ws, struct closure, work);                               \
	type *name = container_of(cl, type, member)

/* A continuation of either form, and which form it is; CLOSURE_FN_REF(fn) makes one. */
struct closure_fn_ref {
	closure_fn *fn;
	int takes_closure; /* 1: fn is really a closure_fn_cl */
};

#ifndef __cplusplus
/* A continuation of either form, or NULL; anything else does not compile. */
#define CLOSURE_FN_REF(f)                                                                          \
	_Generic((f),                                                                              \
		closure_fn_cl *: (struct closure_fn_ref){(closure_fn *)(f), 1},                    \
		closure_fn *: (struct closure_fn_ref){(closure_fn *)(f), 0},                       \
		void *: (struct closure_fn_ref){(closure_fn *)(f), 0},                             \
		int: (struct closure_fn_ref){(closure_fn *)(f), 0},                                \
		long: (struct closure_fn_ref){(closure_fn *)(f), 0})
#else
/*
 * C++: overloads instead. Plain overloads on the pointer types would make NULL and 0 ambiguous
 * (both are integers in C++, and convert to every pointer type alike), so a template takes the
 * pointer at its exact type and hands it to the overloads, while a null pointer constant, which
 * has no pointer type to deduce, can only go to the overload on closure_null_t: a pointer to
 * member, which NULL, 0 and nullptr convert to and no other value does.
 */
} /* extern "C": overloads are C++ */
extern "C++" {
struct closure_null_tag_ {
};
typedef int closure_null_tag_::*closure_null_t;

static inline struct closure_fn_ref closure_fn_ref_typed(closure_fn *f)
{
	return {f, 0};
}
static inline struct closure_fn_ref closure_fn_ref_typed(closure_fn_cl *f)
{
	return {(closure_fn *)f, 1};
}
/* A function of either form or a pointer to one (a lambda: +lambda); else no overload fits. */
template <typename T> static inline struct closure_fn_ref closure_fn_ref_of(T *f)
{
	return closure_fn_ref_typed(f);
}
static inline struct closure_fn_ref closure_fn_ref_of(closure_null_t)
{
	return {nullptr, 0};
}
} /* extern "C++" */
extern "C" {
#define CLOSURE_FN_REF(f) closure_fn_ref_of(f)
#endif

/*
 * Where a continuation runs: libclosure's own workqueue, a program's own workqueue_struct, or
 * neither (NULL: in the thread that puts the last reference). CLOSURE_WQ_REF(wq) makes one from
 * either pointer type, so that continue_at() takes both without a cast.
 */
struct closure_wq_ref {
	struct workqueue *own;
	struct workqueue_struct *program;
};

#ifndef __cplusplus
/* Either workqueue type, or NULL; a pointer of any other type does not compile. */
#define CLOSURE_WQ_REF(w)                                                                          \
	_Generic((w),                                                                              \
		struct workqueue *: (struct closure_wq_ref){(struct workqueue *)(w), NULL},        \
		struct workqueue_struct *: (struct closure_wq_ref){NULL,                           \
								   (struct workqueue_struct *)(w)},  \
		void *: (struct closure_wq_ref){(struct workqueue *)(w), NULL},                    \
		int: (struct closure_wq_ref){NULL, NULL},                                          \
		long: (struct closure_wq_ref){NULL, NULL})
#else
/* C++: as CLOSURE_FN_REF above, a template at the exact pointer type, or a null constant. */
} /* extern "C": overloads are C++ */
extern "C++" {
static inline struct closure_wq_ref closure_wq_ref_typed(struct workqueue *w)
{
	return {w, nullptr};
}
static inline struct closure_wq_ref closure_wq_ref_typed(struct workqueue_struct *w)
{
	return {nullptr, w};
}
template <typename T> static inline struct closure_wq_ref closure_wq_ref_of(T *w)
{
	return closure_wq_ref_typed(w);
}
static inline struct closure_wq_ref closure_wq_ref_of(closure_null_t)
{
	return {nullptr, nullptr};
}
} /* extern "C++" */
extern "C" {
#define CLOSURE_WQ_REF(w) closure_wq_ref_of(w)
#endif

/*
 * The kernel's types where code reads them directly, laid out as the kernel's: remaining is an
 * atomic_t ({ int counter; }: atomic_read(&cl->remaining), .remaining.counter = ...), a waitlist
 * is an llist_head whose first node is &cl->list of the last closure to wait (list.first,
 * cl->list.next; bcachefs's journal waits open-coded this way, fs/journal/journal.c
 * journal_buf_wait). A program that has these types (the kernel's or bcachefs-tools'
 * <linux/atomic.h> and <linux/llist.h>, included first, or CLOSURE_KERNEL_TYPES defined) gets
 * them by their own names, so that its atomic_*() and llist code take them; anyone else gets
 * types of the same layout under libclosure's names. Either way the library sees the same bytes.
 */
#if defined(CLOSURE_KERNEL_TYPES) || defined(_LINUX_ATOMIC_H) || defined(__TOOLS_LINUX_ATOMIC_H)
#define CLOSURE_ATOMIC_T atomic_t
#else
typedef struct {
	int counter;
} closure_atomic_t;
#define CLOSURE_ATOMIC_T closure_atomic_t
#endif
#if defined(CLOSURE_KERNEL_TYPES) || defined(LLIST_H)
#define CLOSURE_LLIST_NODE struct llist_node
#define CLOSURE_LLIST_HEAD struct llist_head
#else
struct closure_llist_node {
	struct closure_llist_node *next;
};
struct closure_llist_head {
	struct closure_llist_node *first;
};
#define CLOSURE_LLIST_NODE struct closure_llist_node
#define CLOSURE_LLIST_HEAD struct closure_llist_head
#endif

/*
 * A lock-free LIFO of waiting closures; closure_wake_up() wakes them in FIFO order. The kernel's
 * struct closure_waitlist (include/linux/closure.h): list.first is &cl->list of the closure that
 * waited last, NULL when empty.
 */
struct closure_waitlist {
	CLOSURE_LLIST_HEAD list;
};

/* clang-format off: the nesting on one line, as a user writes it */
#define CLOSURE_WAITLIST_INIT {{NULL}}
/* clang-format on */

/*
 * remaining: the count in the low 24 bits, flags above. Each flag has a clear guard bit above it,
 * and bit 23 guards the count: adding a flag twice, removing one that is not set, or putting a
 * reference that is not there carries or borrows into a guard bit, and is caught.
 */
#define CLOSURE_REMAINING_MASK 0x00ffffffu
#define CLOSURE_DESTRUCTOR     (1u << 24) /* at zero, fn is a destructor: run it, then finish */
#define CLOSURE_SLEEPING       (1u << 26) /* closure_sync() sleeps until the count is back to 1 */
#define CLOSURE_WAITING        (1u << 28) /* on a waitlist, which holds a reference */
#define CLOSURE_RUNNING        (1u << 30) /* somebody owns the running reference */
#define CLOSURE_GUARD_MASK                                                                         \
	(((CLOSURE_DESTRUCTOR | CLOSURE_SLEEPING | CLOSURE_WAITING | CLOSURE_RUNNING) << 1) |      \
	 (CLOSURE_DESTRUCTOR >> 1))
#define CLOSURE_REMAINING_INITIALIZER (1u | CLOSURE_RUNNING)

/*
 * Embed it in your own struct. Only the closure_* functions touch it; the fields are public so
 * that it can be embedded and inspected, not to be written by hand.
 */
struct closure {
	struct closure_work work;   /* &cl->work: what a CLOSURE_CALLBACK function gets */
	CLOSURE_ATOMIC_T remaining; /* count | flags: CLOSURE_WORD(cl) in the library */
	struct closure *parent;	    /* holds a reference on it until this closure finishes */
	closure_fn *fn;		    /* continuation, or destructor with CLOSURE_DESTRUCTOR */
	struct workqueue *wq;	    /* where fn runs; NULL (and no program_wq): in the last put */
	struct workqueue_struct *program_wq; /* or there: a program's own workqueue */
	union {			      /* never both: a waitlist's reference keeps it off a queue */
		struct closure *next; /* unused (the workqueue links cl->work): kept for the layout */
		CLOSURE_LLIST_NODE list; /* link on a waitlist, as the kernel's cl->list */
	};
	struct closure_waitlist *waitlist; /* the list it waits on, while CLOSURE_WAITING */
	uintptr_t released_at;	    /* call site of the put that queued fn (the run probe's ip) */

	/* The live registry (closure_debug.h) and closure_debug_dump(): every build, one layout. */
	uintptr_t ip;		/* where it was initialised or last given a continuation */
	uintptr_t waiting_on;	/* who called closure_wait() */
	struct closure **registry_slot; /* its slot in the registry while listed, else NULL */
	void *reserved;			/* 0 (the second link of the list before the registry) */
	uint32_t magic;
	uint8_t fn_takes_closure; /* fn is a closure_fn_cl, the older form (CLOSURE_FN_REF) */
	uint8_t queued;		  /* atomic: on a workqueue, not started yet (the kernel's PENDING) */
	/* The sampling session (docs/probes.md) that left this closure's tree out of the batched
	 * records, or 0: decided at the init of its root, inherited at init from the parent. In
	 * what was padding: the layout does not change. */
	uint8_t left_out;
	uint8_t reserved_byte;	/* 0 (a list index before the registry) */
	uint32_t sync_tid;	/* the thread sleeping in closure_sync(), or 0 */
	uint32_t init_tid;	/* the thread that initialised it (in what was padding) */
	uintptr_t sync_ip;	/* where it sleeps in closure_sync(), or 0 */
	uintptr_t init_ip;	/* where it was initialised: with its first continuation, its kind */
	/* CLOCK_MONOTONIC ns of its init (every build, to a few ms: CLOCK_MONOTONIC_COARSE), its
	 * last continuation and its closure_wait() (CLOSURE_DEBUG, else 0), its closure_sync()
	 * sleep (every build): the ages `closuretrace ps` shows. */
	uint64_t init_ns, ip_ns, wait_ns, sync_ns;
};

/* remaining as the unsigned word the library's atomics operate on (same object, same bytes). */
#define CLOSURE_WORD(cl) ((uint32_t *)&(cl)->remaining.counter)

/*
 * Values of cl->magic, as the kernel's CONFIG_DEBUG_CLOSURES (include/linux/closure.h): set in
 * every build, checked by CLOSURE_DEBUG builds (closure_config.h: CLOSURE_DEBUG_CHECKS).
 */
#define CLOSURE_MAGIC_DEAD  0xc054deadu
#define CLOSURE_MAGIC_ALIVE 0xc054a11eu
#define CLOSURE_MAGIC_STACK 0xc05451ccu

/* Initialised (closure_init, closure_init_stack) and neither finished nor destroyed. */
static inline bool closure_magic_live(struct closure *cl)
{
	/* Relaxed: set at init before the count is published, at the finish after the last put. */
	uint32_t magic = __atomic_load_n(&cl->magic, __ATOMIC_RELAXED);

	return magic == CLOSURE_MAGIC_ALIVE || magic == CLOSURE_MAGIC_STACK;
}

/*
 * A get or put found cl not alive (remaining: the count it found): freed and reused, or never
 * initialised. Aborts; not declared noreturn, so that its return address stays in the caller.
 */
void closure_not_alive(struct closure *cl, uint32_t remaining, const char *op);
#if CLOSURE_DEBUG_CHECKS
/* After the count's own checks, whose message says more when they fail: a finished closure is 0. */
#define CLOSURE_CHECK_LIVE(cl, r, op)                                                              \
	(__builtin_expect(closure_magic_live(cl), 1) ? (void)0 : closure_not_alive(cl, r, op))
#else
#define CLOSURE_CHECK_LIVE(cl, r, op) ((void)0) /* no check, no cost */
#endif

/* Internal entry points behind the inline fast paths; not API. */
void closure_sub_slow(struct closure *cl, uint32_t v, int op);
/*
 * Batched tracing (docs/probes.md): the batch probe's semaphore, raised while a tracer takes
 * batches, read through a pointer: a copy relocation of the variable itself into the executable
 * would never see the kernel raise the library's. The records of the inline get and put are made
 * out of line, so that their return address is the caller's line.
 */
extern unsigned short *const closure_batch_active;
/* The batch registry's sampling session (0: none): a closure whose left_out is this session
 * makes no batch record. Read only while batching. */
extern const unsigned char *const closure_batch_session;
#define CLOSURE_RECORDED(cl) ((cl)->left_out == 0 || (cl)->left_out != *closure_batch_session)
void closure_batch_get(struct closure *cl, uint32_t r, int not_zero);
void closure_batch_put(struct closure *cl, uint32_t r);
/* A put's record: its time before the compare-and-swap (0: none), then the record or not. */
uint64_t closure_batch_clock(void);
void closure_batch_put_at(struct closure *cl, uint32_t r, uint64_t ts);
void closure_batch_unclock(void);
#if CLOSURE_PROBES && !defined(CLOSURE_NO_BATCH) /* CLOSURE_NO_BATCH: benchmarks' baseline */
#define CLOSURE_BATCHING() __builtin_expect(*(volatile unsigned short *)closure_batch_active, 0)
#else
#define CLOSURE_BATCHING() 0
#endif
/*
 * closure_get found the count was 0, or took it to its guard bit (r: the count after). Aborts; not
 * declared noreturn, so that its return address stays inside the caller.
 */
void closure_get_finished(struct closure *cl, uint32_t r);
enum { CLOSURE_OP_PUT = 0, CLOSURE_OP_SUB = 1 };

/* The number of references outstanding (a relaxed read: a hint, unless you own the closure). */
static inline unsigned closure_nr_remaining(struct closure *cl)
{
	return __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED) & CLOSURE_REMAINING_MASK;
}

/* Take a reference. The caller must already hold one (or own the running one). */
static inline __attribute__((always_inline)) void closure_get(struct closure *cl)
{
	uint32_t r = __atomic_add_fetch(CLOSURE_WORD(cl), 1, __ATOMIC_RELAXED);

	/*
	 * A count that was 0 (the closure finished, its memory may be reused: the kernel BUGs on
	 * this under CONFIG_DEBUG_CLOSURES), or one that reached the count's guard bit (2^23: the
	 * kernel's CLOSURE_BUG on guard bits): one compare, as unsigned, catches both. Checked in
	 * every build, probes or not: the probe then costs only its nop, the count after is at
	 * hand.
	 */
	if (__builtin_expect((r & CLOSURE_REMAINING_MASK) - 2u >= (CLOSURE_DESTRUCTOR >> 1) - 2u,
			     0))
		closure_get_finished(cl, r);
	CLOSURE_CHECK_LIVE(cl, r - 1, "closure_get");
	/*
	 * The record before the probe, as in the library: r is then dead once the probe has its
	 * arguments, and needs no copy. The batch word after the atomic: see closure_put.
	 */
	if (CLOSURE_BATCHING() && CLOSURE_RECORDED(cl)) {
		closure_batch_get(cl, r, 0);
		__asm__ volatile(""); /* not a tail call: see CLOSURE_NOT_TAIL below */
	}
	CLOSURE_PROBE5(get, cl, r & CLOSURE_REMAINING_MASK, r & ~CLOSURE_REMAINING_MASK, 0, 0);
}

/*
 * Take a reference unless the count is zero (the closure finished). For objects that others may
 * find while they are being torn down.
 */
static inline __attribute__((always_inline)) bool closure_get_not_zero(struct closure *cl)
{
	uint32_t old = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), r;

	do {
		if (!(old & CLOSURE_REMAINING_MASK))
			return false;
		r = old + 1;
		if (__builtin_expect(r & (CLOSURE_DESTRUCTOR >> 1), 0))
			closure_get_finished(cl, r); /* the guard bit: see closure_get */
	} while (!__atomic_compare_exchange_n(CLOSURE_WORD(cl), &old, r, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	CLOSURE_CHECK_LIVE(cl, old, "closure_get_not_zero");
	if (CLOSURE_BATCHING() && CLOSURE_RECORDED(cl)) /* the record first: see closure_get */
		closure_batch_get(cl, r, 1);
	CLOSURE_PROBE5(get, cl, r & CLOSURE_REMAINING_MASK, r & ~CLOSURE_REMAINING_MASK, 0, 1);
	return true;
}

/*
 * Put a reference back. The common case (other references remain, nothing is wrong) is one
 * compare-and-swap here; the last reference, and every anomaly, go to the library's one funnel.
 */
static inline __attribute__((always_inline)) void closure_put(struct closure *cl)
{
	/*
	 * The batch word is read beside the count, before the compare-and-swap: a locked
	 * instruction waits for the loads before it, so a load alone between two of them (this
	 * put's and the next operation's) would add its latency to the pair; beside the count's
	 * load (or, in closure_get, after its atomic, beside the next operation's loads) it
	 * overlaps with one.
	 */
	/* Whether its tree is recorded, read while our reference keeps cl alive. */
	bool batching = CLOSURE_BATCHING() && CLOSURE_RECORDED(cl);
	/*
	 * The record's time before the compare-and-swap: once it is done another thread may
	 * finish the closure and initialise another at this address, and every record of a life
	 * must be older than the next life's init (docs/probes.md, "Batched events").
	 */
	uint64_t ts = batching ? closure_batch_clock() : 0;
	uint32_t old = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), r = old - 1;

	if (__builtin_expect((old & CLOSURE_REMAINING_MASK) > 1 && !(r & CLOSURE_GUARD_MASK), 1)) {
		/* Before the compare-and-swap, after which it may finish on another thread. */
		CLOSURE_CHECK_LIVE(cl, old, "closure_put");
		if (__atomic_compare_exchange_n(CLOSURE_WORD(cl), &old, r, false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED)) {
			if (ts) { /* before the probe: see closure_get */
				closure_batch_put_at(cl, r, ts);
				__asm__ volatile("");
			}
			CLOSURE_PROBE4(put, cl, r & CLOSURE_REMAINING_MASK,
				       r & ~CLOSURE_REMAINING_MASK, 0);
			return;
		}
	}
	if (ts)
		closure_batch_unclock(); /* the library's funnel takes its own */
	closure_sub_slow(cl, 1, CLOSURE_OP_PUT);
	__asm__ volatile(""); /* not a tail call: see CLOSURE_NOT_TAIL below */
}

/* Drop v at once: references and flags (v = 1 is closure_put). */
void closure_sub(struct closure *cl, int v);

/*
 * Initialise; the caller owns the running reference. With a parent, takes a reference on it. A
 * closure cannot be its own parent (aborts). Built with CLOSURE_DEBUG, initialising a closure that
 * is still alive (not finished, not destroyed) aborts, as the kernel's CONFIG_DEBUG_CLOSURES BUGs.
 */
void closure_init(struct closure *cl, struct closure *parent);

/* For a closure on the stack: zeroed, no parent. Finish it with closure_sync() before returning. */
void closure_init_stack(struct closure *cl);

/*
 * closure_init_stack() whose count is published with a release store, for an object that other
 * threads may find and closure_get_not_zero() (this library's closure_init_stack does that too).
 */
void closure_init_stack_release(struct closure *cl);

/*
 * Clear CLOSURE_RUNNING without dropping a reference: the running reference becomes an ordinary
 * one, to be put by whoever it is handed to (bcache does this right after closure_init). Aborts
 * when the closure is not running.
 */
void closure_set_stopped(struct closure *cl);

/*
 * Set the continuation without giving up the running reference (see closure_queue). As in the
 * kernel, a plain store: allowed whether or not the closure is running.
 */
void set_closure_fn(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq);

/*
 * Run fn now, on wq or inline, handing it the caller's reference. Queueing a closure whose
 * continuation is still queued and has not started aborts (the kernel BUGs).
 */
void closure_queue(struct closure *cl);

/*
 * Give up the running reference; when the other references are gone, fn runs on wq (or in the
 * thread that puts the last one, when wq is NULL). The caller must return right after.
 */
void continue_at(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq);

/*
 * Run fn on wq now, without waiting for outstanding references; fn gets the caller's reference
 * (the running one, or, as in the kernel, any reference the caller holds).
 */
void continue_at_nobarrier(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq);

/* Finish once the other references are gone: the parent is put. Return right after. */
void closure_return(struct closure *cl);

/*
 * Finish once the other references are gone, running destructor(cl) first (it may free cl)
 * and only then putting the parent. Return right after.
 */
void closure_return_with_destructor(struct closure *cl, struct closure_fn_ref destructor);

/*
 * Finish synchronously: give up the running reference, sleep until the count is 0 (not 1, as
 * closure_sync), then put the parent in this thread. The count stays 0, so closure_get_not_zero()
 * fails from then on (closure_sync() then closure_return() would let one slip in between).
 */
void closure_return_sync(struct closure *cl);

/* closure_init(cl, parent), then run fn on wq (continue_at_nobarrier). */
void closure_call(struct closure *cl, struct closure_fn_ref fn, struct closure_wq_ref wq,
		  struct closure *parent);

/*
 * Put cl on the waitlist, holding a reference until closure_wake_up(). False, doing nothing, when
 * cl is already waiting (on this list or another: a closure waits on one list at a time), as in
 * the kernel.
 */
bool closure_wait(struct closure_waitlist *list, struct closure *cl);

/* Wake every closure on the list, first come first woken, putting the reference each held. */
void closure_wake_up(struct closure_waitlist *list);

/* Sleep until every reference but the caller's running one is gone. */
void closure_sync(struct closure *cl);

/*
 * closure_sync(), giving up after timeout_ms: 0 when synced, -ETIME on timeout. The kernel's unit
 * is jiffies; here it is milliseconds.
 */
int closure_sync_timeout(struct closure *cl, unsigned long timeout_ms);

/* bcachefs's closure_sync() that does not trip the kernel's hung-task detector; userspace has
 * none, so it is closure_sync(). */
void closure_sync_unbounded(struct closure *cl);

/*
 * Take a closure off the live list (CLOSURE_DEBUG) and mark it dead, for code that frees a closure
 * in its own continuation instead of returning it (bcache's search_free, cache_set_free). Fires
 * the destroy probe. Aborts when the closure is not alive (destroyed twice, finished, or never
 * initialised); a stack closure is left alone, as in the kernel.
 */
void closure_debug_destroy(struct closure *cl);

/* The names bcachefs exports (fs/vendor/closure.c), the same functions here (ELF aliases). Its
 * __bch2_closure_wake_up skips closure_wake_up()'s barrier, and __bch2_closure_sync(_timeout) is
 * closure_sync()'s slow path: here both are the plain functions (ours orders itself; the fast path
 * is the same test). */
void bch2_closure_sub(struct closure *cl, int v);
void __bch2_closure_wake_up(struct closure_waitlist *list);
bool bch2_closure_wait(struct closure_waitlist *list, struct closure *cl);
void __bch2_closure_sync(struct closure *cl);
int __bch2_closure_sync_timeout(struct closure *cl, unsigned long timeout_ms);
void bch2_closure_return_sync(struct closure *cl);
void bch2_closure_sync_unbounded(struct closure *cl);

/*
 * Each operation records its call site as a return address (docs/probes.md, arg3). Kernel-style
 * code ends a function with continue_at() or closure_return(), which the compiler turns into a
 * tail call, whose return address is in the caller's caller (often a workqueue worker inside
 * libclosure). An empty asm after the call keeps it a real call, so the call site is the caller.
 */
#ifndef CLOSURE_INSIDE_LIBRARY
#define CLOSURE_NOT_TAIL(call)                                                                     \
	__extension__({                                                                            \
		call;                                                                              \
		__asm__ volatile("");                                                              \
	})
#define CLOSURE_NOT_TAIL_RET(type, call)                                                           \
	__extension__({                                                                            \
		type closure_ret_ = call;                                                          \
		__asm__ volatile("");                                                              \
		closure_ret_;                                                                      \
	})
#define closure_sub(cl, v)                CLOSURE_NOT_TAIL(closure_sub(cl, v))
#define closure_init(cl, parent)          CLOSURE_NOT_TAIL(closure_init(cl, parent))
#define closure_init_stack(cl)            CLOSURE_NOT_TAIL(closure_init_stack(cl))
#define closure_init_stack_release(cl)    CLOSURE_NOT_TAIL(closure_init_stack_release(cl))
#define closure_set_stopped(cl)           CLOSURE_NOT_TAIL(closure_set_stopped(cl))
#define set_closure_fn(cl, fn, wq)                                                                 \
	CLOSURE_NOT_TAIL(set_closure_fn(cl, CLOSURE_FN_REF(fn), CLOSURE_WQ_REF(wq)))
#define closure_queue(cl)                 CLOSURE_NOT_TAIL(closure_queue(cl))
#define continue_at(cl, fn, wq)                                                                    \
	CLOSURE_NOT_TAIL(continue_at(cl, CLOSURE_FN_REF(fn), CLOSURE_WQ_REF(wq)))
#define continue_at_nobarrier(cl, fn, wq)                                                          \
	CLOSURE_NOT_TAIL(continue_at_nobarrier(cl, CLOSURE_FN_REF(fn), CLOSURE_WQ_REF(wq)))
#define closure_return(cl)                CLOSURE_NOT_TAIL(closure_return(cl))
#define closure_return_with_destructor(cl, destructor)                                             \
	CLOSURE_NOT_TAIL(closure_return_with_destructor(cl, CLOSURE_FN_REF(destructor)))
#define closure_call(cl, fn, wq, parent)                                                           \
	CLOSURE_NOT_TAIL(closure_call(cl, CLOSURE_FN_REF(fn), CLOSURE_WQ_REF(wq), parent))
#define closure_wake_up(list)             CLOSURE_NOT_TAIL(closure_wake_up(list))
#define closure_sync(cl)                  CLOSURE_NOT_TAIL(closure_sync(cl))
#define closure_sync_timeout(cl, ms)      CLOSURE_NOT_TAIL_RET(int, closure_sync_timeout(cl, ms))
#define closure_debug_destroy(cl)         CLOSURE_NOT_TAIL(closure_debug_destroy(cl))
/* Spelled as bcachefs's fs/closure.h spells them, the plain name the bch2_ name, the wrapper on
 * that: a program's header that defines them so again repeats these definitions (no warning). */
#define closure_wait                      bch2_closure_wait
#define closure_return_sync               bch2_closure_return_sync
#define __closure_wake_up                 __bch2_closure_wake_up
#define closure_sync_unbounded            bch2_closure_sync_unbounded
#define bch2_closure_sub(cl, v)           CLOSURE_NOT_TAIL(bch2_closure_sub(cl, v))
#define __bch2_closure_wake_up(list)      CLOSURE_NOT_TAIL(__bch2_closure_wake_up(list))
#define bch2_closure_wait(list, cl)       CLOSURE_NOT_TAIL_RET(bool, bch2_closure_wait(list, cl))
#define __bch2_closure_sync(cl)           CLOSURE_NOT_TAIL(__bch2_closure_sync(cl))
#define __bch2_closure_sync_timeout(cl, ms)                                                        \
	CLOSURE_NOT_TAIL_RET(int, __bch2_closure_sync_timeout(cl, ms))
#define bch2_closure_return_sync(cl)      CLOSURE_NOT_TAIL(bch2_closure_return_sync(cl))
#define bch2_closure_sync_unbounded(cl)   CLOSURE_NOT_TAIL(bch2_closure_sync_unbounded(cl))
#endif

/*
 * Wait on the waitlist until cond is true, without testing cond first: the kernel's
 * __closure_wait_event(), for a caller that has just tested it. cond is evaluated again after
 * every wake-up of the list. A statement.
 */
#define __closure_wait_event(list, cond)                                                           \
	do {                                                                                       \
		struct closure cl_wait_event_;                                                     \
		closure_init_stack(&cl_wait_event_);                                               \
		for (;;) {                                                                         \
			closure_wait(list, &cl_wait_event_);                                       \
			if (cond)                                                                  \
				break;                                                             \
			closure_sync(&cl_wait_event_);                                             \
		}                                                                                  \
		closure_wake_up(list); /* there is no "remove": wake the list to leave it */       \
		closure_sync(&cl_wait_event_);                                                     \
	} while (0)

/* Wait on the waitlist until cond is true: the closure-based wait_event(). A statement. */
#define closure_wait_event(list, cond)                                                             \
	do {                                                                                       \
		if (!(cond))                                                                       \
			__closure_wait_event(list, cond);                                          \
	} while (0)

/*
 * Milliseconds on CLOCK_MONOTONIC: closure_wait_event_timeout's clock. Out of line, so that this
 * header needs no POSIX feature macro under -std=c11.
 */
long closure_now_ms(void);

/*
 * closure_wait_event() giving up after timeout milliseconds (the kernel's unit is jiffies): 0 when
 * cond is still false at the deadline, else the milliseconds left, at least 1. A statement
 * expression, as in the kernel (GCC and Clang; __extension__ keeps -pedantic quiet).
 */
#define closure_wait_event_timeout(list, cond, timeout)                                            \
	__extension__({                                                                            \
		long cl_until_ = closure_now_ms() + (long)(timeout), cl_left_;                     \
		struct closure cl_wait_timeout_;                                                   \
		if (cond) {                                                                        \
			cl_left_ = cl_until_ - closure_now_ms();                                   \
			cl_left_ = cl_left_ < 1 ? 1 : cl_left_;                                    \
		} else {                                                                           \
			closure_init_stack(&cl_wait_timeout_);                                     \
			for (;;) {                                                                 \
				closure_wait(list, &cl_wait_timeout_);                             \
				cl_left_ = cl_until_ - closure_now_ms();                           \
				if (cond) {                                                        \
					cl_left_ = cl_left_ < 1 ? 1 : cl_left_;                    \
					break;                                                     \
				}                                                                  \
				if (cl_left_ <= 0) {                                               \
					cl_left_ = 0;                                              \
					break;                                                     \
				}                                                                  \
				closure_sync_timeout(&cl_wait_timeout_, (unsigned long)cl_left_);  \
			}                                                                          \
			closure_wake_up(list); /* leave the list */                                \
			closure_sync(&cl_wait_timeout_);                                           \
		}                                                                                  \
		cl_left_;                                                                          \
	})

/*
 * The newest kernel API (bcachefs's vendored closures, fs/vendor/closure.{h,c}, 2025-09 on; the
 * same names in the kernel's include/linux/closure.h where it has them), for code that goes
 * around the functions above: open-coded waits, scope-guarded stack closures.
 */

/*
 * Record who waits (include/linux/closure.h closure_set_waiting: cl->waiting_on = f), for code
 * that puts a closure on a waitlist itself; closure_debug_dump() shows it. Kept in every build.
 */
static inline void closure_set_waiting(struct closure *cl, unsigned long f)
{
	__atomic_store_n(&cl->waiting_on, (uintptr_t)f, __ATOMIC_RELAXED);
}

/* The kernel's _THIS_IP_ and _RET_IP_ (include/linux/closure.h closure_set_ip, _set_ret_ip). */
#define closure_set_ip(cl)                                                                         \
	__extension__({                                                                            \
		__label__ closure_here_;                                                           \
	closure_here_:                                                                             \
		__atomic_store_n(&(cl)->ip, (uintptr_t) && closure_here_, __ATOMIC_RELAXED);       \
	})
#define closure_set_ret_ip(cl)                                                                     \
	__atomic_store_n(&(cl)->ip, (uintptr_t)__builtin_return_address(0), __ATOMIC_RELAXED)

/* closure_val_checks() found v broken: prints the kernel's message and aborts. Not API. */
void closure_val_bad(struct closure *cl, unsigned v, int d);

/*
 * Check a value of remaining that code computed itself, as the kernel checks its own
 * (fs/vendor/closure.h closure_val_checks, fs/vendor/closure.c bch2_closure_wait; bcachefs's
 * fs/journal/journal.c journal_buf_wait calls it after atomic_add_return(CLOSURE_WAITING + 1,
 * &cl->remaining)): a guard bit set (a flag added twice or taken while clear, a count that
 * borrowed), or a count of zero with a flag other than DESTRUCTOR or SLEEPING. d is the delta
 * that was applied, for the message. The kernel WARNs ("closure %ps has guard bits set: %x (%u),
 * delta %i", "closure %ps ref hit 0 with incorrect flags set: %x (%u)"); libclosure prints the
 * same words and the call site, and aborts, as for every broken rule.
 */
static inline void closure_val_checks(struct closure *cl, unsigned v, int d)
{
	if (__builtin_expect((v & CLOSURE_GUARD_MASK) ||
				     (!(v & CLOSURE_REMAINING_MASK) &&
				      (v & ~(CLOSURE_DESTRUCTOR | CLOSURE_SLEEPING))),
			     0))
		closure_val_bad(cl, v, d);
}

/*
 * CLASS(closure_stack, cl)(): a stack closure in a scope guard, synced when the scope ends
 * (fs/vendor/closure.h, open-coded DEFINE_CLASS(closure_stack): the kernel's cleanup.h CLASS()
 * declares class_closure_stack_t cl with class_closure_stack_destructor as its cleanup and
 * initialises it from class_closure_stack_constructor()). The constructor returns the closure
 * by value, so it is copied (moved) before its first operation: it is a plain value, count 1 and
 * running, no parent, no probe fired, nothing pointing at it. Its first operation through the
 * library (a wait, a sync, a sub, a child's init, or a get while batching) announces it to a
 * tracer as a stack closure initialised there, at its final address. CLASS() itself is the
 * program's (the kernel's include/linux/cleanup.h); this header does not define it.
 */
typedef struct closure class_closure_stack_t;

static inline struct closure class_closure_stack_constructor(void)
{
	struct closure cl;

	memset(&cl, 0, sizeof(cl));
	cl.remaining.counter = (int)CLOSURE_REMAINING_INITIALIZER;
	cl.magic = CLOSURE_MAGIC_STACK;
	return cl;
}

static inline void class_closure_stack_destructor(struct closure *cl)
{
	closure_sync(cl);
}

/* fs/vendor/closure.h bch2_closure_debug_create: a stub there; closure_init() lists already. */
static inline void bch2_closure_debug_create(struct closure *cl)
{
	(void)cl;
}

/*
 * Workqueues: a pool of threads that run continuations. workqueue_destroy() first runs
 * everything queued, including work queued while it drains; after it, a continuation given or
 * queued on it, or a second workqueue_destroy(), aborts at its call site.
 */
struct workqueue *workqueue_create(const char *name, int threads);
void workqueue_destroy(struct workqueue *wq);

/*
 * Per-thread set-up for a program whose continuations need it (its own "current", a liburcu
 * rcu_register_thread()): each worker calls thread_start(wq, arg) before it runs any work, and
 * thread_stop(wq, arg) after its last, before it exits (in workqueue_destroy). Either may be NULL.
 */
struct workqueue_hooks {
	void (*thread_start)(struct workqueue *wq, void *arg);
	void (*thread_stop)(struct workqueue *wq, void *arg);
	void *arg;
};
/* workqueue_create() whose threads run hooks (copied; NULL: none). */
struct workqueue *workqueue_create_hooked(const char *name, int threads,
					  const struct workqueue_hooks *hooks);

/*
 * A program's own executor. A closure continued on a struct workqueue_struct (the kernel's type:
 * a program that brings its own workqueues, as bcachefs-tools does) is queued the way the kernel's
 * closure_queue() does it: its work item is initialised (data 0, entry pointing at itself, func a
 * libclosure function that runs the continuation) and handed to
 *
 *	bool queue_work(struct workqueue_struct *wq, struct work_struct *work);
 *
 * the program's own, found by name when the program defines it (libclosure refers to it weakly),
 * or the function given to closure_set_queue_work(). The program's worker calls work->func(work)
 * on its own thread, with whatever per-thread state that thread has. queue_work() returning false
 * (already pending) aborts, as the kernel's BUG_ON does; so does a program workqueue with no
 * queue_work() at all.
 */
typedef bool(closure_queue_work_fn)(struct workqueue_struct *wq, struct closure_work *work);
/* Use queue_work for every program workqueue from now on (NULL: back to the program's). */
void closure_set_queue_work(closure_queue_work_fn *queue_work);

/*
 * Print every live closure, one line each (address, count, flags, continuation, parent, what it
 * waits on), as the kernel's debugfs "closures" file does. Lists nothing unless the library was
 * built with CLOSURE_DEBUG; returns the number of closures listed.
 */
int closure_debug_dump(FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* CLOSURE_H */
