/*
 * Sleeping on a word and waking its sleepers (closure_sync()'s futex), and under valgrind's
 * memcheck the side stack the sleeps run on (private; lib/sleep.c says why). Knows no closure.
 */
#ifndef CLOSURE_LIB_SLEEP_H
#define CLOSURE_LIB_SLEEP_H

#include <stdbool.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/*
 * Sleeps while *word is val (the caller re-checks why it woke), until until_ns on CLOCK_MONOTONIC
 * (0: no limit); ETIMEDOUT once until_ns has passed, else 0.
 */
int closure_sleep_on(uint32_t *word, uint32_t val, uint64_t until_ns);
/* Wakes every thread sleeping on word. */
void closure_futex_wake(uint32_t *word);

/*
 * Under valgrind's memcheck, the sleeping part of a sync runs on a side stack of the thread's own:
 * closure_sleep_off_stack(fn, a, b, c, d) is fn(a, b, c, d) there (called only when
 * closure_under_memcheck; in place when on the side stack already).
 */
typedef uintptr_t closure_word_fn(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d);
extern bool closure_under_memcheck;
uintptr_t closure_sleep_off_stack(closure_word_fn *fn, uintptr_t a, uintptr_t b, uintptr_t c,
				  uintptr_t d);
/* Maps this thread's side stack (if it has none), so that its first sleep need not. */
void closure_side_stack_map(void);
/* At a closure's init, before the program hands out references that a sleep would wait for. */
static inline void closure_side_stack_prepare(void)
{
	if (__builtin_expect(closure_under_memcheck, 0))
		closure_side_stack_map();
}

#pragma GCC visibility pop

#endif
