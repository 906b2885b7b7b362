/* SPDX-License-Identifier: MIT */
/*
 * bcache's read path, ported to userspace from torvalds/linux drivers/md/bcache/request.c in its
 * CLOSURE_CALLBACK form (commit d4e3b928ab48, "closures: CLOSURE_CALLBACK() to fix type punning",
 * Kent Overstreet, Nov 2023, merged for v6.7; the closure calls read the same in v6.8-v6.17):
 * search_alloc(), search_free(), bio_complete(), cached_dev_read(), cache_lookup(),
 * cache_lookup_fn(), cached_dev_cache_miss(), bch_cache_read_endio(), request_endio(),
 * backing_request_endio(), cached_dev_read_done_bh(), cached_dev_read_done(),
 * cached_dev_cache_miss_done(), cached_dev_bio_complete(), bch_data_insert(),
 * bch_data_insert_start(), bch_data_insert_keys(); and from super.c the device closure
 * (cached_dev_flush, cached_dev_free).
 *
 * The closure patterns: a search's closure has no parent; cache_lookup runs as a child (its
 * iop.cl, closure_call) that submits cache reads and backing reads, each holding a reference on
 * the search (closure_bio_submit). On a miss the data is then inserted into the cache by another
 * closure_call of iop.cl, while the device's closure is held (closure_get(&dc->disk.cl)). The
 * search ends in search_free(), reached by direct calls (cached_dev_bio_complete(&cl->work)),
 * which calls closure_debug_destroy() and frees the search in its own continuation: it never
 * returns. The device's closure is stopped with closure_queue() and frees itself likewise (one
 * deviation, see cached_dev_free()).
 *
 * The btree is a table of 8-sector extents, cached or not; a read covers several extents.
 * Run: request_read [READS]. Checks every read's data against the backing device, that each miss
 * was inserted into the cache (the cache then holds the same data), and the hit and miss counts.
 */
#include <string.h>
#include <unistd.h>

#include "kshim.h"

#define EXTENT	 8 /* sectors */
#define NEXTENTS 64
#define MAX_READ 4 /* extents */

struct cache_set {
	struct block_device *cache;
	pthread_mutex_t btree_lock;
	uint64_t ptr[NEXTENTS]; /* the btree: where each extent is cached, 0 if not */
	uint64_t next_bucket;
	atomic_t search_inflight;
	unsigned long hits, misses, inserts;
};

struct cached_dev {
	struct closure cl; /* disk.cl */
	struct cache_set *c;
	struct block_device *bdev;
};

struct data_insert_op {
	struct closure cl;
	struct cache_set *c;
	struct bio *bio;
	int status;
	bool replace;
	uint64_t extent;
	struct bio wbio;
};

struct search {
	/* Stack frame for bio_complete */
	struct closure cl;
	struct bio bio;
	struct bio *orig_bio;
	struct bio *cache_miss;
	struct cached_dev *d;
	unsigned insert_bio_sectors;
	bool recoverable, cache_missed;
	struct data_insert_op iop;
};

static struct workqueue *bcache_wq, *system_wq;
static bool dev_freed;

static void closure_bio_submit(struct bio *bio, struct closure *cl)
{
	closure_get(cl);
	submit_bio(bio);
}

/* bio_next_split(): the first sectors of bio, sharing its buffer. */
static struct bio *bio_next_split(struct bio *bio, unsigned sectors)
{
	struct bio *n = malloc(sizeof(*n));

	kcheck(n, "out of memory");
	*n = *bio;
	n->bi_size = sectors << 9;
	bio->bi_sector += sectors;
	bio->bi_buf = (char *)bio->bi_buf + (sectors << 9);
	bio->bi_size -= sectors << 9;
	return n;
}

static void bio_put(struct bio *bio)
{
	free(bio);
}

/* Insert data into cache */

static CLOSURE_CALLBACK(bch_data_insert_keys)
{
	closure_type(op, struct data_insert_op, cl);

	pthread_mutex_lock(&op->c->btree_lock);
	if (!op->status)
		op->c->ptr[op->extent] = op->wbio.bi_sector;
	op->c->inserts++;
	pthread_mutex_unlock(&op->c->btree_lock);

	closure_return(cl);
}

static void bch_data_insert_endio(struct bio *bio)
{
	struct closure *cl = bio->bi_private;
	struct data_insert_op *op = container_of(cl, struct data_insert_op, cl);

	if (bio->bi_status)
		op->status = bio->bi_status;
	closure_put(cl);
}

static CLOSURE_CALLBACK(bch_data_insert_start)
{
	closure_type(op, struct data_insert_op, cl);
	struct bio *bio = &op->wbio;

	memset(bio, 0, sizeof(*bio));
	bio->bi_bdev = op->c->cache;
	pthread_mutex_lock(&op->c->btree_lock);
	bio->bi_sector = op->c->next_bucket; /* bch_alloc_sectors() */
	op->c->next_bucket += EXTENT;
	pthread_mutex_unlock(&op->c->btree_lock);
	bio->bi_size = EXTENT << 9;
	bio->bi_buf = op->bio->bi_buf;
	bio->bi_opf = REQ_OP_WRITE;
	bio->bi_end_io = bch_data_insert_endio;
	bio->bi_private = cl;
	closure_bio_submit(bio, cl);

	continue_at(cl, bch_data_insert_keys, bcache_wq);
}

static CLOSURE_CALLBACK(bch_data_insert)
{
	closure_type(op, struct data_insert_op, cl);

	op->status = 0;
	bch_data_insert_start(&cl->work);
}

/* Common code for the make_request functions */

static void request_endio(struct bio *bio)
{
	struct closure *cl = bio->bi_private;

	if (bio->bi_status) {
		struct search *s = container_of(cl, struct search, cl);

		s->iop.status = bio->bi_status;
		/* Only cache read errors are recoverable */
		s->recoverable = false;
	}

	bio_put(bio);
	closure_put(cl);
}

static void backing_request_endio(struct bio *bio)
{
	request_endio(bio);
}

static void bch_cache_read_endio(struct bio *bio)
{
	request_endio(bio); /* bch_bbio_endio(): count errors, put bi_private */
}

static void bio_complete(struct search *s)
{
	if (s->orig_bio) {
		s->orig_bio->bi_status = s->iop.status;
		bio_endio(s->orig_bio);
		s->orig_bio = NULL;
	}
}

static CLOSURE_CALLBACK(search_free)
{
	closure_type(s, struct search, cl);

	atomic_dec(&s->iop.c->search_inflight);

	if (s->iop.bio)
		bio_put(s->iop.bio);

	bio_complete(s);
	closure_debug_destroy(cl);
	free(s); /* mempool_free(s, &s->iop.c->search) */
}

static struct search *search_alloc(struct bio *bio, struct cached_dev *d)
{
	struct search *s = calloc(1, sizeof(*s));

	kcheck(s, "out of memory");
	closure_init(&s->cl, NULL);
	s->bio = *bio; /* do_bio_hook(): the clone */
	s->bio.bi_end_io = request_endio;
	s->bio.bi_private = &s->cl;
	atomic_inc(&d->c->search_inflight);

	s->orig_bio = bio;
	s->d = d;
	s->recoverable = true;
	s->iop.c = d->c;
	return s;
}

/* Cached devices */

static CLOSURE_CALLBACK(cached_dev_bio_complete)
{
	closure_type(s, struct search, cl);

	(void)s; /* cached_dev_put(dc) */
	search_free(&cl->work);
}

static CLOSURE_CALLBACK(cached_dev_cache_miss_done)
{
	closure_type(s, struct search, cl);
	struct cached_dev *d = s->d;

	if (s->iop.bio)
		free(s->iop.bio->bi_buf); /* bio_free_pages() */

	cached_dev_bio_complete(&cl->work);
	closure_put(&d->cl);
}

static CLOSURE_CALLBACK(cached_dev_read_done)
{
	closure_type(s, struct search, cl);
	struct cached_dev *dc = s->d;

	/*
	 * We had a cache miss; cache_bio now contains data ready to be inserted into the cache.
	 * First, we copy the data we just read from cache_bio's bounce buffers to the buffers the
	 * original bio pointed to:
	 */
	if (s->iop.bio) {
		memcpy(s->cache_miss->bi_buf, s->iop.bio->bi_buf, s->cache_miss->bi_size);
		bio_put(s->cache_miss);
		s->cache_miss = NULL;
	}

	closure_get(&dc->cl);
	bio_complete(s);

	if (s->iop.bio)
		closure_call(&s->iop.cl, bch_data_insert, NULL, cl);

	continue_at(cl, cached_dev_cache_miss_done, NULL);
}

static CLOSURE_CALLBACK(cached_dev_read_done_bh)
{
	closure_type(s, struct search, cl);

	kcheck(!s->iop.status, "read error (no retry in this port)");
	if (s->iop.bio)
		continue_at_nobarrier(cl, cached_dev_read_done, bcache_wq);
	else
		continue_at_nobarrier(cl, cached_dev_bio_complete, NULL);
}

static void cached_dev_cache_miss(struct search *s, struct bio *bio, unsigned sectors,
				  uint64_t extent)
{
	struct cached_dev *dc = s->d;
	struct bio *miss, *cache_bio;

	s->cache_missed = true;

	if (s->cache_miss) {
		miss = bio_next_split(bio, sectors);
		goto out_submit;
	}

	s->insert_bio_sectors = sectors;
	s->iop.replace = true;
	s->iop.extent = extent;

	miss = bio_next_split(bio, sectors);

	cache_bio = calloc(1, sizeof(*cache_bio));
	kcheck(cache_bio, "out of memory");
	cache_bio->bi_sector = miss->bi_sector;
	cache_bio->bi_bdev = dc->bdev;
	cache_bio->bi_size = s->insert_bio_sectors << 9;
	cache_bio->bi_end_io = backing_request_endio;
	cache_bio->bi_private = &s->cl;
	cache_bio->bi_buf = malloc(cache_bio->bi_size); /* bch_bio_alloc_pages() */
	kcheck(cache_bio->bi_buf, "out of memory");

	s->cache_miss = miss;
	s->iop.bio = malloc(sizeof(*cache_bio)); /* bio_get(cache_bio): it outlives the read */
	kcheck(s->iop.bio, "out of memory");
	*s->iop.bio = *cache_bio;
	/* I/O request sent to backing device */
	closure_bio_submit(cache_bio, &s->cl);
	return;
out_submit:
	miss->bi_bdev = dc->bdev;
	miss->bi_end_io = backing_request_endio;
	miss->bi_private = &s->cl;
	/* I/O request sent to backing device */
	closure_bio_submit(miss, &s->cl);
}

/* cache_lookup_fn() for each extent the bio covers */
static CLOSURE_CALLBACK(cache_lookup)
{
	closure_type(s, struct search, iop.cl);
	struct bio *bio = &s->bio;

	while (bio->bi_size) {
		uint64_t extent = bio->bi_sector / EXTENT, ptr;

		pthread_mutex_lock(&s->iop.c->btree_lock);
		ptr = s->iop.c->ptr[extent];
		pthread_mutex_unlock(&s->iop.c->btree_lock);

		if (!ptr) {
			__atomic_add_fetch(&s->iop.c->misses, 1, __ATOMIC_RELAXED);
			cached_dev_cache_miss(s, bio, EXTENT, extent);
			continue;
		}
		__atomic_add_fetch(&s->iop.c->hits, 1, __ATOMIC_RELAXED);

		struct bio *n = bio_next_split(bio, EXTENT);

		n->bi_bdev = s->iop.c->cache;
		n->bi_sector = ptr;
		n->bi_end_io = bch_cache_read_endio;
		n->bi_private = &s->cl;
		closure_bio_submit(n, &s->cl); /* __bch_submit_bbio() */
	}

	closure_return(cl);
}

static void cached_dev_read(struct cached_dev *dc, struct search *s)
{
	struct closure *cl = &s->cl;

	(void)dc;
	closure_call(&s->iop.cl, cache_lookup, NULL, cl);
	continue_at(cl, cached_dev_read_done_bh, NULL);
}

/* super.c: the device's closure, freed in its last continuation */

static CLOSURE_CALLBACK(cached_dev_free)
{
	closure_type(dc, struct cached_dev, cl);

	dev_freed = true;
	/*
	 * Not in the kernel: its cached_dev_free() ends in kobject_put(), whose release kfree()s dc
	 * without closure_debug_destroy(&dc->disk.cl), so with CONFIG_DEBUG_CLOSURES the freed
	 * closure stays on the debug list (and check would call it leaked). The port destroys it
	 * as cache_set_free() does its own.
	 */
	closure_debug_destroy(&dc->cl);
	free(dc); /* kobject_put(&dc->disk.kobj) */
}

static CLOSURE_CALLBACK(cached_dev_flush)
{
	closure_type(dc, struct cached_dev, cl);

	(void)dc; /* bcache_device_unlink(d), bch_cache_accounting_destroy(&dc->accounting) */
	continue_at(cl, cached_dev_free, system_wq);
}

/* The upper layer: a read of the bcache device, completed by bio_complete(). */
struct upper_read {
	struct bio bio;
	unsigned char buf[MAX_READ * EXTENT * 512];
	int done;
};

static pthread_mutex_t upper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t upper_cond = PTHREAD_COND_INITIALIZER;
static unsigned upper_done;

static void upper_endio(struct bio *bio)
{
	struct upper_read *r = container_of(bio, struct upper_read, bio);

	pthread_mutex_lock(&upper_lock);
	r->done++;
	upper_done++;
	pthread_cond_broadcast(&upper_cond);
	pthread_mutex_unlock(&upper_lock);
}

static unsigned char pattern(uint64_t byte)
{
	return (unsigned char)(byte * 13 + (byte >> 9) * 7);
}

/* Every read got the backing device's data, once; the cache holds what it says it holds. */
static void verify(struct cache_set *c, struct block_device *backing, struct upper_read *reads,
		   unsigned nreads)
{
	struct block_device *cache = c->cache;

	for (unsigned i = 0; i < nreads; i++) {
		struct upper_read *r = &reads[i];

		kcheck(r->done == 1 && !r->bio.bi_status, "read %u completed %d times, status %d",
		       i, r->done, r->bio.bi_status);
		for (unsigned b = 0; b < r->bio.bi_size; b++)
			kcheck(r->buf[b] == pattern(r->bio.bi_sector * 512 + b),
			       "read %u: wrong data at byte %u", i, b);
	}
	for (uint64_t e = 0; e < NEXTENTS; e++)
		if (c->ptr[e])
			kcheck(!memcmp(cache->data + c->ptr[e] * 512,
				       backing->data + e * EXTENT * 512, EXTENT * 512),
			       "extent %llu cached wrong", (unsigned long long)e);
	kcheck(atomic_read(&c->search_inflight) == 0, "%d searches not freed",
	       atomic_read(&c->search_inflight));
	kcheck(c->inserts >= 1 && c->inserts <= c->misses, "%lu inserts for %lu misses", c->inserts,
	       c->misses);
	kcheck(dev_freed, "the device's closure did not free it");
}

int main(int argc, char **argv)
{
	unsigned nreads = argc > 1 ? (unsigned)atoi(argv[1]) : 400, seed = 1;
	struct block_device cache, backing;
	struct cache_set c = {.cache = &cache};
	struct cached_dev *dc = calloc(1, sizeof(*dc));
	struct upper_read *reads = calloc(nreads, sizeof(*reads));

	kcheck(nreads >= 1 && nreads <= 100000, "usage: request_read [READS 1..100000]");
	kcheck(dc && reads, "out of memory");
	bdev_init(&backing, "backing", NEXTENTS * EXTENT);
	bdev_init(&cache, "cache",
		  8 + (uint64_t)(NEXTENTS * 2) * EXTENT + nreads * MAX_READ * EXTENT);
	for (uint64_t i = 0; i < backing.sectors * 512; i++)
		backing.data[i] = pattern(i);
	pthread_mutex_init(&c.btree_lock, NULL);
	c.next_bucket = 8;
	/* Every third extent starts cached (clean: the same data as the backing device). */
	for (uint64_t e = 0; e < NEXTENTS; e += 3) {
		memcpy(cache.data + c.next_bucket * 512, backing.data + e * EXTENT * 512,
		       EXTENT * 512);
		c.ptr[e] = c.next_bucket;
		c.next_bucket += EXTENT;
	}
	bcache_wq = workqueue_create("bcache", 2);
	system_wq = workqueue_create("system_wq", 1);
	bio_pool_start(3);

	/* cached_dev_init() */
	dc->c = &c;
	dc->bdev = &backing;
	closure_init(&dc->cl, NULL);
	set_closure_fn(&dc->cl, cached_dev_flush, system_wq);

	for (unsigned i = 0; i < nreads; i++) {
		struct upper_read *r = &reads[i];
		unsigned len = 1 + rand_r(&seed) % MAX_READ;
		uint64_t first = rand_r(&seed) % (NEXTENTS - len + 1);

		r->bio = (struct bio){.bi_sector = first * EXTENT,
				      .bi_size = len * EXTENT * 512,
				      .bi_buf = r->buf,
				      .bi_end_io = upper_endio};
		/* cached_dev_submit_bio() */
		cached_dev_read(dc, search_alloc(&r->bio, dc));
	}

	pthread_mutex_lock(&upper_lock);
	while (upper_done < nreads)
		pthread_cond_wait(&upper_cond, &upper_lock);
	pthread_mutex_unlock(&upper_lock);

	/* Inserts into the cache go on after the reads completed; each search frees itself last. */
	while (atomic_read(&c.search_inflight))
		usleep(1000);

	/* bcache_device_stop(): the device's closure runs cached_dev_flush, then frees itself */
	closure_queue(&dc->cl);
	bio_pool_quiesce();
	workqueue_destroy(bcache_wq);
	workqueue_destroy(system_wq);
	bio_pool_stop();

	verify(&c, &backing, reads, nreads);
	printf("request_read: %u reads, %lu extent hits, %lu misses, %lu inserted\n", nreads,
	       c.hits, c.misses, c.inserts);
	free(reads);
	bdev_exit(&cache);
	bdev_exit(&backing);
	return 0;
}
