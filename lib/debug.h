/*
 * The closure debug (private), the kernel's CONFIG_DEBUG_CLOSURES part in one place: the live
 * registry, kept in every build, and what CLOSURE_DEBUG adds to it (lib/debug.c the rest).
 *
 * The live registry: every closure alive now, so that a tool joining a running program
 * (closuretrace ps, record -p, top) sees what began before it came (closure_debug.h says how it
 * is read from outside; closure_debug_dump() prints it from inside).
 *
 * Cheap enough to be always on: a closure's init writes its address into a free slot of a chunk
 * its thread owns (no atomic read-modify-write, no lock), and remembers the slot; whoever finishes
 * it clears that slot (one store). Only the owner takes slots, looking for cleared ones from where
 * it stopped; a pass over all its chunks that found too few free adds one. Chunks are never freed
 * nor moved (a slot's address is kept in its closure): a thread that exits leaves its chunks to
 * the next new thread. A reader checks each entry against the closure's own magic and slot.
 */
#ifndef CLOSURE_LIB_DEBUG_H
#define CLOSURE_LIB_DEBUG_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "bug.h"
#include "clock.h"
#include "closure.h"

#pragma GCC visibility push(hidden)

#define REGISTRY_SLOTS 1020 /* a chunk's slots: with its header, 8 KiB */

struct registry_chunk {
	uint64_t magic;			 /* CLOSURE_REGISTRY_MAGIC (closure_debug.h) */
	struct registry_chunk *next;	 /* every chunk made, newest first (closure_registry) */
	struct registry_chunk *next_own; /* the owner's chunks, a ring */
	struct closure *slot[REGISTRY_SLOTS]; /* atomic: a live closure, or NULL */
};

/* A thread's part: the chunk and slot it looks at next. */
struct registry_log {
	struct registry_chunk *cur, *first;
	uint32_t cursor;  /* the next slot of cur to look at */
	uint32_t tid;	  /* the thread's id (a closure's init_tid) */
	uint32_t taken;	  /* slots taken since the pass over the ring began */
	uint32_t visited; /* chunks looked through since then */
	uint32_t chunks;  /* in the ring */
};

extern __thread struct registry_log registry_log __attribute__((tls_model("initial-exec")));

/* The newest chunk (closure_debug_info.registry points here). */
extern struct registry_chunk *closure_registry;

/* A free slot of this thread's, taken; NULL when out of memory (the closure is not listed). */
struct closure **registry_slot_slow(struct registry_log *log);

#ifdef CLOSURE_NO_REGISTRY
/* The benchmarks' baseline only (tests/suites/bench/registry.bench.sh): the library without it. */
static inline void registry_add(struct closure *cl)
{
	cl->registry_slot = NULL;
}
static inline uint64_t registry_now_ns(void)
{
	return 0;
}
#else
/* CLOCK_MONOTONIC_COARSE now, in ns: a closure's init time (to a few ms; no clock read costs
 * less). */
static inline uint64_t registry_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* cl (alive, or a stack closure asleep) into the registry, with its init thread. */
static inline void registry_add(struct closure *cl)
{
	struct registry_log *log = &registry_log;
	struct closure **slot;

	if (__builtin_expect(log->cur && log->cursor < REGISTRY_SLOTS, 1) &&
	    !__atomic_load_n(&log->cur->slot[log->cursor], __ATOMIC_RELAXED)) {
		slot = &log->cur->slot[log->cursor++];
		log->taken++;
	} else if (!(slot = registry_slot_slow(log))) {
		cl->registry_slot = NULL;
		return;
	}
	cl->init_tid = log->tid;
	cl->registry_slot = slot;
	/* Release: a reader that finds cl in its slot finds what init wrote before. */
	__atomic_store_n(slot, cl, __ATOMIC_RELEASE);
}

#endif

/* cl out of the registry (finished, destroyed, or a stack closure awake): its slot is free. */
static inline void registry_remove(struct closure *cl)
{
	struct closure **slot = cl->registry_slot;

	if (!slot)
		return;
	cl->registry_slot = NULL;
	__atomic_store_n(slot, NULL, __ATOMIC_RELEASE);
}

/* This thread's id, read once. */
uint32_t registry_tid(void);

/* Alive, and listed (the kernel's closure_debug_create): at init, before the count is published,
 * so that whoever finishes it finds its slot. */
static inline void closure_debug_create(struct closure *cl)
{
	/* Atomic: the inline get and put read it (closure_magic_live). */
	__atomic_store_n(&cl->magic, CLOSURE_MAGIC_ALIVE, __ATOMIC_RELAXED);
	registry_add(cl);
}

/* Out of the registry and dead (CLOSURE_MAGIC_DEAD); a closure that is not alive is left alone. */
static inline void closure_debug_unlist(struct closure *cl)
{
	if (cl->magic != CLOSURE_MAGIC_ALIVE)
		return; /* stack closures are listed only while they sleep */
	registry_remove(cl);
	/* Atomic: the inline get and put read it (closure_magic_live). */
	__atomic_store_n(&cl->magic, CLOSURE_MAGIC_DEAD, __ATOMIC_RELAXED);
}

/* The owner sleeps in closure_sync() at ip, then wakes (lists a stack closure meanwhile). */
void closure_debug_sync_begin(struct closure *cl, uintptr_t ip);
void closure_debug_sync_end(struct closure *cl);

#ifdef CLOSURE_DEBUG
/* Aborts (bug init_live) when cl is alive and listed, about to be reused (lib/debug.c). */
void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip);

/* Aborts (bug not_alive) when cl is not alive (closure_magic_live). */
static inline void closure_debug_check_live(struct closure *cl, uint32_t remaining, const char *op,
					    uintptr_t ip)
{
	if (__builtin_expect(!closure_magic_live(cl), 0))
		closure_not_alive_at(cl, remaining, op, ip);
}

/* *at = CLOCK_MONOTONIC now (the ages `closuretrace ps` shows). */
static inline void closure_debug_stamp(uint64_t *at)
{
	/* Relaxed: another thread (closure_debug_dump) or process may be reading it. */
	__atomic_store_n(at, closure_clock_ns(), __ATOMIC_RELAXED);
}
#else
/* Without CLOSURE_DEBUG no check and no stamp: the registry is asked only with it. */
static inline void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip)
{
	(void)cl, (void)op, (void)ip;
}

static inline void closure_debug_check_live(struct closure *cl, uint32_t remaining, const char *op,
					    uintptr_t ip)
{
	(void)cl, (void)remaining, (void)op, (void)ip;
}

static inline void closure_debug_stamp(uint64_t *at)
{
	(void)at;
}
#endif

#pragma GCC visibility pop

#endif
