/* SPDX-License-Identifier: MIT */
/*
 * bcache's UUID writes, ported to userspace from torvalds/linux, drivers/md/bcache/super.c (the
 * closure calls read the same from v4.x to v6.17): uuid_io(), uuid_endio(), uuid_io_unlock(),
 * __uuid_write(), bch_uuid_write(), with drivers/md/bcache/io.c's bch_submit_bbio() and
 * bcache.h's closure_bio_submit() (closure_get on bio->bi_private before the bio is submitted).
 *
 * The closure patterns: the cache set's uuid_write closure is initialised with the caller's
 * stack closure as parent, takes one reference per pointer of the bucket's key (one bio per
 * cache device), and ends in closure_return_with_destructor() (the destructor ups the uuid write
 * semaphore); each bio's completion, on a device thread, puts one reference; the caller waits in
 * closure_sync() on its stack closure until the uuid_write closure has finished.
 *
 * The cache set has two cache devices; every flash volume created writes the UUIDs again. The
 * write of volume FAIL_AT to the second device fails with an I/O error (injected), as a bad
 * sector would. Built with -DSKIP_PUT, uuid_endio() has the classic bug: its error path returns
 * before closure_put(), so the uuid_write closure never finishes and the thread that creates the
 * volume hangs in __uuid_write()'s closure_sync() for good.
 *
 * Run: uuid_write. Without SKIP_PUT: checks both copies of the UUIDs of every write and the
 * error count; exit 0 when all hold. With SKIP_PUT it never returns.
 */
#include <string.h>

#include "kshim.h"

#define CACHES	       2
#define BUCKET_SECTORS 8
#define VOLUMES	       16
#define FAIL_AT	       12 /* the volume whose UUID write fails on the second device */

struct uuid_entry {
	unsigned char uuid[16];
	char label[32];
	unsigned first_reg, last_reg, invalidated, flags;
	uint64_t sectors;
};

/* A key of the btree: one pointer (a bucket's first sector) per cache device. */
struct bkey {
	unsigned ptrs;
	uint64_t ptr[CACHES];
	unsigned size; /* sectors */
};

struct cache_set {
	struct block_device cache[CACHES];
	struct closure uuid_write;
	struct semaphore uuid_write_mutex;
	struct uuid_entry *uuids; /* one bucket's worth */
	unsigned nr_uuids;
	struct bkey uuid_bucket;
	uint64_t next_bucket;
	struct bio bios[CACHES];
	unsigned long errors;
};

/* Cache_set_err_on() marks the cache set failed; here: counted. */
static void cache_set_err_on(bool cond, struct cache_set *c)
{
	if (cond)
		__atomic_add_fetch(&c->errors, 1, __ATOMIC_SEQ_CST);
}

static void uuid_endio(struct bio *bio)
{
	struct closure *cl = bio->bi_private;
	struct cache_set *c = container_of(cl, struct cache_set, uuid_write);

	cache_set_err_on(bio->bi_status, c);
#ifdef SKIP_PUT
	if (bio->bi_status) /* the bug: the error path leaves before its put */
		return;
#endif
	closure_put(cl); /* UUID_ENDIO_PUT */
}

static void uuid_io_unlock(struct closure *cl)
{
	struct cache_set *c = container_of(cl, struct cache_set, uuid_write);

	up(&c->uuid_write_mutex);
}

/* bcache.h: the reference the bio's completion puts, taken before it is submitted. */
static void closure_bio_submit(struct bio *bio, struct closure *cl)
{
	closure_get(cl); /* BIO_SUBMIT_GET */
	submit_bio(bio);
}

/* io.c: the bio for pointer ptr of k, on that pointer's device. */
static void bch_submit_bbio(struct bio *bio, struct cache_set *c, const struct bkey *k,
			    unsigned ptr)
{
	bio->bi_bdev = &c->cache[ptr];
	bio->bi_sector = k->ptr[ptr];
	closure_bio_submit(bio, bio->bi_private);
}

static void uuid_io(struct cache_set *c, int op, struct bkey *k, struct closure *parent)
{
	struct closure *cl = &c->uuid_write;

	down(&c->uuid_write_mutex);
	closure_init(cl, parent); /* UUID_IO_INIT */

	for (unsigned i = 0; i < k->ptrs; i++) {
		struct bio *bio = &c->bios[i];

		memset(bio, 0, sizeof(*bio));
		bio->bi_opf = op;
		bio->bi_size = k->size * 512;
		bio->bi_buf = c->uuids;
		bio->bi_end_io = uuid_endio;
		bio->bi_private = cl;
		bch_submit_bbio(bio, c, k, i);

		if (op != REQ_OP_WRITE)
			break;
	}

	closure_return_with_destructor(cl, uuid_io_unlock); /* UUID_IO_RETURN */
}

/* alloc.c's bch_bucket_alloc_set(), reduced: the next bucket on every device. */
static int bch_bucket_alloc_set(struct cache_set *c, struct bkey *k)
{
	if ((c->next_bucket + 1) * BUCKET_SECTORS > c->cache[0].sectors)
		return 1;
	k->ptrs = CACHES;
	for (unsigned i = 0; i < CACHES; i++)
		k->ptr[i] = c->next_bucket * BUCKET_SECTORS;
	c->next_bucket++;
	return 0;
}

static int __uuid_write(struct cache_set *c)
{
	struct bkey k;
	struct closure cl;

	closure_init_stack(&cl); /* UUID_WRITE_STACK */

	if (bch_bucket_alloc_set(c, &k))
		return 1;

	k.size = BUCKET_SECTORS;
	uuid_io(c, REQ_OP_WRITE, &k, &cl);
	closure_sync(&cl); /* UUID_WRITE_SYNC */

	c->uuid_bucket = k;
	return 0;
}

static int bch_uuid_write(struct cache_set *c)
{
	return __uuid_write(c);
}

/* super.c's bch_flash_dev_create(), reduced to its UUID entry and the write of every UUID. */
static int bch_flash_dev_create(struct cache_set *c, unsigned n)
{
	struct uuid_entry *u = &c->uuids[c->nr_uuids++];

	memset(u, 0, sizeof(*u));
	for (unsigned i = 0; i < sizeof(u->uuid); i++)
		u->uuid[i] = (unsigned char)(n * 31 + i);
	snprintf(u->label, sizeof(u->label), "flash%u", n);
	u->first_reg = u->last_reg = n;
	u->sectors = 1024;
	return bch_uuid_write(c);
}

int main(void)
{
	static struct cache_set c;
	unsigned written = 0;

	for (unsigned i = 0; i < CACHES; i++) {
		bdev_init(&c.cache[i], i ? "cache1" : "cache0", (VOLUMES + 1) * BUCKET_SECTORS);
	}
	/* The bucket volume FAIL_AT writes to; its copy on the second device is the bad one. */
	c.cache[1].fail_sector = (FAIL_AT - 1) * BUCKET_SECTORS;
	sema_init(&c.uuid_write_mutex, 1);
	/* A whole bucket: the bios move BUCKET_SECTORS sectors, whatever fits of the entries. */
	c.uuids = calloc(1, BUCKET_SECTORS * 512);
	kcheck(c.uuids, "out of memory");
	bio_pool_start(2);

	for (unsigned n = 1; n <= VOLUMES; n++) {
		kcheck(!bch_flash_dev_create(&c, n), "volume %u: no bucket for the UUIDs", n);
		written++;
		if (n == FAIL_AT)
			continue; /* one copy is bad: bcache marks the cache set failed */
		for (unsigned i = 0; i < CACHES; i++)
			kcheck(!memcmp(c.cache[i].data + c.uuid_bucket.ptr[i] * 512, c.uuids,
				       c.nr_uuids * sizeof(*c.uuids)),
			       "volume %u: the UUIDs on %s differ", n, c.cache[i].name);
	}
	bio_pool_stop();
	kcheck(c.errors == 1, "%lu write errors, expected 1", c.errors);
	printf("uuid_write: %u UUID writes to %d devices, 1 write error\n", written, CACHES);
	for (unsigned i = 0; i < CACHES; i++)
		bdev_exit(&c.cache[i]);
	free(c.uuids);
	return 0;
}
