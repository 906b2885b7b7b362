/* SPDX-License-Identifier: MIT */
/*
 * bcache background writeback, ported to userspace from torvalds/linux
 * drivers/md/bcache/writeback.c in its CLOSURE_CALLBACK form (commit d4e3b928ab48, "closures:
 * CLOSURE_CALLBACK() to fix type punning", Kent Overstreet, Nov 2023, merged for v6.7), with the
 * writeback_ordering_wait waitlist of later versions (which a 2025 patch proposes to
 * remove): read_dirty(), read_dirty_submit(), write_dirty(), write_dirty_finish(), dirty_endio(),
 * read_dirty_endio(), dirty_io_destructor(); closure_bio_submit() from bcache.h.
 *
 * The flow: read_dirty() reads each dirty extent from the cache device, every dirty_io a child of
 * read_dirty()'s stack closure (closure_call). Its continuations write the extent to the backing
 * device in key order (the writeback_ordering_wait waitlist), then mark the key clean and free
 * the dirty_io with closure_return_with_destructor(). read_dirty() ends in closure_sync().
 *
 * The btree is a table of keys; keybuf, rate limiting and stripes are left out. One read error is
 * injected: as in the kernel, the key stays dirty and the next pass writes it back.
 *
 * Run: writeback [EXTENTS]. Checks the backing device byte for byte, the counts, and that every
 * key is clean; exit 0 when all hold.
 */
#include <string.h>

#include "kshim.h"

#define MAX_WRITEBACKS_IN_PASS 5
#define MAX_WRITESIZE_IN_PASS  5000 /* sectors */
#define IN_FLIGHT	       64

struct bkey {
	uint64_t start, size; /* on the backing device, sectors */
	uint64_t ptr;	      /* on the cache device */
	bool dirty;
};

struct keybuf_key {
	struct bkey key;
	void *private;
};

struct cached_dev {
	struct block_device *cache, *bdev;
	struct semaphore in_flight;
	atomic_t writeback_sequence_next;
	struct closure_waitlist writeback_ordering_wait;
	struct workqueue *writeback_write_wq;

	pthread_mutex_t btree_lock; /* the "btree": one key per extent */
	struct bkey *btree;
	unsigned nkeys;

	struct keybuf_key *keybuf; /* this pass's dirty keys */
	unsigned keybuf_nr, keybuf_next;

	unsigned long keys_done, keys_failed, read_errors;
};

struct dirty_io {
	struct closure cl;
	struct cached_dev *dc;
	uint16_t sequence;
	struct bio bio;
	unsigned char data[];
};

/* bcache.h: a reference for the bio, put back by its bi_end_io. */
static void closure_bio_submit(struct bio *bio, struct closure *cl)
{
	closure_get(cl);
	submit_bio(bio);
}

static struct keybuf_key *bch_keybuf_next(struct cached_dev *dc)
{
	return dc->keybuf_next < dc->keybuf_nr ? &dc->keybuf[dc->keybuf_next++] : NULL;
}

static void dirty_init(struct keybuf_key *w)
{
	struct dirty_io *io = w->private;
	struct bio *bio = &io->bio;

	memset(bio, 0, sizeof(*bio));
	bio->bi_size = (unsigned)w->key.size << 9;
	bio->bi_private = w;
	bio->bi_buf = io->data;
}

/* Written as before the CLOSURE_CALLBACK conversion (v6.6): both forms build in one program. */
static void dirty_io_destructor(struct closure *cl)
{
	struct dirty_io *io = container_of(cl, struct dirty_io, cl);

	free(io);
}

static CLOSURE_CALLBACK(write_dirty_finish)
{
	closure_type(io, struct dirty_io, cl);
	struct keybuf_key *w = io->bio.bi_private;
	struct cached_dev *dc = io->dc;

	/* This is kind of a dumb way of signalling errors. */
	if (w->key.dirty) {
		/* bch_btree_insert() of the key with its dirty bit cleared */
		pthread_mutex_lock(&dc->btree_lock);
		for (unsigned i = 0; i < dc->nkeys; i++)
			if (dc->btree[i].start == w->key.start)
				dc->btree[i].dirty = false;
		dc->keys_done++;
		pthread_mutex_unlock(&dc->btree_lock);
	} else {
		__atomic_add_fetch(&dc->keys_failed, 1, __ATOMIC_RELAXED);
	}

	up(&dc->in_flight);

	closure_return_with_destructor(cl, dirty_io_destructor);
}

static void dirty_endio(struct bio *bio)
{
	struct keybuf_key *w = bio->bi_private;
	struct dirty_io *io = w->private;

	if (bio->bi_status)
		w->key.dirty = false;

	closure_put(&io->cl);
}

static CLOSURE_CALLBACK(write_dirty)
{
	closure_type(io, struct dirty_io, cl);
	struct keybuf_key *w = io->bio.bi_private;
	struct cached_dev *dc = io->dc;
	uint16_t next_sequence;

	if (atomic_read(&dc->writeback_sequence_next) != io->sequence) {
		/* Not our turn to write; wait for a write to complete */
		closure_wait(&dc->writeback_ordering_wait, cl);

		if (atomic_read(&dc->writeback_sequence_next) == io->sequence) {
			/*
			 * Edge case-- it happened in indeterminate order
			 * relative to when we were added to wait list..
			 */
			closure_wake_up(&dc->writeback_ordering_wait);
		}

		continue_at(cl, write_dirty, io->dc->writeback_write_wq);
		return;
	}

	next_sequence = io->sequence + 1;

	/*
	 * IO errors are signalled using the dirty bit on the key. If we failed to read, we should
	 * not attempt to write to the backing device.
	 */
	if (w->key.dirty) {
		dirty_init(w);
		io->bio.bi_opf = REQ_OP_WRITE;
		io->bio.bi_sector = w->key.start;
		io->bio.bi_bdev = dc->bdev;
		io->bio.bi_end_io = dirty_endio;

		/* I/O request sent to backing device */
		closure_bio_submit(&io->bio, cl);
	}

	atomic_set(&dc->writeback_sequence_next, next_sequence);
	closure_wake_up(&dc->writeback_ordering_wait);

	continue_at(cl, write_dirty_finish, io->dc->writeback_write_wq);
}

static void read_dirty_endio(struct bio *bio)
{
	struct keybuf_key *w = bio->bi_private;
	struct dirty_io *io = w->private;

	if (bio->bi_status) /* bch_count_io_errors() */
		__atomic_add_fetch(&io->dc->read_errors, 1, __ATOMIC_RELAXED);

	dirty_endio(bio);
}

static CLOSURE_CALLBACK(read_dirty_submit)
{
	closure_type(io, struct dirty_io, cl);

	closure_bio_submit(&io->bio, cl);

	continue_at(cl, write_dirty, io->dc->writeback_write_wq);
}

static void read_dirty(struct cached_dev *dc)
{
	struct keybuf_key *next, *keys[MAX_WRITEBACKS_IN_PASS], *w;
	size_t size;
	int nk, i;
	struct dirty_io *io;
	struct closure cl;
	uint16_t sequence = 0;

	atomic_set(&dc->writeback_sequence_next, sequence);
	closure_init_stack(&cl);

	next = bch_keybuf_next(dc);

	while (next) {
		size = 0;
		nk = 0;

		do {
			/* Don't combine too many operations, even if they are all small. */
			if (nk >= MAX_WRITEBACKS_IN_PASS)
				break;
			/* If the current operation is very large, don't further combine. */
			if (size >= MAX_WRITESIZE_IN_PASS)
				break;
			/* Operations are only eligible to be combined if they are contiguous. */
			if (nk != 0 &&
			    keys[nk - 1]->key.start + keys[nk - 1]->key.size != next->key.start)
				break;

			size += next->key.size;
			keys[nk++] = next;
		} while ((next = bch_keybuf_next(dc)));

		/* Now we have gathered a set of 1..5 keys to write back. */
		for (i = 0; i < nk; i++) {
			w = keys[i];

			io = calloc(1, sizeof(*io) + (w->key.size << 9));
			kcheck(io, "out of memory");

			w->private = io;
			io->dc = dc;
			io->sequence = sequence++;

			dirty_init(w);
			io->bio.bi_opf = REQ_OP_READ;
			io->bio.bi_sector = w->key.ptr;
			io->bio.bi_bdev = dc->cache;
			io->bio.bi_end_io = read_dirty_endio;

			down(&dc->in_flight);

			/*
			 * We've acquired a semaphore for the maximum simultaneous number of
			 * writebacks; from here everything happens asynchronously.
			 */
			closure_call(&io->cl, read_dirty_submit, NULL, &cl);
		}
	}

	/* Wait for outstanding writeback IOs to finish before refilling again */
	closure_sync(&cl);
}

/* refill_dirty(): this pass's keys are the btree's dirty ones. */
static unsigned refill_dirty(struct cached_dev *dc)
{
	dc->keybuf_nr = dc->keybuf_next = 0;
	for (unsigned i = 0; i < dc->nkeys; i++)
		if (dc->btree[i].dirty)
			dc->keybuf[dc->keybuf_nr++] = (struct keybuf_key){.key = dc->btree[i]};
	return dc->keybuf_nr;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
}

int main(int argc, char **argv)
{
	unsigned nkeys = argc > 1 ? (unsigned)atoi(argv[1]) : 200;
	struct block_device cache, backing;
	struct cached_dev dc = {.cache = &cache, .bdev = &backing};
	uint64_t start = 0, ptr = 8;
	unsigned passes = 0;

	kcheck(nkeys > 1 && nkeys <= 10000, "usage: writeback [EXTENTS 2..10000]");
	bdev_init(&cache, "cache", 8 + nkeys * 8);
	bdev_init(&backing, "backing", 16 + nkeys * 16);
	dc.btree = calloc(nkeys, sizeof(*dc.btree));
	dc.keybuf = calloc(nkeys, sizeof(*dc.keybuf));
	kcheck(dc.btree && dc.keybuf, "out of memory");
	pthread_mutex_init(&dc.btree_lock, NULL);
	sema_init(&dc.in_flight, IN_FLIGHT);
	dc.writeback_write_wq = workqueue_create("bcache_writeback_wq", 2);
	bio_pool_start(4);

	/* Dirty extents of 1..8 sectors, runs of contiguous ones separated by gaps. */
	for (unsigned i = 0; i < nkeys; i++) {
		uint64_t size = 1 + i % 8;

		start += (i % 3 == 0) ? 8 : 0;
		dc.btree[i] =
			(struct bkey){.start = start, .size = size, .ptr = ptr, .dirty = true};
		fill(cache.data + ptr * 512, size * 512, i);
		start += size;
		ptr += size;
	}
	dc.nkeys = nkeys;
	cache.fail_sector = dc.btree[nkeys / 2].ptr; /* one read error in the first pass */

	/* bch_writeback_thread(): refill and write back until nothing is dirty. */
	while (refill_dirty(&dc)) {
		read_dirty(&dc);
		cache.fail_sector = UINT64_MAX;
		kcheck(++passes <= 3, "still dirty after %u passes", passes);
	}

	bio_pool_stop();
	workqueue_destroy(dc.writeback_write_wq);

	for (unsigned i = 0; i < nkeys; i++) {
		unsigned char want[8 * 512];

		fill(want, dc.btree[i].size * 512, i);
		kcheck(!memcmp(backing.data + dc.btree[i].start * 512, want,
			       dc.btree[i].size * 512),
		       "extent %u written back wrong", i);
	}
	kcheck(dc.keys_done == nkeys, "%lu keys written back, expected %u", dc.keys_done, nkeys);
	kcheck(dc.keys_failed == 1 && dc.read_errors == 1,
	       "%lu failed, %lu read errors, expected 1", dc.keys_failed, dc.read_errors);
	kcheck(passes == 2, "%u passes, expected 2", passes);
	kcheck(backing.writes == nkeys, "%lu writes to the backing device, expected %u",
	       backing.writes, nkeys);
	for (int i = 0; i < IN_FLIGHT; i++)
		kcheck(sem_trywait(&dc.in_flight.sem) == 0, "in_flight not back to %d", IN_FLIGHT);

	printf("writeback: %u extents written back in %u passes, 1 read error retried\n", nkeys,
	       passes);
	free(dc.btree);
	free(dc.keybuf);
	bdev_exit(&cache);
	bdev_exit(&backing);
	return 0;
}
