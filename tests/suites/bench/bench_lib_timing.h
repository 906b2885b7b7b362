/*
 * Timing for libclosure's benchmarks: CLOCK_MONOTONIC, a loop of many iterations per repetition,
 * the median of several repetitions, and A/B pairs measured alternately so that both sides see
 * the same machine (2 cores shared with other work: the median and the alternation keep the
 * ratio steady where absolute figures drift).
 */
#ifndef BENCH_LIB_TIMING_H
#define BENCH_LIB_TIMING_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void(bench_loop)(long iterations);

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int bench_compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static inline double bench_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_compare_doubles);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ns per iteration of one run of loop */
static inline double bench_once(bench_loop *loop, long iterations)
{
	double start = bench_now_ns();

	loop(iterations);
	return (bench_now_ns() - start) / iterations;
}

enum { BENCH_MAX_REPS = 31 };

/* Median ns per iteration of a and of b, measured alternately, after one warm-up run each. */
static inline void bench_pair(bench_loop *a, bench_loop *b, long iterations, int reps, double *a_ns,
			      double *b_ns)
{
	double ta[BENCH_MAX_REPS], tb[BENCH_MAX_REPS];
	int i;

	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	bench_once(a, iterations / 10 + 1);
	bench_once(b, iterations / 10 + 1);
	for (i = 0; i < reps; i++) {
		ta[i] = bench_once(a, iterations);
		tb[i] = bench_once(b, iterations);
	}
	*a_ns = bench_median(ta, reps);
	*b_ns = bench_median(tb, reps);
}

/* One table row: the measured and the baseline figure, their ratio, and the goal if any. */
static inline void bench_row(const char *what, double ns, const char *baseline, double base_ns,
			     double goal)
{
	double ratio = ns / base_ns;

	printf("%-44s %9.2f  %-30s %9.2f  %6.3fx", what, ns, baseline, base_ns, ratio);
	if (goal > 0)
		printf("  goal <= %.2fx: %s", goal, ratio <= goal ? "PASS" : "ABOVE GOAL");
	putchar('\n');
}

static inline void bench_header(void)
{
	printf("%-44s %9s  %-30s %9s  %7s\n", "measured", "ns/op", "baseline", "ns/op", "ratio");
}

#endif
