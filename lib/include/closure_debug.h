/* SPDX-License-Identifier: MIT */
/*
 * The live-closure list as another process sees it: the descriptor that `closuretrace ps` (or a
 * debugger script) reads from a running program's memory to find libclosure's list of live
 * closures and the layout of struct closure, so that no tool hard-codes either.
 *
 * libclosure places one struct closure_debug_info in the ELF section named
 * CLOSURE_DEBUG_SECTION (a section survives strip; a symbol may not). A reader finds the section
 * in the file, adds the object's load bias, and reads the descriptor from the process. Every
 * field has a fixed size, so the reader needs no headers of the program's build.
 *
 * The list (CLOSURE_DEBUG builds only) holds every closure initialised with closure_init() that
 * has not finished, and a stack closure while its owner sleeps in closure_sync(). Since version 3
 * it is split into list_count lists, so that threads do not contend on one lock: a thread links
 * the closures it initialises into its own list (threads take the lists in turn; more threads
 * than lists share them), and whichever thread finishes a closure unlinks it from the list it is
 * on (its byte at off_list). Each list is circular and doubly linked through struct closure's
 * debug_next/debug_prev, with a sentinel struct closure: list i's at list_head + i * list_stride
 * (a sentinel whose debug_next is 0 heads an empty list, never used yet). Each list's counter,
 * at generation + i * list_stride, is odd while the list changes and grows with every change (a
 * seqlock; the writers' lock too): a reader that sees every counter even and the same before and
 * after its walk has read a consistent list. Before version 3 there was one list (list_count 1).
 */
#ifndef CLOSURE_DEBUG_H
#define CLOSURE_DEBUG_H

#include <stdint.h>

#define CLOSURE_DEBUG_SECTION ".closure_debug"
#define CLOSURE_DEBUG_MAGIC   0x6762646c63ull /* "cldbg", little-endian */
#define CLOSURE_DEBUG_VERSION 3

struct closure_debug_info {
	uint64_t magic;	       /* CLOSURE_DEBUG_MAGIC */
	uint32_t version;      /* CLOSURE_DEBUG_VERSION: a reader refuses a newer one */
	uint32_t keeps_list;   /* 1: built with CLOSURE_DEBUG; 0: list_head and generation are 0 */
	uint64_t list_head;    /* address of the first list's sentinel struct closure */
	uint64_t generation;   /* address of the first list's uint64_t counter (see above) */
	uint32_t closure_size; /* sizeof(struct closure) */
	uint32_t pointer_size; /* sizeof(void *) */
	/* offsets of the fields of struct closure */
	uint32_t off_remaining, off_parent, off_fn, off_waitlist, off_ip, off_waiting_on;
	uint32_t off_prev, off_next, off_magic, off_sync_tid, off_sync_ip;
	uint32_t magic_alive, magic_stack; /* values of magic: initialised, on the stack */
	uint32_t remaining_mask;	   /* the count's bits of remaining; flags above */
	uint32_t flag_destructor, flag_sleeping, flag_waiting, flag_running;
	uint32_t off_queued; /* a uint8_t: 1 while on a workqueue, not started (the kernel's Q) */
	/* Version 2: the init site (a pointer) and four uint64_t CLOCK_MONOTONIC ns times (0:
	 * not known): init, last continuation, closure_wait(), closure_sync() sleep. A version 1
	 * descriptor ends before them. */
	uint32_t off_init_ip, off_init_ns, off_ip_ns, off_wait_ns, off_sync_ns;
	/* Version 3: the lists (see above), and the offset of a closure's uint8_t list index. A
	 * version 2 descriptor ends before them. */
	uint32_t list_count, list_stride, off_list, reserved;
};

#endif
