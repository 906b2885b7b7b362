/*
 * Where a process's memory may be written: the readable and writable ranges of /proc/PID/maps,
 * to check an address a process named (a closure, a registry slot) before it is read. A closure
 * lives where the process writes (its heap, a thread's stack, its data); an address elsewhere
 * (its code, a file mapped read-only, unmapped) is none, and is not read at all.
 */
#ifndef CLOSURETRACE_PROC_MAPS_H
#define CLOSURETRACE_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Mappings kept at most (the kernel's default vm.max_map_count is 65,530). */
#define PROC_MAPS_MAX (1u << 18)

struct proc_maps {
	struct proc_range {
		uint64_t start, end;
	} * v; /* owned; sorted, readable and writable ranges only */
	size_t n;
	uint64_t read_ns; /* CLOCK_MONOTONIC when they were read (0: never) */
};

/* Reads pid's writable mappings into m (what m held is let go). 0, or -1 when its maps cannot be
 * read (the process is gone). */
int proc_maps_read(struct proc_maps *m, pid_t pid);

/* Whether [addr, addr + len) lies inside one readable and writable mapping of m. */
bool proc_maps_holds(const struct proc_maps *m, uint64_t addr, uint64_t len);

void proc_maps_free(struct proc_maps *m);

#endif
