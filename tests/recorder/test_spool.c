/*
 * recorder/spool.c's contract: records come out in the order they went in, whole, across the
 * spill to the file and back (a producer thread against a consumer that starts late, the
 * queue allowed 1 MiB of memory); nothing is left in $TMPDIR, even while the file is in use; an
 * unwritable $TMPDIR keeps the records in memory (and says so) instead of losing them.
 *
 *   test_spool DIR      (DIR: an empty folder for $TMPDIR)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "spool.h"

#define RECORDS 200000u

/* Record i: i, then (i % 61) bytes of i's low byte (sizes vary, as ring records do). */
static size_t make(uint32_t i, unsigned char *buf)
{
	size_t n = 4 + i % 61;

	memcpy(buf, &i, 4);
	memset(buf + 4, (int)(i & 0xff), n - 4);
	return n;
}

static void *produce(void *arg)
{
	struct spool *q = arg;
	unsigned char buf[128];

	for (uint32_t i = 0; i < RECORDS; i++) {
		size_t n = make(i, buf);

		while (!spool_put(q, buf, n, 1))
			usleep(1000); /* twice the memory held: the consumer makes room */
		if (i % 97 == 0)
			spool_commit(q);
	}
	spool_commit(q);
	return NULL;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Takes every record, checking each against what was put; slow at first so that it spills. */
static uint32_t consume(struct spool *q, pthread_t producer, bool *done)
{
	unsigned char want[128];
	uint32_t next = 0;
	uint64_t lost = 0;

	usleep(200 * 1000);
	for (;;) {
		size_t size;
		const unsigned char *rec = spool_get(q, &size, &lost);

		if (!rec) {
			if (*done)
				break;
			if (!pthread_tryjoin_np(producer, NULL))
				*done = true; /* one more pass takes what it committed last */
			continue;
		}
		EXPECT(size == make(next, want) && !memcmp(rec, want, size), "record %u differs",
		       next);
		if (size != make(next, want))
			break;
		next++;
	}
	EXPECT(lost == 0, "%llu lost", (unsigned long long)lost);
	return next;
}

int main(int argc, char **argv)
{
	struct spool q;
	pthread_t producer;
	bool done = false;
	uint32_t got;

	if (argc != 2)
		return 2;
	setenv("TMPDIR", argv[1], 1);
	EXPECT(!spool_init(&q, 16 * SPOOL_CHUNK), "init");
	pthread_create(&producer, NULL, produce, &q);
	usleep(100 * 1000);
	EXPECT(entries(argv[1]) == 0, "a named file in TMPDIR while spooling");
	got = consume(&q, producer, &done);
	EXPECT(got == RECORDS, "%u of %u records", got, RECORDS);
	EXPECT(q.spooled > 0, "never spilled to the file");
	printf("%u records in order, %llu bytes through the file\n", got,
	       (unsigned long long)q.spooled);
	spool_free(&q);
	EXPECT(entries(argv[1]) == 0, "files left in TMPDIR");

	/* An unusable TMPDIR: the spill fails, the records stay in memory, the error is
	 * kept. */
	setenv("TMPDIR", "/nonexistent/closuretrace", 1);
	EXPECT(!spool_init(&q, 16 * SPOOL_CHUNK), "init");
	done = false;
	pthread_create(&producer, NULL, produce, &q);
	got = consume(&q, producer, &done);
	EXPECT(got == RECORDS, "%u of %u records without a file", got, RECORDS);
	EXPECT(q.err != 0, "no error kept for the failed spill");
	spool_free(&q);
	return check_failures ? 1 : 0;
}
