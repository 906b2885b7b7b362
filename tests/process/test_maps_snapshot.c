/*
 * process/objects.c's objects_mapped, the check that a closure:module record names a file the
 * process maps: a snapshot of the maps read before the record was made is read again before it
 * says no (the mapping may be newer than the snapshot, however recent), and still says no for a
 * file the process does not map.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "objects.h"

#define SECOND 1000000000ull

static int fails;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * SECOND + (uint64_t)t.tv_nsec;
}

static void expect(int got, int want, const char *what)
{
	printf("%s: %s (%d)\n", got == want ? "ok" : "FAIL", what, got);
	fails += got != want;
}

/* A regular file of one page, named into path. */
static bool make_file(char *path)
{
	int fd = mkstemp(path);
	bool ok = fd >= 0 && !ftruncate(fd, 4096);

	if (fd >= 0)
		close(fd);
	return ok;
}

int main(void)
{
	char mapped[] = "/tmp/ct_maps_XXXXXX", never[] = "/tmp/ct_maps_XXXXXX";
	struct maps_snapshot m = {0};
	void *at;
	FILE *f;

	if (!make_file(mapped) || !make_file(never))
		return perror("mkstemp"), 2;
	expect(objects_mapped(&m, getpid(), now_ns(), now_ns(), SECOND, mapped, file_id_of(mapped)),
	       0, "not yet mapped");
	f = fopen(mapped, "r");
	at = f ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fileno(f), 0) : MAP_FAILED;
	if (at == MAP_FAILED)
		return perror("mmap"), 2;
	/* The record is newer than the snapshot; the gap for a flood (a second) has not passed. */
	expect(objects_mapped(&m, getpid(), now_ns(), now_ns(), SECOND, mapped, file_id_of(mapped)),
	       1, "mapped after the snapshot was read: read again");
	expect(objects_mapped(&m, getpid(), now_ns(), now_ns(), SECOND, never, file_id_of(never)),
	       0, "a file the process does not map");
	munmap(at, 4096);
	fclose(f);
	maps_snapshot_free(&m);
	unlink(mapped);
	unlink(never);
	return fails ? 1 : 0;
}
