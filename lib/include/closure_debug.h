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
 * The list (CLOSURE_DEBUG builds only) is circular and doubly linked through struct closure's
 * debug_next/debug_prev, with a sentinel struct closure at list_head. It holds every closure
 * initialised with closure_init() that has not finished, and a stack closure while its owner
 * sleeps in closure_sync(). The counter at generation is odd while the list changes and grows
 * with every change (a seqlock): a reader that sees the same even value before and after its walk
 * has read a consistent list.
 */
#ifndef CLOSURE_DEBUG_H
#define CLOSURE_DEBUG_H

#include <stdint.h>

#define CLOSURE_DEBUG_SECTION ".closure_debug"
#define CLOSURE_DEBUG_MAGIC   0x6762646c63ull /* "cldbg", little-endian */
#define CLOSURE_DEBUG_VERSION 2

struct closure_debug_info {
	uint64_t magic;	       /* CLOSURE_DEBUG_MAGIC */
	uint32_t version;      /* CLOSURE_DEBUG_VERSION: a reader refuses a newer one */
	uint32_t keeps_list;   /* 1: built with CLOSURE_DEBUG; 0: list_head and generation are 0 */
	uint64_t list_head;    /* address of the sentinel struct closure */
	uint64_t generation;   /* address of a uint64_t: odd while the list changes (see above) */
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
};

#endif
