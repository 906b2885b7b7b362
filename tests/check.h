/*
 * The assertions of every C test, two kinds:
 * - CHECK and its CHECK_EQ/_NE/... forms: on failure, print file:line, the expression and the
 *   values, then abort, so that a failure in any thread stops the whole test at once (libclosure's
 *   tests, where a broken closure would go on to hang or crash);
 * - EXPECT(cond, fmt, ...): on failure, print file:line and the message, count it in
 *   check_failures and go on, so that one run shows every failure (the tool's unit tests; main
 *   exits 1 when check_failures is not 0).
 */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define check_fail(...)                                                                            \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__);                      \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		fflush(stderr);                                                                    \
		abort();                                                                           \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			check_fail("%s", #cond);                                                   \
	} while (0)

/* Integers of any width and sign; both values are shown in decimal and hex. */
#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);                                   \
		if (a_ != b_)                                                                      \
			check_fail("%s == %s: %jd (%#jx) != %jd (%#jx)", #a, #b, a_,               \
				   (uintmax_t)a_, b_, (uintmax_t)b_);                              \
	} while (0)

#define CHECK_NE(a, b)                                                                             \
	do {                                                                                       \
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);                                   \
		if (a_ == b_)                                                                      \
			check_fail("%s != %s: both %jd (%#jx)", #a, #b, a_, (uintmax_t)a_);        \
	} while (0)

#define CHECK_PTR_EQ(a, b)                                                                         \
	do {                                                                                       \
		const void *a_ = (a), *b_ = (b);                                                   \
		if (a_ != b_)                                                                      \
			check_fail("%s == %s: %p != %p", #a, #b, a_, b_);                          \
	} while (0)

#define CHECK_STR_EQ(a, b)                                                                         \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (strcmp(a_, b_))                                                                \
			check_fail("%s == %s:\n  \"%s\"\n  \"%s\"", #a, #b, a_, b_);               \
	} while (0)

/* haystack contains needle */
#define CHECK_CONTAINS(haystack, needle)                                                           \
	do {                                                                                       \
		const char *h_ = (haystack), *n_ = (needle);                                       \
		if (!strstr(h_, n_))                                                               \
			check_fail("%s contains %s:\n  \"%s\"\n  lacks \"%s\"", #haystack,         \
				   #needle, h_, n_);                                               \
	} while (0)

static int check_failures __attribute__((unused));

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

#endif
