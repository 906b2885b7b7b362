/*
 * For harnesses whose code under test reads a file by name: each input is written to one file of
 * this process's own (/tmp/NAME.PID.EXT), removed when the fuzzer exits. Included by one
 * harness per program, so its definitions are static.
 */
#ifndef CLOSURETRACE_FUZZ_FILE_H
#define CLOSURETRACE_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_path[64];

static void fuzz_file_remove(void)
{
	remove(fuzz_path);
}

/* From LLVMFuzzerInitialize: the file's name, made of name, this pid and ext (".json"). */
static void fuzz_file_init(const char *name, const char *ext)
{
	snprintf(fuzz_path, sizeof(fuzz_path), "/tmp/%s.%d%s", name, (int)getpid(), ext);
	atexit(fuzz_file_remove);
}

/* The input, written whole: the file's name. */
static const char *fuzz_file_write(const uint8_t *data, size_t size)
{
	FILE *f = fopen(fuzz_path, "w");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	return fuzz_path;
}

#endif
