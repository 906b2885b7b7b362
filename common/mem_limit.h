/*
 * The memory the tool may take: a limit on its data (RLIMIT_DATA: the heap and private mappings,
 * where every reader's model lives), so that a pathological trace (a .zst that inflates to
 * millions of closures, a hostile process's flood) ends with a clear error and exit 2 instead of
 * taking the machine. main sets a default (half the machine's memory); --max-memory sets another.
 * A command the tool launches gets the limit it had before (mem_limit_restore, in the child).
 */
#ifndef CLOSURETRACE_MEM_LIMIT_H
#define CLOSURETRACE_MEM_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

/* Half the machine's memory, at least 1 GiB. */
uint64_t mem_limit_default(void);

/* Limits the data to bytes (never above the limit the tool was started with). 0, or -1 with errno
 * set. */
int mem_limit_set(uint64_t bytes);

/* The limit set (0: none). */
uint64_t mem_limit_bytes(void);

/* The limit the tool was started with, back (in a launched command's child, before exec). */
void mem_limit_restore(void);

/* What an allocation that failed under the limit says: the limit and how to raise it. */
_Noreturn void mem_limit_exceeded(void);

/* " (past the memory limit of N MiB, --max-memory)" when a limit is set, else "": for the
 * messages of a reader that reports a failed allocation as an error of its own. */
const char *mem_limit_note(void);

#endif
