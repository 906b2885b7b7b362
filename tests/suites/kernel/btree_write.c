/* SPDX-License-Identifier: MIT */
/*
 * bcache btree node writes, superblock writes and the cache set's life, ported to userspace from
 * torvalds/linux in their CLOSURE_CALLBACK form (commit d4e3b928ab48, "closures: CLOSURE_CALLBACK()
 * to fix type punning", Kent Overstreet, Nov 2023, merged for v6.7; the closure calls read the same
 * in v6.8-v6.17):
 *   drivers/md/bcache/btree.c: __bch_btree_node_write(), bch_btree_node_write(),
 *     bch_btree_node_write_sync(), do_btree_node_write(), btree_node_write_endio(),
 *     btree_node_write_done(), __btree_node_write_done(), btree_node_write_unlock(), mca_reap();
 *   drivers/md/bcache/io.c: bch_submit_bbio() (closure_bio_submit on bio->bi_private);
 *   drivers/md/bcache/super.c: bch_write_bdev_super(), write_bdev_super_endio(),
 *     bcache_write_super(), write_super_endio(), bch_cache_set_alloc(), bch_cache_set_stop(),
 *     __cache_set_unregister(), cache_set_flush(), cache_set_free().
 *
 * The closure patterns: each node's io closure has the caller's closure as parent, or the cache
 * set's when nobody waits; it ends in closure_return_with_destructor() (the destructor ups the
 * node's io semaphore), reached by a direct call __btree_node_write_done(&cl->work) or, when no
 * bounce pages could be had, by closure_sync() on the io closure itself and
 * continue_at_nobarrier(). mca_reap() leaves its stack closure without closure_sync() when it
 * gives up early. The cache set's closure is stopped at birth (set_closure_fn,
 * closure_set_stopped, closure_put); unregistering queues c->caching, whose last continuation
 * closure_return()s; when the last child is gone cache_set_free() runs as c->cl's continuation
 * and frees it after closure_debug_destroy().
 *
 * One write of one node fails with an I/O error (injected), as a bad sector would.
 * Built with -DFORGET_PUT, btree_node_write_endio()'s error path returns without its
 * closure_put(): the node's io closure and the cache set are never freed.
 *
 * Run: btree_write [NODES]. Checks every node's data on disk, the error count, the superblock
 * sequence numbers, and that the cache set was freed; exit 0 when all hold.
 */
#include <errno.h>
#include <string.h>

#include "kshim.h"

#define NODE_SECTORS 2
#define MAX_NODES    256

struct cache_set;

struct btree {
	struct closure io;
	struct semaphore io_mutex;
	pthread_mutex_t write_lock;
	struct cache_set *c;
	uint64_t ptr; /* sector on the cache device */
	bool dirty, io_error;
	unsigned written;
	struct bio *bio;
	unsigned char data[NODE_SECTORS * 512];
};

struct cache_set {
	struct closure cl;
	struct closure caching;
	struct closure sb_write;
	struct semaphore sb_write_mutex;
	struct block_device *cache;
	uint64_t sb_seq;
	unsigned char sb_buf[512];
	struct bio sb_bio;
	unsigned nnodes;
	struct btree *nodes;
	unsigned long write_errors;
};

struct cached_dev {
	struct closure sb_write;
	struct semaphore sb_write_mutex;
	struct block_device *bdev;
	uint64_t sb_seq;
	unsigned char sb_buf[512];
	struct bio sb_bio;
};

static struct workqueue *system_wq;
static struct cache_set *the_cache_set; /* reachable, for LeakSanitizer, until freed */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t state_cond = PTHREAD_COND_INITIALIZER;
static bool flushed, freed;

static void closure_bio_submit(struct bio *bio, struct closure *cl)
{
	closure_get(cl);
	submit_bio(bio);
}

/* io.c: the bio's closure is its bi_private. */
static void bch_submit_bbio(struct bio *bio, struct cache_set *c, uint64_t ptr)
{
	bio->bi_sector = ptr;
	bio->bi_bdev = c->cache;
	closure_bio_submit(bio, bio->bi_private);
}

static CLOSURE_CALLBACK(btree_node_write_unlock)
{
	closure_type(b, struct btree, io);

	up(&b->io_mutex);
}

static CLOSURE_CALLBACK(__btree_node_write_done)
{
	closure_type(b, struct btree, io);

	free(b->bio); /* bch_bbio_free() */
	b->bio = NULL;

	closure_return_with_destructor(cl, btree_node_write_unlock);
}

static CLOSURE_CALLBACK(btree_node_write_done)
{
	closure_type(b, struct btree, io);

	free(b->bio->bi_buf); /* bio_free_pages(): the bounce copy */
	__btree_node_write_done(&cl->work);
}

static void btree_node_write_endio(struct bio *bio)
{
	struct closure *cl = bio->bi_private;
	struct btree *b = container_of(cl, struct btree, io);

	if (bio->bi_status)
		b->io_error = true;

	if (bio->bi_status) { /* bch_bbio_count_io_errors() */
		__atomic_add_fetch(&b->c->write_errors, 1, __ATOMIC_RELAXED);
#ifdef FORGET_PUT
		return; /* the bug: an error path that leaves before the put */
#endif
	}
	closure_put(cl); /* BUG-SITE */
}

static void do_btree_node_write(struct btree *b)
{
	struct closure *cl = &b->io;
	void *bounce;

	b->bio = calloc(1, sizeof(*b->bio));
	kcheck(b->bio, "out of memory");
	b->bio->bi_end_io = btree_node_write_endio;
	b->bio->bi_private = cl;
	b->bio->bi_size = sizeof(b->data);
	b->bio->bi_opf = REQ_OP_WRITE;

	/* bch_bio_alloc_pages(GFP_NOWAIT): fails now and then; every third write here. */
	bounce = (b->written % 3 != 2) ? malloc(sizeof(b->data)) : NULL;
	if (bounce) {
		memcpy(bounce, b->data, sizeof(b->data));
		b->bio->bi_buf = bounce;

		bch_submit_bbio(b->bio, b->c, b->ptr);

		continue_at(cl, btree_node_write_done, NULL);
	} else {
		b->bio->bi_buf = b->data;

		bch_submit_bbio(b->bio, b->c, b->ptr);

		closure_sync(cl);
		continue_at_nobarrier(cl, __btree_node_write_done, NULL);
	}
}

static void __bch_btree_node_write(struct btree *b, struct closure *parent)
{
	/* If caller isn't waiting for write, parent refcount is cache set */
	down(&b->io_mutex);
	closure_init(&b->io, parent ?: &b->c->cl); /* INIT-IO */

	b->dirty = false;

	do_btree_node_write(b);

	b->written++;
}

static void bch_btree_node_write(struct btree *b, struct closure *parent)
{
	__bch_btree_node_write(b, parent);
}

static void bch_btree_node_write_sync(struct btree *b)
{
	struct closure cl;

	closure_init_stack(&cl);

	pthread_mutex_lock(&b->write_lock);
	bch_btree_node_write(b, &cl);
	pthread_mutex_unlock(&b->write_lock);

	closure_sync(&cl);
}

/* btree_node_write_work(): the delayed write of a dirty node, nobody waiting. */
static void btree_node_write_work(struct btree *b)
{
	pthread_mutex_lock(&b->write_lock);
	if (b->dirty)
		__bch_btree_node_write(b, NULL);
	pthread_mutex_unlock(&b->write_lock);
}

static int mca_reap(struct btree *b, bool flush)
{
	struct closure cl;

	closure_init_stack(&cl);

	if (!flush) {
		if (b->dirty)
			goto out_unlock;

		if (sem_trywait(&b->io_mutex.sem))
			goto out_unlock;
		up(&b->io_mutex);
	}

	pthread_mutex_lock(&b->write_lock);
	if (b->dirty)
		__bch_btree_node_write(b, &cl);
	pthread_mutex_unlock(&b->write_lock);

	closure_sync(&cl);

	/* wait for any in flight btree write */
	down(&b->io_mutex);
	up(&b->io_mutex);

	return 0;
out_unlock:
	return -ENOMEM; /* returns with cl initialised and not synced, as the kernel does */
}

/* super.c */

static void __write_super(uint64_t seq, unsigned char *out, struct bio *bio)
{
	memset(out, 0, 512);
	memcpy(out, "bcache-sb", 9);
	memcpy(out + 16, &seq, sizeof(seq));
	bio->bi_sector = 0;
	bio->bi_size = 512;
	bio->bi_buf = out;
	bio->bi_opf = REQ_OP_WRITE;
	submit_bio(bio);
}

static void write_bdev_super_endio(struct bio *bio)
{
	struct cached_dev *dc = bio->bi_private;

	kcheck(!bio->bi_status, "backing superblock write failed");
	closure_put(&dc->sb_write);
}

static CLOSURE_CALLBACK(bch_write_bdev_super_unlock)
{
	closure_type(dc, struct cached_dev, sb_write);

	up(&dc->sb_write_mutex);
}

static void bch_write_bdev_super(struct cached_dev *dc, struct closure *parent)
{
	struct closure *cl = &dc->sb_write;
	struct bio *bio = &dc->sb_bio;

	down(&dc->sb_write_mutex);
	closure_init(cl, parent);

	memset(bio, 0, sizeof(*bio));
	bio->bi_bdev = dc->bdev;
	bio->bi_end_io = write_bdev_super_endio;
	bio->bi_private = dc;

	closure_get(cl);
	/* I/O request sent to backing device */
	__write_super(++dc->sb_seq, dc->sb_buf, bio);

	closure_return_with_destructor(cl, bch_write_bdev_super_unlock);
}

static void write_super_endio(struct bio *bio)
{
	struct cache_set *c = bio->bi_private;

	kcheck(!bio->bi_status, "cache superblock write failed");
	closure_put(&c->sb_write);
}

static CLOSURE_CALLBACK(bcache_write_super_unlock)
{
	closure_type(c, struct cache_set, sb_write);

	up(&c->sb_write_mutex);
}

static void bcache_write_super(struct cache_set *c)
{
	struct closure *cl = &c->sb_write;
	struct bio *bio = &c->sb_bio;

	down(&c->sb_write_mutex);
	closure_init(cl, &c->cl);

	memset(bio, 0, sizeof(*bio));
	bio->bi_bdev = c->cache;
	bio->bi_end_io = write_super_endio;
	bio->bi_private = c;

	closure_get(cl);
	__write_super(++c->sb_seq, c->sb_buf, bio);

	closure_return_with_destructor(cl, bcache_write_super_unlock);
}

static CLOSURE_CALLBACK(cache_set_free)
{
	closure_type(c, struct cache_set, cl);

	free(c->nodes); /* bch_btree_cache_free() */

	pthread_mutex_lock(&state_lock);
	freed = true; /* wake_up(&unregister_wait) */
	the_cache_set = NULL;
	pthread_cond_broadcast(&state_cond);
	pthread_mutex_unlock(&state_lock);

	closure_debug_destroy(&c->cl);
	free(c); /* kobject_put(&c->kobj) */
}

static CLOSURE_CALLBACK(cache_set_flush)
{
	closure_type(c, struct cache_set, caching);

	for (unsigned i = 0; i < c->nnodes; i++) {
		struct btree *b = &c->nodes[i];

		pthread_mutex_lock(&b->write_lock);
		if (b->dirty)
			__bch_btree_node_write(b, NULL);
		pthread_mutex_unlock(&b->write_lock);
	}

	pthread_mutex_lock(&state_lock);
	flushed = true;
	pthread_cond_broadcast(&state_cond);
	pthread_mutex_unlock(&state_lock);

	closure_return(cl);
}

static CLOSURE_CALLBACK(__cache_set_unregister)
{
	closure_type(c, struct cache_set, caching);

	(void)c; /* bch_cached_dev_detach() of each device */
	continue_at(cl, cache_set_flush, system_wq);
}

static void bch_cache_set_stop(struct cache_set *c)
{
	/* closure_fn set to __cache_set_unregister() */
	closure_queue(&c->caching);
}

static struct cache_set *bch_cache_set_alloc(struct block_device *cache, unsigned nnodes)
{
	struct cache_set *c = calloc(1, sizeof(*c));

	kcheck(c, "out of memory");
	closure_init(&c->cl, NULL); /* INIT-CACHE-SET */
	set_closure_fn(&c->cl, cache_set_free, system_wq);

	closure_init(&c->caching, &c->cl);
	set_closure_fn(&c->caching, __cache_set_unregister, system_wq);

	/* Maybe create continue_at_noreturn() and use it here? */
	closure_set_stopped(&c->cl);
	closure_put(&c->cl);

	sema_init(&c->sb_write_mutex, 1);
	c->cache = cache;
	c->nnodes = nnodes;
	c->nodes = calloc(nnodes, sizeof(*c->nodes));
	kcheck(c->nodes, "out of memory");
	for (unsigned i = 0; i < nnodes; i++) {
		struct btree *b = &c->nodes[i];

		b->c = c;
		b->ptr = 8 + (uint64_t)i * NODE_SECTORS;
		sema_init(&b->io_mutex, 1);
		pthread_mutex_init(&b->write_lock, NULL);
	}
	return c;
}

/* The keys of node i after its round r-th update. */
static void node_fill(unsigned char *p, unsigned i, unsigned r)
{
	for (unsigned k = 0; k < NODE_SECTORS * 512; k++)
		p[k] = (unsigned char)(i * 29 + r * 7 + k);
}

static void node_update(struct btree *b, unsigned i, unsigned r)
{
	pthread_mutex_lock(&b->write_lock);
	node_fill(b->data, i, r);
	b->dirty = true;
	pthread_mutex_unlock(&b->write_lock);
}

/* Updates: synchronous writes, background writes, and the shrinker reaping nodes. */
static void update_rounds(struct cache_set *c, struct block_device *cache, unsigned n, unsigned bad)
{
	for (unsigned r = 1; r <= 3; r++) {
		for (unsigned i = 0; i < n; i++)
			node_update(&c->nodes[i], i, r);
		if (r == 3)
			cache->fail_sector = c->nodes[bad].ptr; /* one write error, below */
		for (unsigned i = 0; i < n; i++) {
			if (i % 4 == 0)
				bch_btree_node_write_sync(&c->nodes[i]);
			else if (i % 4 == 1)
				btree_node_write_work(&c->nodes[i]);
			else if (i % 4 == 2)
				kcheck(mca_reap(&c->nodes[i], false) == -ENOMEM,
				       "mca_reap reaped a dirty node without flush");
			else
				kcheck(mca_reap(&c->nodes[i], true) == 0, "mca_reap(flush) failed");
		}
		bio_pool_quiesce();
		cache->fail_sector = UINT64_MAX;
	}
}

/*
 * Unregister: cache_set_flush writes what is still dirty (every i % 4 == 2). Returns when all that
 * follows from it has run.
 */
static void unregister(struct cache_set *c)
{
	bch_cache_set_stop(c);
	pthread_mutex_lock(&state_lock);
	while (!flushed)
		pthread_cond_wait(&state_cond, &state_lock);
	pthread_mutex_unlock(&state_lock);
	/* The flush's writes complete in the pool; then c->cl's continuation runs on system_wq. */
	bio_pool_quiesce();
	workqueue_destroy(system_wq);
	bio_pool_stop();
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 32, bad = 5;
	struct block_device cache, backing;
	struct cached_dev dc = {.bdev = &backing};
	struct cache_set *c;
	struct closure cl;
	uint64_t sb_seq;
	unsigned long c_errors;
	bool bad_io_error;

	kcheck(n > bad && n <= MAX_NODES, "usage: btree_write [NODES %u..%d]", bad + 1, MAX_NODES);
	bdev_init(&cache, "cache", 8 + (uint64_t)n * NODE_SECTORS);
	bdev_init(&backing, "backing", 8);
	sema_init(&dc.sb_write_mutex, 1);
	system_wq = workqueue_create("system_wq", 2);
	bio_pool_start(3);

	the_cache_set = c = bch_cache_set_alloc(&cache, n);

	/* run_cache_set(): the first write of every node waits; then the superblock */
	closure_init_stack(&cl);
	for (unsigned i = 0; i < n; i++) {
		node_update(&c->nodes[i], i, 0);
		pthread_mutex_lock(&c->nodes[i].write_lock);
		bch_btree_node_write(&c->nodes[i], &cl);
		pthread_mutex_unlock(&c->nodes[i].write_lock);
	}
	closure_sync(&cl);
	bcache_write_super(c);

	update_rounds(c, &cache, n, bad);

	/* The writeback thread's clean path (no waiter), then its detach path (waits). */
	bch_write_bdev_super(&dc, NULL);
	closure_init_stack(&cl);
	bch_write_bdev_super(&dc, &cl);
	closure_sync(&cl);
	bcache_write_super(c);
	sb_seq = c->sb_seq;
	c_errors = c->write_errors;
	bad_io_error = c->nodes[bad].io_error;

	unregister(c);

	for (unsigned i = 0; i < n; i++) {
		unsigned char want[NODE_SECTORS * 512];

		node_fill(want, i, i == bad ? 2 : 3); /* the failed write left the previous one */
		kcheck(!memcmp(cache.data + (8 + (uint64_t)i * NODE_SECTORS) * 512, want,
			       sizeof(want)),
		       "node %u on disk is not its last version", i);
	}
	kcheck(cache.errors == 1 && c_errors == 1 && bad_io_error,
	       "%lu write errors, %lu counted, expected 1", cache.errors, c_errors);
	kcheck(!memcmp(cache.data + 16, &sb_seq, sizeof(sb_seq)) && sb_seq == 2,
	       "cache superblock seq %llu", (unsigned long long)sb_seq);
	kcheck(dc.sb_seq == 2 && !memcmp(backing.data + 16, &dc.sb_seq, sizeof(dc.sb_seq)),
	       "backing superblock seq %llu", (unsigned long long)dc.sb_seq);
	kcheck(freed, "cache set still referenced after unregister: not freed");

	printf("btree_write: %u nodes written 4 times, 1 write error, superblocks at seq 2\n", n);
	bdev_exit(&cache);
	bdev_exit(&backing);
	return 0;
}
