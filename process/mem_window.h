/*
 * Many small reads of another process's memory, a window at a time: a walk of a linked list whose
 * nodes were allocated near each other (the live list) costs one system call per window instead
 * of one per node; a system call is most of a node's cost (process_vm_readv, 20 us a node in a
 * virtual machine). What a window holds is as old as its read: a caller that finds a node
 * inconsistent reads it again afresh.
 */
#ifndef CLOSURETRACE_MEM_WINDOW_H
#define CLOSURETRACE_MEM_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mem_windows;

/* Windows over pid's memory; NULL when out of memory. */
struct mem_windows *mem_windows_new(pid_t pid);
void mem_windows_free(struct mem_windows *w);

/* Every window read again from now on (a new pass over the list). */
void mem_windows_forget(struct mem_windows *w);

/*
 * Copies len bytes at addr into buf, from a window read before or read now (fresh: always now,
 * and the window with it). 0, or -errno as proc_mem_read.
 */
int mem_windows_read(struct mem_windows *w, uint64_t addr, void *buf, size_t len, bool fresh);

#endif
