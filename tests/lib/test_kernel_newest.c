/*
 * The newest kernel API as kernel code writes it. This file plays a bcachefs-style program: it has
 * its own <linux/atomic.h>, <linux/llist.h> and <linux/cleanup.h> (the shims below, laid out and
 * include-guarded as the kernel's and bcachefs-tools' are, with functions typed on their types),
 * included before <closure/closure.h>. Every closure name it uses is spelled as in bcachefs's
 * fs/vendor/closure.h (2026) or the kernel's include/linux/closure.h; each check says what the
 * kernel does. Breaking closure_val_checks is tested in test_death.c.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* <linux/atomic.h>: atomic_t and functions that take nothing else (bcachefs-tools' style). */
#define __TOOLS_LINUX_ATOMIC_H
typedef struct {
	int counter;
} atomic_t;
static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}
static inline int atomic_add_return(int i, atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_RELAXED);
}
static inline void atomic_sub(int i, atomic_t *v)
{
	__atomic_sub_fetch(&v->counter, i, __ATOMIC_RELAXED);
}
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define try_cmpxchg(p, oldp, new)                                                                  \
	__atomic_compare_exchange_n(p, oldp, new, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)
#define _RET_IP_ ((unsigned long)__builtin_return_address(0))

/* <linux/llist.h> */
#define LLIST_H
struct llist_node {
	struct llist_node *next;
};
struct llist_head {
	struct llist_node *first;
};

/* <linux/cleanup.h>'s CLASS(), word for word in what it does. */
#define __cleanup(func) __attribute__((__cleanup__(func)))
#define CLASS(_name, var)                                                                          \
	class_##_name##_t var __cleanup(class_##_name##_destructor) = class_##_name##_constructor

#include <closure/closure.h>

#include "check.h"

/*
 * bcachefs fs/journal/journal.c journal_buf_wait(), reduced: a closure_wait() open-coded on the
 * waitlist's llist_head, with the kernel's own check of the value it computed.
 */
static int journal_style_wait(struct closure_waitlist *wait, struct closure *cl, bool roll_back)
{
	struct llist_node *first = READ_ONCE(wait->list.first);

	closure_set_waiting(cl, _RET_IP_);
	unsigned r = atomic_add_return(CLOSURE_WAITING + 1, &cl->remaining);
	closure_val_checks(cl, r, CLOSURE_WAITING + 1);
	if (roll_back) { /* the journal's "became non-waitable": cl is on no list yet */
		atomic_sub(CLOSURE_WAITING + 1, &cl->remaining);
		return 0;
	}
	do
		cl->list.next = first;
	while (!try_cmpxchg(&wait->list.first, &first, &cl->list));
	return 1 + (first != NULL);
}

static struct closure *woken[3];
static int nwoken;

static CLOSURE_CALLBACK(note_woken)
{
	struct closure *cl = container_of(ws, struct closure, work);

	woken[nwoken++] = cl;
	closure_return(cl);
}

static void test_open_coded_wait(void)
{
	struct closure_waitlist wait = CLOSURE_WAITLIST_INIT;
	struct closure a, b, c;

	closure_init(&a, NULL);
	closure_init(&b, NULL);
	closure_init(&c, NULL);
	CHECK(bch2_closure_wait(&wait, &a));
	CHECK_EQ(journal_style_wait(&wait, &b, false), 2); /* 2: the list was not empty */
	CHECK(closure_wait(&wait, &c));
	/* The kernel's llist: first is the last to wait, linked through cl->list.next. */
	CHECK_PTR_EQ(wait.list.first, &c.list);
	CHECK_PTR_EQ(c.list.next, &b.list);
	CHECK_PTR_EQ(b.list.next, &a.list);
	CHECK_PTR_EQ(a.list.next, NULL);
	/* The open-coded wait is a wait like the others: flag, reference, who waits. */
	CHECK_EQ((unsigned)atomic_read(&b.remaining), 2u | CLOSURE_WAITING | CLOSURE_RUNNING);
	CHECK(b.waiting_on != 0);
	/* closure_wait on a closure already waiting: false (it tests CLOSURE_WAITING only). */
	CHECK(!bch2_closure_wait(&wait, &b));
	continue_at(&a, note_woken, NULL);
	continue_at(&b, note_woken, NULL);
	continue_at(&c, note_woken, NULL);
	CHECK_EQ(nwoken, 0);
	/* __bch2_closure_wake_up: FIFO (llist_reverse_order), and closure_set_waiting(cl, 0). */
	__bch2_closure_wake_up(&wait);
	CHECK_EQ(nwoken, 3);
	CHECK_PTR_EQ(woken[0], &a);
	CHECK_PTR_EQ(woken[1], &b);
	CHECK_PTR_EQ(woken[2], &c);
	CHECK_EQ(b.waiting_on, 0);
	CHECK_PTR_EQ(wait.list.first, NULL);
	CHECK_EQ(closure_nr_remaining(&b), 0);

	/* Rolled back before linking: the count and flags are as before. */
	closure_init_stack(&a);
	CHECK_EQ(journal_style_wait(&wait, &a, true), 0);
	CHECK_EQ((unsigned)atomic_read(&a.remaining), CLOSURE_REMAINING_INITIALIZER);
	closure_val_checks(&a, (unsigned)atomic_read(&a.remaining), 0); /* a good value: returns */
	printf("ok: open-coded wait on list.first, checked, woken in order\n");
}

static int put_done;

static void *put_later(void *arg)
{
	usleep(50 * 1000);
	__atomic_store_n(&put_done, 1, __ATOMIC_RELAXED);
	closure_put(arg);
	return NULL;
}

static void scoped_wait(void)
{
	pthread_t t;
	CLASS(closure_stack, cl)();

	/* class_closure_stack_constructor(): count 1, running, nothing else. */
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ((unsigned)atomic_read(&cl.remaining), CLOSURE_REMAINING_INITIALIZER);
	CHECK_EQ(cl.magic, CLOSURE_MAGIC_STACK);
	CHECK_PTR_EQ(cl.parent, NULL);
	closure_get(&cl); /* FIRST_USE_SCOPED */
	CHECK_EQ(pthread_create(&t, NULL, put_later, &cl), 0);
	pthread_detach(t);
	/* Leaving the scope runs class_closure_stack_destructor(): closure_sync(). */
}

/* A stack closure made by value, moved, then used: "returned by value" in bcachefs. */
static struct closure moved_closure(void)
{
	struct closure cl = class_closure_stack_constructor();

	return cl;
}

static void test_class_closure_stack(void)
{
	struct closure_waitlist wait = CLOSURE_WAITLIST_INIT;
	struct closure a = moved_closure(), b;

	scoped_wait();
	CHECK_EQ(__atomic_load_n(&put_done, __ATOMIC_RELAXED), 1); /* the scope waited for it */

	memcpy(&b, &a, sizeof(b)); /* moved again, the old copy scribbled over */
	memset(&a, 0xa5, sizeof(a));
	CHECK(closure_wait(&wait, &b)); /* FIRST_USE_MOVED */
	CHECK_EQ(closure_nr_remaining(&b), 2);
	closure_wake_up(&wait);
	closure_sync(&b);
	CHECK_EQ((unsigned)atomic_read(&b.remaining), CLOSURE_REMAINING_INITIALIZER);
	{
		CLASS(closure_stack, unused)(); /* nothing outstanding: its sync returns at once */
		CHECK_EQ(closure_nr_remaining(&unused), 1);
	}
	printf("ok: CLASS(closure_stack): by value, moved, synced at the end of its scope\n");
}

static int wait_event_ready;

static void *set_ready(void *arg)
{
	usleep(20 * 1000);
	__atomic_store_n(&wait_event_ready, 1, __ATOMIC_RELEASE);
	closure_wake_up(arg);
	return NULL;
}

/* The bch2_ exports: the same functions as the kernel's names, behaving as those do. */
static void test_bch2_names(void)
{
	struct closure_waitlist wait = CLOSURE_WAITLIST_INIT;
	struct closure cl, child;
	pthread_t t;
	Dl_info x, y;

	/*
	 * One function under two names. closure.h spells the plain names as the bch2_ names (as
	 * bcachefs's fs/closure.h does), so the plain symbols, still exported, are found by name.
	 */
	static const char *const names[][2] = {
		{"closure_wait", "bch2_closure_wait"},
		{"closure_return_sync", "bch2_closure_return_sync"},
		{"closure_wake_up", "__bch2_closure_wake_up"},
		{"closure_sync_unbounded", "bch2_closure_sync_unbounded"}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK(dladdr(dlsym(RTLD_DEFAULT, names[i][0]), &x) && x.dli_sname);
		CHECK(dladdr(dlsym(RTLD_DEFAULT, names[i][1]), &y) && y.dli_sname);
		CHECK_PTR_EQ(x.dli_saddr, y.dli_saddr);
	}

	closure_init_stack(&cl);
	bch2_closure_debug_create(&cl); /* a stub in bcachefs: nothing changes */
	CHECK_EQ((unsigned)atomic_read(&cl.remaining), CLOSURE_REMAINING_INITIALIZER);
	closure_get(&cl);
	/* __bch2_closure_sync_timeout: -ETIME when the reference is still out, 0 once synced. */
	CHECK_EQ(__bch2_closure_sync_timeout(&cl, 10), -ETIME);
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	bch2_closure_sub(&cl, 1); /* closure_put */
	CHECK_EQ(__bch2_closure_sync_timeout(&cl, 10), 0);
	closure_get(&cl);
	CHECK_EQ(pthread_create(&t, NULL, put_later, &cl), 0);
	__bch2_closure_sync(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	closure_get(&cl);
	CHECK_EQ(pthread_create(&t, NULL, put_later, &cl), 0);
	bch2_closure_sync_unbounded(&cl);
	CHECK_EQ(closure_nr_remaining(&cl), 1);
	CHECK_EQ(pthread_join(t, NULL), 0);

	/* bch2_closure_return_sync: the count stays 0, the parent is put, get_not_zero fails. */
	closure_init(&child, &cl);
	CHECK_EQ(closure_nr_remaining(&cl), 2);
	bch2_closure_return_sync(&child);
	CHECK_EQ(closure_nr_remaining(&child), 0);
	CHECK(!closure_get_not_zero(&child));
	CHECK_EQ(closure_nr_remaining(&cl), 1);

	/* bch2_closure_sub(cl, CLOSURE_RUNNING + 1) is continue_at's step: it finishes. */
	closure_init(&child, &cl);
	bch2_closure_sub(&child, CLOSURE_RUNNING + 1);
	CHECK_EQ(closure_nr_remaining(&child), 0);
	CHECK_EQ(closure_nr_remaining(&cl), 1);

	CHECK_EQ(pthread_create(&t, NULL, set_ready, &wait), 0);
	closure_wait_event(&wait, __atomic_load_n(&wait_event_ready, __ATOMIC_ACQUIRE));
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_PTR_EQ(wait.list.first, NULL);
	CHECK_EQ(closure_wait_event_timeout(&wait, 0, 5), 0);
	printf("ok: bch2_ names\n");
}

/* closure_set_ip: _THIS_IP_, an address inside this function. */
void test_set_ip(void)
{
	struct closure cl;
	Dl_info info;

	closure_init_stack(&cl);
	closure_set_ip(&cl);
	CHECK(dladdr((void *)cl.ip, &info) && info.dli_sname);
	CHECK_STR_EQ(info.dli_sname, "test_set_ip");
	printf("ok: closure_set_ip\n");
}

int main(void)
{
	test_open_coded_wait();
	test_class_closure_stack();
	test_bch2_names();
	test_set_ip();
	printf("test_kernel_newest: ok\n");
	return 0;
}
