/*
 * libclosure against the kernel, behaviour by behaviour. Each case names the kernel source it
 * follows (repository, file, function and commit: Sources, below) and asserts that libclosure does
 * the same. Where the kernel BUG()s or WARN()s, libclosure aborts: those cases are test_death.c's,
 * the one death harness (each in a child, with its message and call site): [LH] closure_queue()'s
 * "BUG_ON(!queue_work(wq, &cl->work))" (die_queued_twice), [LC] closure_put_after_sub()'s guard
 * bits BUG and [KC] closure_put_after_sub_checks()'s WARN (die_put_on_finished, die_val_guard),
 * [LH] closure_get()'s "BUG_ON((atomic_inc_return(&cl->remaining) & MASK) <= 1)"
 * (die_get_on_finished), [LC] closure_debug_create()'s "BUG_ON(cl->magic == CLOSURE_MAGIC_ALIVE)"
 * (die_init_live), [KC] closure_debug_destroy()'s "BUG_ON(cl->magic != CLOSURE_MAGIC_ALIVE)"
 * (die_destroy_finished).
 *
 * Sources:
 *   [LC] torvalds/linux lib/closure.c @03c11eb3            (6.8-era, CLOSURE_CALLBACK)
 *   [LH] torvalds/linux include/linux/closure.h @06efa5f3
 *   [KC] Kingxukai/linux lib/closure.c @0291023e           (6.10+: closure_return_sync, WARNs)
 *   [KH] Kingxukai/linux include/linux/closure.h @9b44fff6 (closure_wait_event_timeout)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <closure.h>

#include "check.h"

static int order[8], norder;

static void note(int what)
{
	order[norder++] = what;
}

/*
 * [LC] closure_wait(): "if (atomic_read(&cl->remaining) & CLOSURE_WAITING) return false;" - on
 * any list, with no reference taken and no message.
 */
static void wait_while_waiting_returns_false(void)
{
	struct closure_waitlist a = CLOSURE_WAITLIST_INIT, b = CLOSURE_WAITLIST_INIT;
	struct closure cl;

	closure_init_stack(&cl);
	CHECK(closure_wait(&a, &cl));
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	CHECK(!closure_wait(&a, &cl));
	CHECK(!closure_wait(&b, &cl));
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	CHECK(b.list.first == NULL);
	closure_wake_up(&a);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	closure_sync(&cl);
}

/* [LC] __closure_wake_up(): llist_reverse_order "to preserve FIFO ordering and fairness". */
static void first(struct closure *cl)
{
	note(1);
	closure_return(cl);
}
static void second(struct closure *cl)
{
	note(2);
	closure_return(cl);
}

static void wake_up_is_fifo(void)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	struct closure a, b;

	norder = 0;
	closure_init(&a, NULL);
	closure_init(&b, NULL);
	closure_wait(&list, &a);
	closure_wait(&list, &b);
	continue_at(&a, first, NULL);
	continue_at(&b, second, NULL);
	closure_wake_up(&list);
	CHECK_EQ(norder, 2);
	CHECK_EQ(order[0], 1);
	CHECK_EQ(order[1], 2);
}

/*
 * [LH] set_closure_fn(): "cl->fn = fn; cl->wq = wq;", a plain store, and continue_at_nobarrier():
 * set_closure_fn + closure_queue, "The ref the caller of continue_at_nobarrier() had on @cl is now
 * owned by @fn": both allowed on a closure that is not running (closure_set_stopped cleared it).
 */
static unsigned seen_count;
static uint32_t seen_flags;

static void ends_by_hand(struct closure *cl)
{
	seen_count = closure_nr_remaining(cl);
	seen_flags = closure_flags(cl);
	note(3);
	set_closure_fn(cl, NULL, NULL); /* not running: allowed */
	closure_put(cl);		/* the caller's reference: finishes */
}

static void nobarrier_and_set_fn_when_not_running(void)
{
	struct closure parent, cl;

	norder = 0;
	closure_init_stack(&parent);
	closure_init(&cl, &parent);
	closure_set_stopped(&cl); /* [LH] closure_set_stopped(): atomic_sub(CLOSURE_RUNNING) */
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(closure_flags(&cl), 0);
	continue_at_nobarrier(&cl, ends_by_hand, NULL);
	CHECK_EQ(norder, 1);
	CHECK_EQ(seen_count, 1);
	CHECK_EQ(seen_flags, 0); /* fn got the caller's reference as it was */
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK_EQ(closure_nr_remaining(&parent), 1); /* finished: the parent was put */
	closure_sync(&parent);
}

/*
 * [KC] closure_debug_destroy(): "if (cl->magic == CLOSURE_MAGIC_STACK) return;" then list_del:
 * a destroyed closure leaves the list (closure_debug_dump), a stack closure is left alone.
 */
static void debug_destroy(void)
{
	FILE *null = fopen("/dev/null", "w");
	struct closure cl, stack;

	CHECK(null);
	closure_init(&cl, NULL);
	CHECK_EQ(closure_debug_dump(null), 1);
	closure_debug_destroy(&cl);
	CHECK_EQ(closure_debug_dump(null), 0);
	closure_init(&cl, NULL); /* dead: may be initialised again */
	closure_return(&cl);
	closure_init_stack(&stack);
	closure_debug_destroy(&stack); /* nothing */
	CHECK_EQ(closure_nr_remaining(&stack), 1);
	closure_sync(&stack);
	fclose(null);
}

/*
 * [KC] closure_return_sync(): "Unlike closure_sync() this doesn't reinit the ref to 1;
 * subsequent closure_get_not_zero() calls will fail", then "if (cl->parent)
 * closure_put(cl->parent)"; the count is left 0 with CLOSURE_DESTRUCTOR (sub of
 * 1 + CLOSURE_RUNNING - CLOSURE_DESTRUCTOR). [LH] closure_get_not_zero(): false at count 0.
 */
static void return_sync(void)
{
	struct closure parent, cl;

	closure_init_stack(&parent);
	closure_init(&cl, &parent);
	closure_return_sync(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 0);
	CHECK_EQ(closure_flags(&cl), CLOSURE_DESTRUCTOR);
	CHECK(!closure_get_not_zero(&cl));
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	closure_sync(&parent);
}

/*
 * [KC] __closure_sync_timeout(): on timeout, "new = old + CLOSURE_REMAINING_INITIALIZER" and
 * -ETIME: the caller owns the running reference again, the others stay outstanding.
 */
static void sync_timeout(void)
{
	struct closure cl;

	closure_init_stack(&cl);
	closure_get(&cl);
	CHECK_EQ(closure_sync_timeout(&cl, 10), -ETIME);
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	CHECK_EQ(closure_flags(&cl), CLOSURE_RUNNING);
	closure_put(&cl);
	CHECK_EQ(closure_sync_timeout(&cl, 10), 0);
}

/*
 * [KH] closure_wait_event_timeout(): 0 on timeout, else "max_t(long, 1L, _until - jiffies)"; the
 * unit is jiffies there, milliseconds here.
 */
static void wait_event_timeout(void)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;

	CHECK_EQ(closure_wait_event_timeout(&list, false, 5), 0);
	CHECK(closure_wait_event_timeout(&list, true, 0) ==
	      1); /* at least 1, even with none left */
}

/*
 * [LC] closure_put_after_sub(): at 0 with fn and no DESTRUCTOR, "atomic_set(&cl->remaining,
 * CLOSURE_REMAINING_INITIALIZER); closure_queue(cl)", and [LH] closure_queue() without a wq calls
 * "cl->fn(&cl->work)" right there; otherwise "destructor(&cl->work)" and only then
 * "closure_put(parent)". Continuations keep the parent's reference.
 */
static struct closure *sem_parent;
static unsigned parent_count_seen;

static CLOSURE_CALLBACK(destructor)
{
	closure_type(c, struct closure, work);

	(void)c;
	parent_count_seen = closure_nr_remaining(sem_parent);
	note(5);
}

static void step_with_destructor(struct closure *cl)
{
	note(4);
	closure_return_with_destructor(cl, destructor);
}

static void put_path(void)
{
	struct closure parent, cl;

	norder = 0;
	closure_init_stack(&parent);
	sem_parent = &parent;
	closure_init(&cl, &parent);
	closure_get(&cl);
	continue_at(&cl, step_with_destructor, NULL);
	CHECK_EQ(norder, 0);
	CHECK_EQ(closure_nr_remaining(&parent), 2); /* a continuation keeps the parent */
	closure_put(&cl);			    /* the last: the step runs in this thread */
	CHECK_EQ(norder, 2);
	CHECK_EQ(order[0], 4);
	CHECK_EQ(order[1], 5);
	CHECK_EQ(parent_count_seen, 2); /* the destructor ran before the parent was put */
	CHECK_EQ(closure_nr_remaining(&parent), 1);
	closure_sync(&parent);
}

int main(void)
{
	wait_while_waiting_returns_false();
	printf("ok: closure_wait on a waiting closure returns false\n");
	wake_up_is_fifo();
	printf("ok: closure_wake_up is FIFO\n");
	nobarrier_and_set_fn_when_not_running();
	printf("ok: set_closure_fn, continue_at_nobarrier, closure_set_stopped when not running\n");
	debug_destroy();
	printf("ok: closure_debug_destroy\n");
	return_sync();
	printf("ok: closure_return_sync\n");
	sync_timeout();
	printf("ok: closure_sync_timeout\n");
	wait_event_timeout();
	printf("ok: closure_wait_event_timeout\n");
	put_path();
	printf("ok: the put path: requeue inline, destructor before the parent\n");
	printf("test_kernel_semantics: ok\n");
	return 0;
}
