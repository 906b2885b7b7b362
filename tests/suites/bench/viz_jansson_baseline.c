/*
 * The baseline of the viz benchmark: what jansson alone does with a trace, line by line
 * (getline + json_loadb + reading the fields), measured in the same run as closuretrace report.
 *   viz_jansson_baseline TRACE   prints "LINES SECONDS"
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
	struct timespec a, b;
	unsigned long long lines = 0, sum = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!f) {
		fprintf(stderr, "usage: viz_jansson_baseline TRACE\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	while ((len = getline(&line, &cap, f)) > 0) {
		json_error_t err;
		json_t *o = json_loadb(line, (size_t)len, 0, &err);

		if (!o)
			return 1;
		sum += (unsigned long long)json_integer_value(json_object_get(o, "remaining"));
		sum += json_string_length(json_object_get(o, "cl"));
		json_decref(o);
		lines++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%llu %.3f\n", lines, (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	free(line);
	fclose(f);
	return sum == 42; /* keeps the work from being optimised away */
}
