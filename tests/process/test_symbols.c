/*
 * The symbolizer names a continuation by the function that starts at its address, not by an
 * inlined callee whose code comes first (issue 10 item 5: bcache's cache_lookup was shown as
 * cached_dev_cache_miss). Built without PIE, so that link-time addresses are the run-time ones.
 */
#include <stdio.h>
#include <string.h>

#include "symbols.h"

static long counter;

/* Inlined at the very start of continuation(): a leaf, so no frame is set up before it. */
static inline __attribute__((always_inline)) void bump_counter(void)
{
	__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void continuation(void *cl)
{
	bump_counter();
	__asm__ volatile("" ::"r"(cl));
}

static int expect(const char *what, const char *got, const char *want)
{
	if (got && !strcmp(got, want))
		return 0;
	fprintf(stderr, "FAIL: %s: got %s, want %s\n", what, got ? got : "(null)", want);
	return 1;
}

int main(int argc, char **argv)
{
	struct symbols *s = symbols_new();
	struct sym_info info;
	int fails = 0;

	(void)argc;
	continuation(NULL);
	if (!s || symbols_add_object(s, argv[0], argv[0], 0)) {
		fprintf(stderr, "FAIL: cannot load %s\n", argv[0]);
		return 1;
	}
	if (!symbols_resolve(s, (uint64_t)(uintptr_t)&continuation, &info)) {
		fprintf(stderr, "FAIL: %p is in no object\n", (void *)&continuation);
		return 1;
	}
	fails += expect("the function at continuation's address", info.func, "continuation");
	/* Inside the function (not its entry) the innermost frame still names the line's function.
	 */
	if (!symbols_resolve(s, (uint64_t)(uintptr_t)&continuation + 1, &info))
		return 1;
	fails += expect("the function one byte into continuation", info.func, "bump_counter");
	symbols_free(s);
	if (!fails)
		printf("PASS\n");
	return fails != 0;
}
