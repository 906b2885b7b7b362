/* SPDX-License-Identifier: MIT */
/* The completion pool and in-memory disks of kshim.h. */
#include "kshim.h"

#include <string.h>
#include <unistd.h>

#define MAX_POOL_THREADS 8

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, idle;
	struct bio *head, *tail;
	unsigned long in_flight; /* submitted and not yet through bi_end_io */
	bool stopping;
	int nthreads;
	pthread_t threads[MAX_POOL_THREADS];
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
	  .work = PTHREAD_COND_INITIALIZER,
	  .idle = PTHREAD_COND_INITIALIZER};

void bdev_init(struct block_device *bdev, const char *name, uint64_t sectors)
{
	memset(bdev, 0, sizeof(*bdev));
	bdev->name = name;
	bdev->sectors = sectors;
	bdev->data = calloc(sectors, 512);
	kcheck(bdev->data, "out of memory for %s", name);
	bdev->fail_sector = UINT64_MAX;
	pthread_mutex_init(&bdev->lock, NULL);
}

void bdev_exit(struct block_device *bdev)
{
	free(bdev->data);
	pthread_mutex_destroy(&bdev->lock);
}

/* The device's side of a bio: the copy, under the disk's lock. */
static void bio_do_io(struct bio *bio)
{
	struct block_device *bdev = bio->bi_bdev;
	size_t off = (size_t)bio->bi_sector * 512;

	kcheck(bio->bi_sector + (bio->bi_size + 511) / 512 <= bdev->sectors,
	       "%s: bio past the end (sector %llu)", bdev->name,
	       (unsigned long long)bio->bi_sector);
	pthread_mutex_lock(&bdev->lock);
	if (bio->bi_sector == bdev->fail_sector) {
		bio->bi_status = BLK_STS_IOERR;
		bdev->errors++;
	} else if (bio->bi_opf == REQ_OP_WRITE) {
		memcpy(bdev->data + off, bio->bi_buf, bio->bi_size);
		bdev->writes++;
	} else {
		memcpy(bio->bi_buf, bdev->data + off, bio->bi_size);
		bdev->reads++;
	}
	pthread_mutex_unlock(&bdev->lock);
}

void bio_endio(struct bio *bio)
{
	bio->bi_end_io(bio);
}

static void *pool_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct bio *bio = pool.head;

		if (!bio) {
			if (pool.stopping)
				break;
			pthread_cond_wait(&pool.work, &pool.lock);
			continue;
		}
		pool.head = bio->bi_next;
		if (!pool.head)
			pool.tail = NULL;
		pthread_mutex_unlock(&pool.lock);

		/* A little latency, so that completions overtake each other as on a real disk. */
		if (rand_r(&seed) % 4 == 0)
			usleep(rand_r(&seed) % 200);
		bio_do_io(bio);
		bio_endio(bio);

		pthread_mutex_lock(&pool.lock);
		if (--pool.in_flight == 0)
			pthread_cond_broadcast(&pool.idle);
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

void bio_pool_start(int threads)
{
	kcheck(threads > 0 && threads <= MAX_POOL_THREADS, "bio_pool_start: %d threads", threads);
	pool.stopping = false;
	pool.nthreads = threads;
	for (int i = 0; i < threads; i++)
		kcheck(!pthread_create(&pool.threads[i], NULL, pool_thread,
				       (void *)(uintptr_t)(i + 1)),
		       "cannot start a completion thread");
}

void submit_bio(struct bio *bio)
{
	bio->bi_status = 0;
	bio->bi_next = NULL;
	pthread_mutex_lock(&pool.lock);
	if (pool.tail)
		pool.tail->bi_next = bio;
	else
		pool.head = bio;
	pool.tail = bio;
	pool.in_flight++;
	pthread_cond_signal(&pool.work);
	pthread_mutex_unlock(&pool.lock);
}

void bio_pool_quiesce(void)
{
	pthread_mutex_lock(&pool.lock);
	while (pool.in_flight)
		pthread_cond_wait(&pool.idle, &pool.lock);
	pthread_mutex_unlock(&pool.lock);
}

void bio_pool_stop(void)
{
	bio_pool_quiesce();
	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);
	for (int i = 0; i < pool.nthreads; i++)
		pthread_join(pool.threads[i], NULL);
}
