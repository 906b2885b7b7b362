/* libclosure's tests: the assertions of every C test (tests/check.h), and what only they need. */
#ifndef TESTS_LIB_CHECK_H
#define TESTS_LIB_CHECK_H

#include "../check.h"

/*
 * After a call whose call site the library records (__builtin_return_address): keeps the call out
 * of tail position, where it would become a jump and record our caller's site instead.
 */
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

/* The flag bits of a closure's count word (closure_nr_remaining() gives the count). */
#define closure_flags(cl)                                                                          \
	(__atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED) & ~CLOSURE_REMAINING_MASK)

#endif
