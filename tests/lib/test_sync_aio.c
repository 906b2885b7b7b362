/*
 * closure_sync and closure_return_sync waiting for an asynchronous read, as bcachefs-tools' block
 * layer does it (linux/blkdev.c): closure_get, then io_submit from a function that returns at once,
 * leaving its control block dead on the stack below its caller; a completion thread reaps the read
 * with io_getevents and puts the closure; the owner sleeps meanwhile.
 *
 * Natively: the data is there when the sync returns, in every round.
 * Under memcheck (tests/lib/valgrind.sh runs this program): valgrind learns that the kernel wrote
 * the buffer only when io_getevents returns, from the control block the event points to, still in
 * that dead stack. The completion thread reaps only once the owner is blocked on the closure's
 * futex, so a sleep that overwrote the control block (libclosure's did, running deeper than the
 * closure_sync of bcachefs-tools) leaves the buffer unmarked and memcheck reports the check of the
 * data as an uninitialised read. libclosure sleeps off the program's stack under memcheck
 * (lib/sleep.c): no report. The gaps put the control block deeper; with none it lies 160 bytes
 * below the caller of the sync (x86-64, -O2), about as deep as bcachefs' superblock read-back.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <closure.h>

#include "check.h"

enum { LEN = 4096, READS = 3 };

struct reader {
	aio_context_t ctx;
	int fd;
	struct closure cl;
	unsigned char *buf;
	pid_t owner;
	int reaped; /* reads reaped (atomic) */
};

static unsigned char pattern(size_t i, int round)
{
	return (unsigned char)(i * 7 + (size_t)round * 13 + 1);
}

/*
 * As bcachefs-tools' aio_op: the control block lives in this frame only. A plain read, not its
 * vectored one: valgrind would take a vector's lengths from the dead stack too, and one overwritten
 * with a huge number makes it mark (and allocate shadow memory for) gigabytes.
 */
static __attribute__((noinline)) void issue(struct reader *rd, int round)
{
	struct iocb cb = {
		.aio_data = (uint64_t)round,
		.aio_lio_opcode = IOCB_CMD_PREAD,
		.aio_fildes = (uint32_t)rd->fd,
		.aio_buf = (uint64_t)(uintptr_t)rd->buf,
		.aio_nbytes = LEN,
		.aio_offset = (int64_t)round * LEN,
	};
	struct iocb *cbs[1] = {&cb};

	CHECK_EQ(syscall(SYS_io_submit, rd->ctx, 1, cbs), 1);
}

/* The control block gap bytes deeper than issue()'s frame alone would put it. */
static __attribute__((noinline)) void submit_read(struct reader *rd, int round, size_t gap)
{
	volatile char *pad = alloca(gap + 1);

	pad[0] = 0;
	closure_get(&rd->cl);
	issue(rd, round);
	__asm__ volatile("" ::"r"(pad) : "memory");
}

/* Until thread tid is blocked in the futex on word (/proc/self/task/TID/syscall: nr, args). */
static void wait_until_asleep_on(pid_t tid, const void *word)
{
	char path[64];
	int tries;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (tries = 0; tries < 60000; tries++) {
		FILE *f = fopen(path, "r");
		long nr = -1;
		unsigned long arg0 = 0;

		CHECK(f);
		if (fscanf(f, "%ld %lx", &nr, &arg0) != 2)
			nr = -1; /* "running" */
		fclose(f);
		if (nr == SYS_futex && arg0 == (uintptr_t)word)
			return;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	check_fail("thread %d never slept on the closure's futex %p", (int)tid, word);
}

static void *reap(void *arg)
{
	struct reader *rd = arg;
	struct io_event ev;
	int i;

	for (i = 0; i < READS; i++) {
		wait_until_asleep_on(rd->owner, CLOSURE_WORD(&rd->cl));
		CHECK_EQ(syscall(SYS_io_getevents, rd->ctx, 1, 1, &ev, NULL), 1);
		CHECK_EQ(ev.data, (uint64_t)i);
		CHECK_EQ(ev.res, LEN);
		__atomic_store_n(&rd->reaped, i + 1, __ATOMIC_RELEASE);
		closure_put(&rd->cl);
	}
	return NULL;
}

/* The data read in round, every byte (a branch on each: memcheck checks them all). */
static void check_data(const struct reader *rd, int round)
{
	size_t i, wrong = 0;

	for (i = 0; i < LEN; i++)
		if (rd->buf[i] != pattern(i, round))
			wrong++;
	CHECK_EQ(wrong, 0);
}

static void read_with_sync(struct reader *rd, int round, size_t gap)
{
	closure_init_stack(&rd->cl);
	submit_read(rd, round, gap);
	closure_sync(&rd->cl);
	CHECK_EQ(__atomic_load_n(&rd->reaped, __ATOMIC_ACQUIRE), round + 1);
	CHECK_EQ(closure_nr_remaining(&rd->cl), 1);
	check_data(rd, round);
}

static void read_with_return_sync(struct reader *rd, int round, size_t gap)
{
	closure_init(&rd->cl, NULL);
	submit_read(rd, round, gap);
	closure_return_sync(&rd->cl);
	CHECK_EQ(__atomic_load_n(&rd->reaped, __ATOMIC_ACQUIRE), round + 1);
	CHECK_EQ(closure_nr_remaining(&rd->cl), 0);
	check_data(rd, round);
}

static void run(size_t gap)
{
	char path[] = "/tmp/test_sync_aio.XXXXXX";
	unsigned char data[LEN * READS];
	struct reader rd = {.owner = gettid()};
	pthread_t t;
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = pattern(i % LEN, (int)(i / LEN));
	rd.fd = mkstemp(path);
	CHECK(rd.fd >= 0);
	unlink(path);
	CHECK_EQ(write(rd.fd, data, sizeof(data)), sizeof(data));
	CHECK_EQ(syscall(SYS_io_setup, 8, &rd.ctx), 0);
	rd.buf = malloc(LEN); /* uninitialised until read */
	CHECK(rd.buf);
	CHECK_EQ(pthread_create(&t, NULL, reap, &rd), 0);
	read_with_sync(&rd, 0, gap);
	read_with_return_sync(&rd, 1, gap);
	read_with_sync(&rd, 2, gap);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(syscall(SYS_io_destroy, rd.ctx), 0);
	close(rd.fd);
	free(rd.buf);
	printf("ok: %d reads synced, their control blocks %zu bytes deeper\n", READS, gap);
}

int main(int argc, char **argv)
{
	static const size_t gaps[] = {0, 64, 256};
	size_t i;

	if (argc > 1) {
		run(strtoul(argv[1], NULL, 0));
		return 0;
	}
	for (i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
		run(gaps[i]);
	printf("test_sync_aio: ok\n");
	return 0;
}
