/* The get+put loop of bench_lib_loop_probes.c, with closure.h's inline probes compiled out. */
#define CLOSURE_PROBES 0
#include <closure.h>

extern struct closure bench_closure;

void bench_get_put_noprobes(long iterations)
{
	for (long i = 0; i < iterations; i++) {
		closure_get(&bench_closure);
		closure_put(&bench_closure);
	}
}
