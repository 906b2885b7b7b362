/* libFuzzer: check's suppression-file parser, and matching diagnostics against what it read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_file.h"
#include "check_supp.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("fuzz_supp", ".supp");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct check_site sites[] = {
		{"submit_bio", "/home/dev/src/bio.c", 42, NULL, 0},
		{NULL, "bio.c", 0, NULL, 0},
		{"request_done", NULL, 7, NULL, 0},
	};
	struct check_supp s = {0};
	struct trace_error err;
	const char *path = fuzz_file_write(data, size);

	if (!check_supp_load(&s, path, &err)) {
		check_supp_match(&s, CHECK_LEAK, sites, 3);
		check_supp_match(&s, CHECK_STUCK, sites + 1, 2);
	}
	check_supp_free(&s);
	return 0;
}
