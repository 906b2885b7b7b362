/* SPDX-License-Identifier: MIT */
/*
 * The kernel environment the ports in tests/suites/kernel run in: block devices held in memory,
 * bios completed by a small pool of "device" threads that call bi_end_io (as an interrupt would),
 * spinlocks, semaphores and a few atomics. Closures come from closure.h alone, unchanged: this
 * header supplies no closure API, only what bcache's closure code stands on.
 */
#ifndef KSHIM_H
#define KSHIM_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <closure.h>

/* An in-memory disk of 512-byte sectors. A bio at fail_sector completes with an I/O error. */
struct block_device {
	const char *name;
	unsigned char *data;
	uint64_t sectors;
	uint64_t fail_sector; /* UINT64_MAX: never */
	pthread_mutex_t lock;
	unsigned long reads, writes, errors;
};

enum { REQ_OP_READ = 0, REQ_OP_WRITE = 1 };
#define BLK_STS_IOERR 10

struct bio;
typedef void(bio_end_io_t)(struct bio *bio);

struct bio {
	struct block_device *bi_bdev;
	int bi_opf;
	uint64_t bi_sector;
	unsigned bi_size; /* bytes */
	void *bi_buf;
	int bi_status;
	bio_end_io_t *bi_end_io;
	void *bi_private;
	struct bio *bi_next; /* the pool's queue */
};

void bdev_init(struct block_device *bdev, const char *name, uint64_t sectors);
void bdev_exit(struct block_device *bdev);

/* Start and stop the completion pool. bio_pool_stop() completes everything submitted first. */
void bio_pool_start(int threads);
void bio_pool_stop(void);
/* Wait until no bio is queued or being completed (its bi_end_io has returned). */
void bio_pool_quiesce(void);

/* Queue the bio; a device thread does the copy, sets bi_status and calls bi_end_io. */
void submit_bio(struct bio *bio);
/* Complete a bio at once, in the calling thread (bcache's error path before submission). */
void bio_endio(struct bio *bio);

/* A failed check of a port's own result: one line, exit 1. */
#define kcheck(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

typedef pthread_mutex_t spinlock_t;
#define spin_lock_init(l) pthread_mutex_init(l, NULL)
#define spin_lock(l)	  pthread_mutex_lock(l)
#define spin_unlock(l)	  pthread_mutex_unlock(l)

/* A counting semaphore; up() may come from another thread (a completion), as in the kernel. */
struct semaphore {
	sem_t sem;
};
#define sema_init(s, n) sem_init(&(s)->sem, 0, n)
#define down(s)		sem_wait(&(s)->sem)
#define up(s)		sem_post(&(s)->sem)

typedef struct {
	int counter;
} atomic_t;
#define atomic_read(a)	 __atomic_load_n(&(a)->counter, __ATOMIC_SEQ_CST)
#define atomic_set(a, v) __atomic_store_n(&(a)->counter, v, __ATOMIC_SEQ_CST)
#define atomic_inc(a)	 __atomic_add_fetch(&(a)->counter, 1, __ATOMIC_SEQ_CST)
#define atomic_dec(a)	 __atomic_sub_fetch(&(a)->counter, 1, __ATOMIC_SEQ_CST)

#endif
