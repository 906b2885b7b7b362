/*
 * One closure of a running process as libclosure's descriptor lays it out (closure_debug.h): its
 * bytes decoded, and, since version 4, one closure read alone where the process named it (an
 * address in a probe's arguments), validated as the live registry's entries are. What the process
 * says is hostile: the address is read only inside its writable mappings, and the closure kept
 * only when its magic is alive (or a stack closure's) and the registry slot it names holds it.
 */
#ifndef CLOSURETRACE_LIVE_CLOSURE_H
#define CLOSURETRACE_LIVE_CLOSURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/include/closure_debug.h"
#include "proc_maps.h"

/* The descriptor's closure_size is believed up to this (live_list.c checks it). */
#define LIVE_CLOSURE_SIZE_MAX 4096

/* One closure as it was read; addresses are the process's. */
struct live_closure {
	uint64_t addr, parent, fn, waitlist;
	uint64_t ip;	     /* return address: initialised or last given a continuation */
	uint64_t waiting_on; /* return address of closure_wait, while on a waitlist */
	uint64_t sync_ip;    /* return address of closure_sync, while sleeping in it */
	uint64_t init_ip;    /* return address of its init (0: an older libclosure) */
	/* CLOCK_MONOTONIC ns of its init, last continuation, closure_wait, closure_sync sleep
	 * (0: not known) */
	uint64_t init_ns, ip_ns, wait_ns, sync_ns;
	uint32_t remaining; /* count | flags */
	uint32_t sync_tid;
	uint32_t init_tid; /* the thread that initialised it (0: not known, before version 4) */
	size_t seq;	   /* place in the list as read */
	bool queued;	   /* on a workqueue, not started yet */
	bool stack;	   /* a stack closure (listed while it sleeps in closure_sync) */
};

/* A pointer field of a closure's bytes (d->pointer_size wide), and a 32-bit one. */
uint64_t live_field_ptr(const struct closure_debug_info *d, const unsigned char *node,
			uint32_t off);
uint32_t live_field_u32(const unsigned char *node, uint32_t off);

/* A closure's bytes (d->closure_size of them, read at addr) into c. */
void live_decode(const struct closure_debug_info *d, const unsigned char *node, uint64_t addr,
		 struct live_closure *c);

/* The magic of the bytes says alive, or a stack closure. */
bool live_magic(const struct closure_debug_info *d, const unsigned char *node);

enum live_read {
	LIVE_READ_OK,
	LIVE_READ_OUTSIDE,    /* not inside a writable mapping (or not aligned): not read */
	LIVE_READ_FAILED,     /* its memory could not be read (gone since the maps were read) */
	LIVE_READ_NOT_ALIVE,  /* no closure alive there: finished, or never one */
	LIVE_READ_NOT_LISTED, /* the registry slot it names does not hold it */
	LIVE_READ_NO_INIT,    /* alive, but its init site or time is not known */
	LIVE_READ_OLD,	      /* the descriptor is older than version 4: no slot to check */
};

/*
 * The closure at addr in process pid, read alone through process_vm_readv, into *out: d is the
 * process's descriptor (checked by live_list_read), maps its writable mappings (read by the
 * caller, who decides when they are stale). A closure alive must be in the registry slot it names
 * (a closure not listed, its slot unset when the library ran out of memory, is refused); a stack
 * closure names no slot outside closure_sync, or the slot holding it. LIVE_READ_OK, or why not.
 */
enum live_read live_closure_read(pid_t pid, const struct closure_debug_info *d,
				 const struct proc_maps *maps, uint64_t addr,
				 struct live_closure *out);

#endif
