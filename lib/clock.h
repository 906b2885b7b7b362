/* The clock of libclosure (private): below every other file of lib/, it needs none of them. */
#ifndef CLOSURE_LIB_CLOCK_H
#define CLOSURE_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Now on CLOCK_MONOTONIC in ns: the records' clock, and the one every timed wait in lib/ uses. */
static inline uint64_t closure_clock_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#endif
