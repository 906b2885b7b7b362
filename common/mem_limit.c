/* The tool's memory limit: see mem_limit.h. */
#include "mem_limit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* The exit status of a limit reached: as a malformed input's (the input asked too much). */
#define EXIT_LIMIT 2

static uint64_t limit;
static struct rlimit original;
static bool saved;

uint64_t mem_limit_default(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t half = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : 0;

	return half > (1ull << 30) ? half : 1ull << 30;
}

/*
 * AddressSanitizer maps terabytes of shadow as private memory, which RLIMIT_DATA counts: under it
 * any limit would refuse every later mapping. Its builds (tests) run without one.
 */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

int mem_limit_set(uint64_t bytes)
{
	struct rlimit r;

#ifdef UNDER_ASAN
	(void)bytes;
	return 0;
#endif
	if (!saved && getrlimit(RLIMIT_DATA, &original))
		return -1;
	saved = true;
	r = original;
	if (r.rlim_max != RLIM_INFINITY && bytes > r.rlim_max)
		bytes = r.rlim_max;
	r.rlim_cur = bytes;
	if (setrlimit(RLIMIT_DATA, &r))
		return -1;
	limit = bytes;
	return 0;
}

uint64_t mem_limit_bytes(void)
{
	return limit;
}

void mem_limit_restore(void)
{
	if (saved)
		setrlimit(RLIMIT_DATA, &original);
}

const char *mem_limit_note(void)
{
	static char note[96];

	if (!limit)
		return "";
	snprintf(note, sizeof(note), " (past the memory limit of %llu MiB; --max-memory raises it)",
		 (unsigned long long)(limit >> 20));
	return note;
}

void mem_limit_exceeded(void)
{
	fprintf(stderr, "closuretrace: out of memory%s\n", mem_limit_note());
	fflush(stderr);
	exit(EXIT_LIMIT);
}
