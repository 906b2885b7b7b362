/* SPDX-License-Identifier: MIT */
/*
 * bcachefs journal read at mount, and the btree_trans reference, ported to userspace from
 * torvalds/linux fs/bcachefs (v6.8 to v6.17):
 *   journal_io.c: bch2_journal_read() (a stack closure, closure_call() of each device's read
 *     closure on system_unbound_wq, closure_sync()), bch2_journal_read_device() (finds its
 *     journal_list through cl->parent, reads every bucket, closure_return(); its error path
 *     records the error in the list first);
 *   btree_iter.c: bch2_trans_get() (closure_init_stack_release(&trans->ref)) and
 *     bch2_trans_put() (closure_return_sync(&trans->ref): waits until every reference taken
 *     by others is back, and leaves the count at 0);
 *   debug.c: bch2_btree_transactions_read() (closure_get_not_zero(&trans->ref) on each listed
 *     transaction, closure_put when done): a reader that may find a transaction being put.
 *
 * Journal buckets hold jsets (seq, then keys); bucket reads are synchronous bios
 * (submit_bio_wait). One device has an unreadable bucket, as a dying disk would.
 *
 * Run: bcachefs_journal_read. Checks the entries read (each seq once, from every device but the
 * bad bucket), the error returned for the bad device, and that after bch2_trans_put() no reader
 * got a reference (closure_get_not_zero fails) while readers running before it all put theirs.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "kshim.h"

#define NR_DEVS		 3
#define BUCKETS		 4
#define BUCKET_SECTORS	 8
#define JSETS_PER_BUCKET BUCKET_SECTORS
#define MAX_SEQ		 (NR_DEVS * BUCKETS * JSETS_PER_BUCKET + 1)

struct journal_device {
	unsigned nr;
	struct closure read;
};

struct bch_dev {
	struct bch_fs *fs;
	unsigned dev_idx;
	struct block_device disk;
	struct journal_device journal;
};

struct bch_fs {
	struct bch_dev devs[NR_DEVS];
	pthread_mutex_t btree_trans_lock;
	struct btree_trans *btree_trans_list[16];
	unsigned nr_trans;
};

struct journal_list {
	struct closure cl;
	pthread_mutex_t lock;
	unsigned char seen[MAX_SEQ]; /* journal_entry_add(): by seq */
	unsigned entries;
	int ret;
};

static struct workqueue *system_unbound_wq;

/* submit_bio_wait(): a bio waited for with a completion, no closure. */
struct bio_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

static void submit_bio_wait_endio(struct bio *bio)
{
	struct bio_wait *w = bio->bi_private;

	pthread_mutex_lock(&w->lock);
	w->done = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static int submit_bio_wait(struct bio *bio)
{
	struct bio_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};

	bio->bi_private = &w;
	bio->bi_end_io = submit_bio_wait_endio;
	submit_bio(bio);
	pthread_mutex_lock(&w.lock);
	while (!w.done)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	return bio->bi_status ? -EIO : 0;
}

static int journal_read_bucket(struct bch_dev *ca, unsigned char *buf, struct journal_list *jlist,
			       unsigned bucket)
{
	struct bio bio = {.bi_bdev = &ca->disk,
			  .bi_opf = REQ_OP_READ,
			  .bi_sector = (uint64_t)bucket * BUCKET_SECTORS,
			  .bi_size = BUCKET_SECTORS * 512,
			  .bi_buf = buf};
	int ret = submit_bio_wait(&bio);

	if (ret)
		return ret;

	for (unsigned s = 0; s < JSETS_PER_BUCKET; s++) {
		uint64_t seq;

		memcpy(&seq, buf + s * 512, sizeof(seq));
		if (!seq || seq >= MAX_SEQ)
			continue;
		pthread_mutex_lock(&jlist->lock);
		if (!jlist->seen[seq]++)
			jlist->entries++;
		pthread_mutex_unlock(&jlist->lock);
	}
	return 0;
}

static CLOSURE_CALLBACK(bch2_journal_read_device)
{
	closure_type(ja, struct journal_device, read);
	struct bch_dev *ca = container_of(ja, struct bch_dev, journal);
	struct journal_list *jlist = container_of(cl->parent, struct journal_list, cl);
	unsigned char *buf;
	unsigned i;
	int ret = 0;

	if (!ja->nr)
		goto out;

	buf = malloc(BUCKET_SECTORS * 512); /* journal_read_buf_realloc() */
	if (!buf) {
		ret = -ENOMEM;
		goto err;
	}

	for (i = 0; i < ja->nr; i++) {
		ret = journal_read_bucket(ca, buf, jlist, i);
		if (ret)
			break;
	}
	free(buf);
	if (ret)
		goto err;
out:
	closure_return(cl);
	return;
err:
	pthread_mutex_lock(&jlist->lock);
	jlist->ret = ret;
	pthread_mutex_unlock(&jlist->lock);
	goto out;
}

static int bch2_journal_read(struct bch_fs *c, unsigned *entries, unsigned char *seen)
{
	struct journal_list jlist = {.ret = 0};

	closure_init_stack(&jlist.cl);
	pthread_mutex_init(&jlist.lock, NULL);
	jlist.ret = 0;

	for (unsigned i = 0; i < NR_DEVS; i++)
		closure_call(&c->devs[i].journal.read, bch2_journal_read_device, system_unbound_wq,
			     &jlist.cl);

	closure_sync(&jlist.cl);

	*entries = jlist.entries;
	memcpy(seen, jlist.seen, sizeof(jlist.seen));
	return jlist.ret;
}

/* btree_iter.c / debug.c: the transaction's reference */

struct btree_trans {
	struct bch_fs *c;
	struct closure ref;
	unsigned long shown; /* times a reader printed it */
};

static struct btree_trans *bch2_trans_get(struct bch_fs *c)
{
	struct btree_trans *trans = calloc(1, sizeof(*trans));

	kcheck(trans, "out of memory");
	trans->c = c;
	pthread_mutex_lock(&c->btree_trans_lock);
	c->btree_trans_list[c->nr_trans++] = trans;
	pthread_mutex_unlock(&c->btree_trans_lock);

	closure_init_stack_release(&trans->ref);
	return trans;
}

static void bch2_trans_put(struct btree_trans *trans)
{
	struct bch_fs *c = trans->c;

	/* trans->ref protects the trans against the debug readers */
	closure_return_sync(&trans->ref);

	pthread_mutex_lock(&c->btree_trans_lock);
	for (unsigned i = 0; i < c->nr_trans; i++)
		if (c->btree_trans_list[i] == trans)
			c->btree_trans_list[i] = c->btree_trans_list[--c->nr_trans];
	pthread_mutex_unlock(&c->btree_trans_lock);
}

static atomic_t readers_stop, gets_after_put;

/* bch2_btree_transactions_read(): print every live transaction. */
static void *transactions_reader(void *arg)
{
	struct bch_fs *c = arg;

	while (!atomic_read(&readers_stop)) {
		pthread_mutex_lock(&c->btree_trans_lock);
		for (unsigned i = 0; i < c->nr_trans; i++) {
			struct btree_trans *trans = c->btree_trans_list[i];

			if (!closure_get_not_zero(&trans->ref))
				continue;
			__atomic_add_fetch(&trans->shown, 1, __ATOMIC_RELAXED);
			closure_put(&trans->ref);
		}
		pthread_mutex_unlock(&c->btree_trans_lock);
	}
	return NULL;
}

int main(void)
{
	static struct bch_fs c;
	unsigned char seen[MAX_SEQ];
	unsigned entries, bad_dev = 1, bad_bucket = 2;
	uint64_t seq = 1;
	pthread_t readers[2];
	int ret;

	pthread_mutex_init(&c.btree_trans_lock, NULL);
	/* Each device holds its share of the jsets, seq 1.. round robin by bucket. */
	for (unsigned d = 0; d < NR_DEVS; d++) {
		c.devs[d].fs = &c;
		c.devs[d].dev_idx = d;
		c.devs[d].journal.nr = BUCKETS;
		bdev_init(&c.devs[d].disk, "journal", BUCKETS * BUCKET_SECTORS);
	}
	for (unsigned b = 0; b < BUCKETS; b++)
		for (unsigned d = 0; d < NR_DEVS; d++)
			for (unsigned s = 0; s < JSETS_PER_BUCKET; s++, seq++)
				memcpy(c.devs[d].disk.data +
					       ((uint64_t)b * BUCKET_SECTORS + s) * 512,
				       &seq, sizeof(seq));
	system_unbound_wq = workqueue_create("system_unbound_wq", NR_DEVS);
	bio_pool_start(2);

	/* A clean mount: every entry once. */
	ret = bch2_journal_read(&c, &entries, seen);
	kcheck(!ret && entries == MAX_SEQ - 1, "read %u entries, ret %d", entries, ret);
	for (uint64_t s = 1; s < MAX_SEQ; s++)
		kcheck(seen[s] == 1, "jset %llu read %u times", (unsigned long long)s, seen[s]);

	/* A bad bucket: that device stops there and reports -EIO; the others read all. */
	c.devs[bad_dev].disk.fail_sector = (uint64_t)bad_bucket * BUCKET_SECTORS;
	ret = bch2_journal_read(&c, &entries, seen);
	kcheck(ret == -EIO, "ret %d with a bad bucket, expected %d", ret, -EIO);
	kcheck(entries == MAX_SEQ - 1 - (BUCKETS - bad_bucket) * JSETS_PER_BUCKET,
	       "read %u entries with a bad bucket", entries);

	/* Transactions come and go while two debug readers look at them. */
	for (int i = 0; i < 2; i++)
		kcheck(!pthread_create(&readers[i], NULL, transactions_reader, &c),
		       "cannot start a reader");
	for (unsigned round = 0; round < 200; round++) {
		struct btree_trans *trans = bch2_trans_get(&c);

		if (round % 16 == 0)
			usleep(200); /* long enough for the readers to see it */
		bch2_trans_put(trans);
		/* After closure_return_sync() the count is 0: nobody gets a reference now. */
		if (closure_get_not_zero(&trans->ref))
			atomic_inc(&gets_after_put);
		kcheck(closure_nr_remaining(&trans->ref) == 0, "trans ref count %u after put",
		       closure_nr_remaining(&trans->ref));
		free(trans);
	}
	atomic_set(&readers_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(readers[i], NULL);
	kcheck(!atomic_read(&gets_after_put), "%d references taken after bch2_trans_put",
	       atomic_read(&gets_after_put));

	bio_pool_stop();
	workqueue_destroy(system_unbound_wq);
	for (unsigned d = 0; d < NR_DEVS; d++)
		bdev_exit(&c.devs[d].disk);
	printf("bcachefs_journal_read: %u jsets from %d devices; a bad bucket: -EIO, %u read; "
	       "200 transactions put\n",
	       MAX_SEQ - 1, NR_DEVS, entries);
	return 0;
}
