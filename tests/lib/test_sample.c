/*
 * Whole trees or nothing (lib/batch.c, docs/probes.md "Sampling"): with a recorder's session and
 * sample_every N in the registry, the init of a root closure decides for its whole tree, one root
 * in N recorded; a left-out tree makes no batch record at all, a recorded one every record of
 * every member (children, a closure_call'd child, waits and wakes, a stack closure's sync); the
 * registry counts the roots and those left out, exactly. CLOSURE_SAMPLE_NONE starts no new tree
 * while the trees already recorded stay whole. A closure of an earlier session is recorded again.
 *
 * Batching is switched on as a tracer would (the batch semaphore raised), without a tracer; the
 * records are read from this thread's buffer. Linked with the static library (private symbols).
 */
#define _GNU_SOURCE
#include <closure.h>

#include "batch.h"
#include "check.h"
#include "closure_batch.h"

static struct closure_batch_buf *my_buffer(void)
{
	for (struct closure_batch_buf *b = closure_batch_registry.head; b; b = b->next)
		if (b->owner == 1 && b->n)
			return b;
	return NULL;
}

/* Records of cl in this thread's buffer since mark (its n then). */
static unsigned records_of(const struct closure *cl, uint32_t mark)
{
	struct closure_batch_buf *b = my_buffer();
	unsigned n = 0;

	for (uint32_t i = mark; b && i < b->n && i < CLOSURE_BATCH_RECORDS; i++)
		n += b->rec[i].cl == (uintptr_t)cl;
	return n;
}

static uint32_t mark(void)
{
	struct closure_batch_buf *b = my_buffer();

	closure_batch_flush(); /* an empty buffer: every record of a tree fits after it */
	b = my_buffer();
	return b ? b->n : 0;
}

static void done(struct closure_work *w)
{
	closure_return(container_of(w, struct closure, work));
}

/* A root, two children (one closure_call'd, one waiting on a waitlist), all finished. */
struct tree {
	struct closure root, a, b;
	unsigned records[3];
};

static void run_tree(struct tree *t)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	uint32_t m = mark();

	closure_init(&t->root, NULL);
	closure_init(&t->a, &t->root);
	closure_get(&t->a);
	closure_put(&t->a);
	closure_call(&t->b, done, NULL, &t->root);
	closure_wait(&list, &t->a);
	closure_wake_up(&list);
	closure_return(&t->a);
	closure_sync(&t->root);
	closure_return(&t->root);
	t->records[0] = records_of(&t->root, m);
	t->records[1] = records_of(&t->a, m);
	t->records[2] = records_of(&t->b, m);
}

int main(void)
{
	struct closure_batch_registry *g = &closure_batch_registry;
	struct tree t;

	__atomic_add_fetch(&closure_batch_semaphore, 1, __ATOMIC_RELAXED);

	/* No session: every tree recorded, none counted. */
	run_tree(&t);
	CHECK(t.records[0] > 0 && t.records[1] > 0 && t.records[2] > 0);
	const unsigned whole[3] = {t.records[0], t.records[1], t.records[2]};
	CHECK_EQ(g->trees, 0);

	/* One root in 3: roots 0, 3, 6 recorded whole, the others not at all. */
	g->sample_every = 3;
	g->session = 7;
	for (int i = 0; i < 9; i++) {
		run_tree(&t);
		CHECK_EQ(t.root.left_out, i % 3 ? 7 : 0);
		CHECK_EQ(t.a.left_out, t.root.left_out);
		CHECK_EQ(t.b.left_out, t.root.left_out);
		for (int k = 0; k < 3; k++)
			CHECK_EQ(t.records[k], i % 3 ? 0 : whole[k]);
	}
	CHECK_EQ(g->trees, 9);
	CHECK_EQ(g->trees_left_out, 6);

	/* A stack closure is a root too (the tenth: recorded), with its closure_call'd child. */
	{
		struct closure s, c;
		uint32_t m = mark();

		closure_init_stack(&s);
		closure_call(&c, done, NULL, &s);
		closure_sync(&s);
		CHECK_EQ(s.left_out, 0);
		CHECK_EQ(c.left_out, 0);
		CHECK_EQ(records_of(&s, m), 5); /* init, get, sync_begin, put (c finished), sync_end */
		CHECK_EQ(records_of(&c, m), 5); /* init, continue_at, run, continue_at, finish */
	}
	CHECK_EQ(g->trees, 10);
	CHECK_EQ(g->trees_left_out, 6);

	/* None (a recorder behind): no new tree, but a tree recorded before stays whole. */
	{
		struct closure kept, late;
		uint32_t m;

		g->sample_every = 0;
		closure_init(&kept, NULL);
		CHECK_EQ(kept.left_out, 0);
		g->sample_every = CLOSURE_SAMPLE_NONE;
		run_tree(&t);
		for (int k = 0; k < 3; k++)
			CHECK_EQ(t.records[k], 0);
		m = mark();
		closure_init(&late, &kept); /* a new member of a recorded tree */
		closure_return(&late);
		closure_return(&kept);
		CHECK_EQ(records_of(&late, m), 3); /* init, continue_at, finish */
		CHECK_EQ(records_of(&kept, m), 4); /* get, put (late finished), continue_at, finish */
	}
	CHECK_EQ(g->trees, 12); /* kept (every tree) and the tree under none */
	CHECK_EQ(g->trees_left_out, 7);

	/* A new session: closures left out in the earlier one are recorded again. */
	{
		struct closure old;
		uint32_t m;

		g->sample_every = 2;
		closure_init(&old, NULL); /* the 13th root: recorded */
		CHECK_EQ(old.left_out, 0);
		closure_return(&old);
		closure_init(&old, NULL); /* a new life, the 14th root: left out in session 7 */
		CHECK_EQ(old.left_out, 7);
		g->session = 8;
		m = mark();
		closure_get(&old);
		closure_put(&old);
		CHECK_EQ(records_of(&old, m), 2);
		closure_return(&old);
	}
	CHECK_EQ(g->trees, 14);
	CHECK_EQ(g->trees_left_out, 8);
	printf("sampling: %llu trees, %llu left out\n", (unsigned long long)g->trees,
	       (unsigned long long)g->trees_left_out);
	return 0;
}
