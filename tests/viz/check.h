/* The unit tests of viz/ count their failed checks: each prints where and why, and main() exits 1
 * when any failed, so one run shows every failure. */
#ifndef CLOSURETRACE_TESTS_VIZ_CHECK_H
#define CLOSURETRACE_TESTS_VIZ_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#endif
