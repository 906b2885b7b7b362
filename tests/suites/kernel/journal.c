/* SPDX-License-Identifier: MIT */
/*
 * bcache journal writes, ported to userspace from torvalds/linux drivers/md/bcache/journal.c in its
 * CLOSURE_CALLBACK form (commit d4e3b928ab48, "closures: CLOSURE_CALLBACK() to fix type punning",
 * Kent Overstreet, Nov 2023, merged for v6.7; the closure calls read the same in v6.8-v6.17):
 * bch_journal(), bch_journal_meta(), journal_wait_for_write(), journal_try_write(),
 * journal_write(), journal_write_unlocked(), journal_write_unlock(), journal_write_done(),
 * journal_write_endio(), journal_reclaim(), bch_journal_next(), journal_write_work().
 *
 * The closure patterns: journal_wait_for_write() puts a closure on its stack and, on the fast
 * path, returns without closure_sync() (the closure holds only its running reference); the
 * journal's one io closure is started by closure_call() with the cache set as parent, and its
 * continuations chain journal_write_done -> journal_write (continue_at_nobarrier) -> a direct call
 * of journal_write_unlocked(&cl->work), ending in closure_return_with_destructor(); writers wait
 * on the journal_write's waitlist (closure_wait on a caller's closure) and on the journal's
 * waitlist for space (woken with __closure_wake_up).
 *
 * One cache device, one journal pointer; discards, btree_flush_write and the delayed work are left
 * out (callers drop their journal pin at once, and the last entry is flushed as cache_set_flush
 * does). Threads journal keys; one op in 16 waits for the write (bch_journal_meta style), so the
 * others fill journal entries and take journal_wait_for_write()'s slow path.
 *
 * Run: journal [THREADS [OPS]]. Checks that every key was written exactly once, that each waiter's
 * entry was on disk when its closure_sync() returned, and that sequence numbers are contiguous.
 */
#include <string.h>

#include "kshim.h"

#define BLOCK_BYTES    512
#define BUCKET_BLOCKS  8
#define NBUCKETS       4
#define JSET_MAX_BLOCK 1 /* a jset spans at most this many blocks (PAGE_SECTORS << JSET_BITS) */
#define JOURNAL_PIN    16
#define KEYS_PER_BLOCK ((BLOCK_BYTES - 16) / 8)
#define JSET_KEYS_MAX  (JSET_MAX_BLOCK * BLOCK_BYTES / 8)

struct jset {
	uint64_t seq;
	uint32_t keys;
	uint32_t csum;
	uint64_t d[JSET_KEYS_MAX];
};

struct journal_write {
	struct jset *data;
	struct cache_set *c;
	struct closure_waitlist wait;
	bool dirty;
	bool need_write;
};

struct journal {
	spinlock_t lock;
	/* used when waiting because the journal was full */
	struct closure_waitlist wait;
	struct closure io;
	int io_in_flight;

	uint64_t seq;
	struct {
		atomic_t data[JOURNAL_PIN];
		unsigned front, back; /* back - front entries */
	} pin;
	unsigned blocks_free;

	unsigned cur_idx, last_idx; /* journal buckets */
	uint64_t bucket_seq[NBUCKETS];
	uint64_t offset; /* the journal key's pointer, in sectors */

	struct journal_write w[2], *cur;
};

struct cache_set {
	struct closure cl;
	struct journal journal;
	struct block_device *bdev;
	struct bio journal_bio;
};

static struct workqueue *bch_journal_wq;
static unsigned long slow_paths; /* journal_wait_for_write() found no room */

/* The harness's view of the disk: what each completed journal write held. */
static struct {
	pthread_mutex_t lock;
	unsigned char *key_seen;
	uint64_t max_seq, nwrites, nkeys;
	bool *seq_written;
	unsigned seq_cap;
} ondisk = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void record_write(struct jset *j)
{
	pthread_mutex_lock(&ondisk.lock);
	kcheck(j->seq < ondisk.seq_cap, "seq %llu beyond the test's table",
	       (unsigned long long)j->seq);
	kcheck(!ondisk.seq_written[j->seq], "jset %llu written twice", (unsigned long long)j->seq);
	ondisk.seq_written[j->seq] = true;
	if (j->seq > ondisk.max_seq)
		ondisk.max_seq = j->seq;
	for (unsigned i = 0; i < j->keys; i++)
		ondisk.key_seen[j->d[i]]++;
	ondisk.nkeys += j->keys;
	ondisk.nwrites++;
	pthread_mutex_unlock(&ondisk.lock);
}

static bool seq_on_disk(uint64_t seq)
{
	bool ret;

	pthread_mutex_lock(&ondisk.lock);
	ret = ondisk.seq_written[seq];
	pthread_mutex_unlock(&ondisk.lock);
	return ret;
}

static void closure_bio_submit(struct bio *bio, struct closure *cl)
{
	closure_get(cl);
	submit_bio(bio);
}

static unsigned set_blocks(unsigned keys)
{
	return (16 + keys * 8 + BLOCK_BYTES - 1) / BLOCK_BYTES;
}

static unsigned fifo_used(struct journal *j)
{
	return j->pin.back - j->pin.front;
}

static atomic_t *fifo_back(struct journal *j)
{
	return &j->pin.data[(j->pin.back - 1) % JOURNAL_PIN];
}

#define last_seq(j) ((j)->seq - fifo_used(j) + 1)

static bool journal_full(struct journal *j)
{
	return !j->blocks_free || fifo_used(j) == JOURNAL_PIN;
}

static unsigned free_journal_buckets(struct journal *j)
{
	unsigned n = j->cur_idx >= j->last_idx ? NBUCKETS + j->last_idx - j->cur_idx
					       : j->last_idx - j->cur_idx;

	return n > 1 ? n - 1 : 0;
}

static void journal_reclaim(struct cache_set *c)
{
	struct journal *j = &c->journal;
	uint64_t last;

	while (fifo_used(j) && !atomic_read(&j->pin.data[j->pin.front % JOURNAL_PIN]))
		j->pin.front++;

	last = last_seq(j);

	/* Update last_idx */
	while (j->last_idx != j->cur_idx && j->bucket_seq[j->last_idx] < last)
		j->last_idx = (j->last_idx + 1) % NBUCKETS;

	if (j->blocks_free)
		goto out;

	if (!free_journal_buckets(j))
		goto out;

	j->cur_idx = (j->cur_idx + 1) % NBUCKETS;
	j->offset = (uint64_t)j->cur_idx * BUCKET_BLOCKS;
	j->blocks_free = BUCKET_BLOCKS;
out:
	if (!journal_full(j))
		__closure_wake_up(&j->wait);
}

static void bch_journal_next(struct journal *j)
{
	j->cur = (j->cur == j->w) ? &j->w[1] : &j->w[0];

	/*
	 * The fifo_push() needs to happen at the same time as j->seq is incremented for
	 * last_seq() to be calculated correctly
	 */
	kcheck(fifo_used(j) < JOURNAL_PIN, "journal pin fifo overflow");
	j->pin.back++;
	atomic_set(fifo_back(j), 1);

	j->cur->data->seq = ++j->seq;
	j->cur->dirty = false;
	j->cur->need_write = false;
	j->cur->data->keys = 0;
}

static void journal_write_endio(struct bio *bio)
{
	struct journal_write *w = bio->bi_private;

	kcheck(!bio->bi_status, "journal io error");
	record_write(w->data);
	closure_put(&w->c->journal.io);
}

static CLOSURE_CALLBACK(journal_write);

static CLOSURE_CALLBACK(journal_write_done)
{
	closure_type(j, struct journal, io);
	struct journal_write *w = (j->cur == j->w) ? &j->w[1] : &j->w[0];

	__closure_wake_up(&w->wait);
	continue_at_nobarrier(cl, journal_write, bch_journal_wq);
}

static CLOSURE_CALLBACK(journal_write_unlock)
{
	closure_type(c, struct cache_set, journal.io);

	c->journal.io_in_flight = 0;
	spin_unlock(&c->journal.lock);
}

static CLOSURE_CALLBACK(journal_write_unlocked)
{
	closure_type(c, struct cache_set, journal.io);
	struct journal_write *w = c->journal.cur;
	unsigned blocks = set_blocks(w->data->keys);
	struct bio *bio = &c->journal_bio;

	if (!w->need_write) {
		closure_return_with_destructor(cl, journal_write_unlock);
		return;
	} else if (journal_full(&c->journal)) {
		journal_reclaim(c);
		spin_unlock(&c->journal.lock);

		/* btree_flush_write(c): nothing to flush here, callers hold no pins */
		continue_at(cl, journal_write, bch_journal_wq);
		return;
	}

	c->journal.blocks_free -= blocks;
	w->data->csum = (uint32_t)(w->data->seq * 2654435761u) ^ w->data->keys;

	memset(bio, 0, sizeof(*bio));
	bio->bi_sector = c->journal.offset;
	bio->bi_bdev = c->bdev;
	bio->bi_size = blocks * BLOCK_BYTES;
	bio->bi_opf = REQ_OP_WRITE;
	bio->bi_end_io = journal_write_endio;
	bio->bi_private = w;
	bio->bi_buf = w->data;

	c->journal.offset += blocks;
	c->journal.bucket_seq[c->journal.cur_idx] = w->data->seq;

	atomic_dec(fifo_back(&c->journal));
	bch_journal_next(&c->journal);
	journal_reclaim(c);

	spin_unlock(&c->journal.lock);

	closure_bio_submit(bio, cl);

	continue_at(cl, journal_write_done, NULL);
}

static CLOSURE_CALLBACK(journal_write)
{
	closure_type(c, struct cache_set, journal.io);

	spin_lock(&c->journal.lock);
	journal_write_unlocked(&cl->work);
}

static void journal_try_write(struct cache_set *c)
{
	struct closure *cl = &c->journal.io;
	struct journal_write *w = c->journal.cur;

	w->need_write = true;

	if (!c->journal.io_in_flight) {
		c->journal.io_in_flight = 1;
		closure_call(cl, journal_write_unlocked, NULL, &c->cl);
	} else {
		spin_unlock(&c->journal.lock);
	}
}

static struct journal_write *journal_wait_for_write(struct cache_set *c, unsigned nkeys)
{
	struct closure cl;
	bool wait = false;

	closure_init_stack(&cl);

	spin_lock(&c->journal.lock);

	while (1) {
		struct journal_write *w = c->journal.cur;
		unsigned blocks = set_blocks(w->data->keys + nkeys);

		if (blocks <= (c->journal.blocks_free < JSET_MAX_BLOCK ? c->journal.blocks_free
								       : JSET_MAX_BLOCK))
			return w; /* FAST-PATH: no closure_sync(&cl) */

		if (wait)
			closure_wait(&c->journal.wait, &cl);

		if (!journal_full(&c->journal)) {
			/*
			 * XXX: If we were inserting so many keys that they won't fit in an
			 * _empty_ journal write, we'll deadlock.
			 */
			kcheck(w->data->keys, "keys do not fit an empty journal write");

			journal_try_write(c); /* unlocks */
		} else {
			journal_reclaim(c);
			spin_unlock(&c->journal.lock);
		}

		closure_sync(&cl);
		spin_lock(&c->journal.lock);
		wait = true;
		__atomic_add_fetch(&slow_paths, 1, __ATOMIC_RELAXED); /* the test's count */
	}
}

/* The delayed work that writes a dirty journal entry nobody waits for. */
static void journal_write_work(struct cache_set *c)
{
	spin_lock(&c->journal.lock);
	if (c->journal.cur->dirty)
		journal_try_write(c);
	else
		spin_unlock(&c->journal.lock);
}

/*
 * Entry point to the journalling code: journals nkeys keys; with a parent, parent is woken when
 * they are on disk. Returns the pin to drop once the keys are in the btree; *seq is their jset's.
 */
static atomic_t *bch_journal(struct cache_set *c, const uint64_t *keys, unsigned nkeys,
			     struct closure *parent, uint64_t *seq)
{
	struct journal_write *w;
	atomic_t *ret;

	w = journal_wait_for_write(c, nkeys);

	memcpy(w->data->d + w->data->keys, keys, nkeys * sizeof(*keys));
	w->data->keys += nkeys;
	*seq = w->data->seq;

	ret = fifo_back(&c->journal);
	atomic_inc(ret);

	if (parent) {
		closure_wait(&w->wait, parent);
		journal_try_write(c);
	} else if (!w->dirty) {
		w->dirty = true;
		spin_unlock(&c->journal.lock);
	} else {
		spin_unlock(&c->journal.lock);
	}

	return ret;
}

static struct cache_set cs;
static unsigned ops_per_thread;

static void *writer(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;

	for (unsigned op = 0; op < ops_per_thread; op++) {
		uint64_t keys[5], seq;
		unsigned nkeys = 1 + (t + op) % 5;
		atomic_t *ref;

		for (unsigned k = 0; k < nkeys; k++)
			keys[k] = ((uint64_t)t * ops_per_thread + op) * 5 + k;

		if (op % 16 == 0) {
			/* bch_journal_meta()-style: wait until the entry is on disk */
			struct closure cl;

			closure_init_stack(&cl);
			ref = bch_journal(&cs, keys, nkeys, &cl, &seq);
			closure_sync(&cl);
			kcheck(seq_on_disk(seq), "woken before jset %llu was written",
			       (unsigned long long)seq);
		} else {
			ref = bch_journal(&cs, keys, nkeys, NULL, &seq);
		}
		/* btree_complete_write(): the keys are in the btree; drop the pin, wake for space
		 */
		atomic_dec(ref);
		__closure_wake_up(&cs.journal.wait);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned nthreads = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	struct block_device bdev;
	pthread_t threads[16];
	uint64_t total;

	ops_per_thread = argc > 2 ? (unsigned)atoi(argv[2]) : 300;
	kcheck(nthreads >= 1 && nthreads <= 16 && ops_per_thread >= 1 && ops_per_thread <= 100000,
	       "usage: journal [THREADS 1..16 [OPS 1..100000]]");
	total = (uint64_t)nthreads * ops_per_thread * 5;
	ondisk.key_seen = calloc(total, 1);
	ondisk.seq_cap = (unsigned)total + 2;
	ondisk.seq_written = calloc(ondisk.seq_cap, sizeof(bool));
	kcheck(ondisk.key_seen && ondisk.seq_written, "out of memory");

	bdev_init(&bdev, "cache", NBUCKETS * BUCKET_BLOCKS);
	bio_pool_start(2);

	/* bch_cache_set_alloc() and bch_journal_alloc(), reduced to the journal */
	closure_init(&cs.cl, NULL);
	cs.bdev = &bdev;
	bch_journal_wq = workqueue_create("bch_journal", 1);
	spin_lock_init(&cs.journal.lock);
	for (int i = 0; i < 2; i++) {
		cs.journal.w[i].c = &cs;
		cs.journal.w[i].data = calloc(1, sizeof(struct jset));
		kcheck(cs.journal.w[i].data, "out of memory");
	}
	cs.journal.cur = &cs.journal.w[1];
	cs.journal.blocks_free = BUCKET_BLOCKS;
	bch_journal_next(&cs.journal);

	for (unsigned t = 0; t < nthreads; t++)
		kcheck(!pthread_create(&threads[t], NULL, writer, (void *)(uintptr_t)t),
		       "cannot start a writer");
	for (unsigned t = 0; t < nthreads; t++)
		pthread_join(threads[t], NULL);

	/* cache_set_flush(): flush last journal entry if needed, then wait for the io closure */
	journal_write_work(&cs);
	closure_sync(&cs.cl);
	closure_return(&cs.cl);

	bio_pool_stop();
	workqueue_destroy(bch_journal_wq);

	total = 0;
	for (uint64_t k = 0; k < (uint64_t)nthreads * ops_per_thread * 5; k++) {
		uint64_t op = k / 5, t = op / ops_per_thread;
		bool journaled = k % 5 < 1 + (t + op % ops_per_thread) % 5;

		kcheck(ondisk.key_seen[k] == journaled, "key %llu on disk %u times",
		       (unsigned long long)k, ondisk.key_seen[k]);
		total += journaled;
	}
	kcheck(ondisk.nkeys == total, "%llu keys on disk, expected %llu",
	       (unsigned long long)ondisk.nkeys, (unsigned long long)total);
	for (uint64_t s = 1; s <= ondisk.max_seq; s++)
		kcheck(ondisk.seq_written[s], "jset %llu missing", (unsigned long long)s);
	kcheck(ondisk.nwrites == ondisk.max_seq, "%llu writes for %llu jsets",
	       (unsigned long long)ondisk.nwrites, (unsigned long long)ondisk.max_seq);
	kcheck(!cs.journal.io_in_flight, "journal io still in flight");

	kcheck(slow_paths > 0, "journal_wait_for_write() never found the journal entry full");
	printf("journal: %llu keys from %u threads in %llu journal writes, %lu waits for room\n",
	       (unsigned long long)total, nthreads, (unsigned long long)ondisk.nwrites, slow_paths);
	free(cs.journal.w[0].data);
	free(cs.journal.w[1].data);
	free(ondisk.key_seen);
	free(ondisk.seq_written);
	bdev_exit(&bdev);
	return 0;
}
