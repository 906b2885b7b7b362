/*
 * The get+put loop with the probes as the library was built (compiled in, in build-bench).
 * bench_lib_loop_noprobes.c is the same loop with them compiled out; bench_lib.c compares them.
 */
#include <closure.h>

extern struct closure bench_closure;

void bench_get_put_probes(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		closure_get(&bench_closure);
		closure_put(&bench_closure);
	}
}
