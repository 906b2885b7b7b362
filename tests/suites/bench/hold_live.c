/*
 * attach.bench.sh's process: holds N closures alive (default 1,000,000: issue 35's attach goal),
 * in trees of ten (a root and nine children) as a service's requests are, says "ready" on its
 * standard output, and waits until killed. Made before any recording: record -p learns them all
 * from the live registry.
 *   hold_live [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <closure.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct closure *cls = n > 0 ? calloc((size_t)n, sizeof(*cls)) : NULL;

	if (!cls) {
		fprintf(stderr, "hold_live: cannot hold %ld closures\n", n);
		return 1;
	}
	for (long i = 0; i < n; i++)
		closure_init(&cls[i], i % 10 ? &cls[i - i % 10] : NULL);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
