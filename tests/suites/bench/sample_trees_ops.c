/*
 * The traced side of sample.bench.sh: closure trees made as fast as one thread can, each a root,
 * a child of it, two get/put pairs on the child, the child's and the root's return (9
 * operations, 8 records). Prints the cost per tree measured inside the process, so that the
 * recorder's start and stop are not counted.
 *
 *   sample_trees_ops [TREES]    (default 1,000,000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <closure.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long trees = argc > 1 ? atol(argv[1]) : 1000000;
	struct closure root, child;
	double t0 = now();

	for (long i = 0; i < trees; i++) {
		closure_init(&root, NULL);
		closure_init(&child, &root);
		closure_get(&child);
		closure_put(&child);
		closure_get(&child);
		closure_put(&child);
		closure_return(&child);
		closure_return(&root);
	}
	printf("%.1f ns per tree\n", (now() - t0) * 1e9 / (double)trees);
	return 0;
}
