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
 * Since version 4, every build keeps a registry of live closures: every closure initialised with
 * closure_init() that has not finished, and a stack closure while its owner sleeps in
 * closure_sync(). It is a list of chunks (the pointer at `registry` names the newest; each
 * chunk's pointer at chunk_off_next the one before, 0 ending the list), each chunk_size bytes,
 * starting with the uint64_t chunk_magic, holding chunk_slots pointers at chunk_off_slots. A slot
 * holds a live closure's address, or 0. The process is never stopped: a reader checks each entry
 * against the closure itself (its magic alive or stack, and the pointer at off_registry_slot
 * naming that very slot) and drops what fails, a closure that finished, or whose memory was
 * reused, while it read. Each closure carries its init site (off_init_ip), init time
 * (off_init_ns, CLOCK_MONOTONIC to a few ms) and init thread (off_init_tid, a uint32_t).
 *
 * Versions 1-3 kept a list only in CLOSURE_DEBUG builds (keeps_list 1), doubly linked through
 * off_prev/off_next with a sentinel struct closure at list_head; version 3 split it into
 * list_count lists of list_stride bytes each, a closure's list index a byte at off_list, each
 * list's seqlock counter at generation + i * list_stride. closuretrace still reads them.
 */
#ifndef CLOSURE_DEBUG_H
#define CLOSURE_DEBUG_H

#include <stdint.h>

#define CLOSURE_DEBUG_SECTION ".closure_debug"
#define CLOSURE_DEBUG_MAGIC   0x6762646c63ull /* "cldbg", little-endian */
#define CLOSURE_DEBUG_VERSION  4
#define CLOSURE_REGISTRY_MAGIC 0x6765726c63ull /* "clreg", little-endian: a chunk's first word */

struct closure_debug_info {
	uint64_t magic;	       /* CLOSURE_DEBUG_MAGIC */
	uint32_t version;      /* CLOSURE_DEBUG_VERSION: a reader refuses a newer one */
	uint32_t keeps_list;   /* 1: a list or registry (always, since version 4) */
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
	/* Version 4: the registry (see above); the list fields above are 0. */
	uint64_t registry;	 /* address of the pointer to the newest chunk */
	uint64_t chunk_magic;	 /* CLOSURE_REGISTRY_MAGIC */
	uint32_t chunk_size;	 /* bytes of a chunk */
	uint32_t chunk_off_next; /* a pointer: the chunk made before */
	uint32_t chunk_off_slots, chunk_slots;
	uint32_t off_registry_slot; /* a pointer: the slot holding the closure */
	uint32_t off_init_tid;	    /* a uint32_t: the thread that initialised it */
};

#endif
