/*
 * The newest bcachefs-tools' closure names, as its code calls them: <closure.h>, then a header
 * shaped like its fs/closure.h (bcachefs_fs/closure.h), which defines closure_wait,
 * closure_return_sync, __closure_wake_up and closure_sync_unbounded as the bch2_ names. Each call
 * is the last thing its function does, where an optimising compiler makes a call a jump and the
 * library would record the caller's caller: the wrapper on the bch2_ names keeps the caller's line.
 * Lines that a test expects in a trace or a diagnostic carry a marker comment.
 *
 *   bcachefs_names        every name used as bcachefs uses it, the results checked; no leak
 *   bcachefs_names leak   two closures wait on a waitlist nobody wakes: one through closure_wait,
 *                         one through bch2_closure_wait (as fs/btree/iter.h calls it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <closure.h>
#include "bcachefs_fs/closure.h"

#include "../check.h"

#define NOINLINE __attribute__((noinline))

/* fs/btree/cache.c's shape: the closure waits for memory, and the function returns. */
static NOINLINE void wait_for_memory(struct closure_waitlist *list, struct closure *cl)
{
	closure_wait(list, cl); /* WAIT_PLAIN */
}

/*
 * fs/btree/iter.h's shape: bch2_closure_wait called by its own name. Counted, so that its body
 * differs from wait_for_memory's and identical code folding does not merge the two.
 */
static unsigned open_coded_waits;
static NOINLINE void wait_open_coded(struct closure_waitlist *list, struct closure *cl)
{
	open_coded_waits++;
	bch2_closure_wait(list, cl); /* WAIT_BCH2 */
}

/* fs/journal/reclaim.c's shape. */
static NOINLINE void wake_flush_waiters(struct closure_waitlist *list)
{
	__closure_wake_up(list); /* WAKE */
}

/* fs/btree/write_buffer.c's shape. */
static NOINLINE void flush_all(struct closure *cl)
{
	closure_sync_unbounded(cl); /* SYNC_UNBOUNDED */
}

/* fs/btree/iter.c's bch2_trans_put shape: the transaction's reference finished synchronously. */
static NOINLINE void trans_put(struct closure *ref)
{
	closure_return_sync(ref); /* RETURN_SYNC */
}

/* fs/journal/journal.c's shape: a wait whose result the caller asserts. */
static NOINLINE bool journal_wait(struct closure_waitlist *list, struct closure *cl)
{
	return closure_wait(list, cl); /* WAIT_RESULT */
}

static void uses(void)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	struct closure cl, ref;

	closure_init_stack(&cl);
	wait_for_memory(&list, &cl);
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	CHECK(!journal_wait(&list, &cl)); /* already waiting: false, as in the kernel */
	CHECK(!bch2_closure_wait(&list, &cl));
	wake_flush_waiters(&list);
	CHECK_PTR_EQ(list.list.first, NULL);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK(journal_wait(&list, &cl));
	closure_wake_up(&list);
	wait_open_coded(&list, &cl);
	CHECK_EQ(open_coded_waits, 1);
	__bch2_closure_wake_up(&list);
	closure_get(&cl);
	closure_put(&cl);
	flush_all(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);

	closure_init(&ref, &cl);
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	trans_put(&ref);
	CHECK_EQ(closure_nr_remaining(&ref), 0);
	CHECK(!closure_get_not_zero(&ref));
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	closure_sync(&cl);
}

/* Reachable from here, so that LeakSanitizer does not count them. */
static struct closure *kept[2];

static void leak(void)
{
	static struct closure_waitlist never_woken;

	kept[0] = malloc(sizeof(*kept[0]));
	kept[1] = malloc(sizeof(*kept[1]));
	closure_init(kept[0], NULL); /* INIT_PLAIN */
	wait_for_memory(&never_woken, kept[0]);
	closure_return(kept[0]);
	closure_init(kept[1], NULL); /* INIT_BCH2 */
	wait_open_coded(&never_woken, kept[1]);
	closure_return(kept[1]);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "leak")) {
		leak();
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: bcachefs_names [leak]\n");
		return 2;
	}
	uses();
	printf("bcachefs_names: ok\n");
	return 0;
}
