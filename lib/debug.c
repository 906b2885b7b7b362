/*
 * What libclosure says when something is wrong: the enforced-rule messages, and the list of live
 * closures that closure_debug_dump() prints (kept only when built with CLOSURE_DEBUG).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "closure_debug.h"
#include "internal.h"
#include "probes.h"

#if defined(CLOSURE_DEBUG) && __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(addr, len) ((void)(addr), (void)(len))
#endif

#ifdef CLOSURE_DEBUG
/* "func+0x1c in ./prog", or the address alone when no symbol covers it; hex always with 0x. */
static void describe_address(char *buf, size_t size, uintptr_t addr)
{
	Dl_info info;

	if (addr && dladdr((void *)addr, &info) && info.dli_sname)
		snprintf(buf, size, "%s+0x%lx in %s", info.dli_sname,
			 (unsigned long)(addr - (uintptr_t)info.dli_saddr), info.dli_fname);
	else if (addr && dladdr((void *)addr, &info) && info.dli_fname)
		snprintf(buf, size, "0x%lx in %s", (unsigned long)addr, info.dli_fname);
	else
		snprintf(buf, size, "0x%lx", (unsigned long)addr);
}
#endif

/*
 * A call site as addr2line takes it, "./prog+0x1304" (the address in the object's own virtual
 * addresses: less the load bias, so that a PIE or a library reads the same in every run), then
 * the symbol when there is one: "./prog+0x1304 (func+0x1c)".
 */
static void describe_site(char *buf, size_t size, uintptr_t addr)
{
	struct link_map *map = NULL;
	Dl_info info;

	if (!addr || !dladdr1((void *)addr, &info, (void **)&map, RTLD_DL_LINKMAP) || !map ||
	    !info.dli_fname || !info.dli_fname[0]) {
		snprintf(buf, size, "0x%lx", (unsigned long)addr);
		return;
	}
	if (info.dli_sname)
		snprintf(buf, size, "%s+0x%lx (%s+0x%lx)", info.dli_fname,
			 (unsigned long)(addr - map->l_addr), info.dli_sname,
			 (unsigned long)(addr - (uintptr_t)info.dli_saddr));
	else
		snprintf(buf, size, "%s+0x%lx", info.dli_fname,
			 (unsigned long)(addr - map->l_addr));
}

/*
 * What every broken rule does: the bug probe, one line on stderr, abort. obj is the closure, or
 * for a workqueue destroyed twice the workqueue; counts is " (count N, flags 0xF)", or "" then.
 */
static noreturn void bug_report(void *obj, enum closure_bug bug, const char *op, uint32_t remaining,
				uintptr_t ip, const char *detail, const char *counts)
{
	char where[512];

	(void)bug; /* only the probe uses it */
	/* The probe first, so that a tracer sees the bug even if stderr is lost. */
	/* Recorded whatever its tree: a bug is never sampled away (and cl may be no closure). */
	probe_op1_rec_in(PROBE_TRACED(bug), true, bug, obj, remaining, ip, (long)bug);
	if (CLOSURE_BATCH_ON())
		closure_batch_flush(); /* abort() runs no exit handler */
	describe_site(where, sizeof(where), ip);
	fprintf(stderr, "closure BUG: %s(%p): %s%s, called from %s\n", op, obj, detail, counts,
		where);
	fflush(stderr);
	abort();
}

noreturn void closure_bug(struct closure *cl, enum closure_bug bug, const char *op,
			  uint32_t remaining, uintptr_t ip, const char *detail)
{
	char counts[64];

	snprintf(counts, sizeof(counts), " (count %u, flags 0x%x)",
		 remaining & CLOSURE_REMAINING_MASK, remaining & ~CLOSURE_REMAINING_MASK);
	bug_report(cl, bug, op, remaining, ip, detail, counts);
}

noreturn void workqueue_bug(struct workqueue *wq, const char *op, uintptr_t ip, const char *detail)
{
	bug_report(wq, CLOSURE_BUG_DEAD_WORKQUEUE, op, 0, ip, detail, "");
}

noreturn void closure_not_alive_at(struct closure *cl, uint32_t remaining, const char *op,
				   uintptr_t ip)
{
	char detail[160];

	snprintf(detail, sizeof(detail),
		 "not alive (magic 0x%08x): finished or destroyed, freed, or never initialised",
		 __atomic_load_n(&cl->magic, __ATOMIC_RELAXED));
	closure_bug(cl, CLOSURE_BUG_NOT_ALIVE, op, remaining, ip, detail);
}

/* From the inline get and put (closure.h): the caller is their call site. */
void closure_not_alive(struct closure *cl, uint32_t remaining, const char *op)
{
	closure_not_alive_at(cl, remaining, op, CALLER_IP());
}

/* The flag letters of a trace stand for closure.h's bits. */
#define FLAG_MATCHES(name, bit, letter)                                                            \
	_Static_assert(CLOSURE_##name == 1u << (bit), "closure_probes.h: flag " #name);
CLOSURE_FLAG_LIST(FLAG_MATCHES)
#undef FLAG_MATCHES

/*
 * closure_get() found the count was 0, or took it to the count's guard bit (2^23 references: one
 * more would carry into the flags); called from the user's code, so the caller is the get.
 */
void closure_get_finished(struct closure *cl, uint32_t r)
{
	if (r & (CLOSURE_DESTRUCTOR >> 1))
		closure_bug(cl, CLOSURE_BUG_OVERFLOW, "closure_get", r - 1, CALLER_IP(),
			    "too many references: the count reached its limit (8388607)");
	closure_bug(cl, CLOSURE_BUG_GET_FINISHED, "closure_get", r - 1 /* the count it found */,
		    CALLER_IP(), "reference taken on a finished closure");
}

void closure_require_running(struct closure *cl, const char *name, uintptr_t ip)
{
	uint32_t r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);

	if (!(r & CLOSURE_RUNNING))
		closure_bug(cl, CLOSURE_BUG_NOT_RUNNING, name, r, ip,
			    "not running: only the owner of the running reference may give it up");
}

void closure_val_bad(struct closure *cl, unsigned v, int d)
{
	char detail[160];

	/* The kernel's words (fs/vendor/closure.h closure_val_checks); the bit is __fls's. */
	if (v & CLOSURE_GUARD_MASK)
		snprintf(detail, sizeof(detail), "has guard bits set: %x (%u), delta %i", v,
			 31u - (unsigned)__builtin_clz(v & CLOSURE_GUARD_MASK), d);
	else
		snprintf(detail, sizeof(detail), "ref hit 0 with incorrect flags set: %x (%u)", v,
			 31u - (unsigned)__builtin_clz(v));
	closure_bug(cl, CLOSURE_BUG_BAD_FLAGS, "closure_val_checks", v, CALLER_IP(), detail);
}

#define DEBUG_INFO_LAYOUT                                                                          \
	.magic = CLOSURE_DEBUG_MAGIC, .version = CLOSURE_DEBUG_VERSION,                            \
	.closure_size = sizeof(struct closure), .pointer_size = sizeof(void *),                    \
	.off_remaining = offsetof(struct closure, remaining),                                      \
	.off_parent = offsetof(struct closure, parent), .off_fn = offsetof(struct closure, fn),    \
	.off_waitlist = offsetof(struct closure, waitlist),                                        \
	.off_ip = offsetof(struct closure, ip),                                                    \
	.off_waiting_on = offsetof(struct closure, waiting_on),                                    \
	.off_prev = offsetof(struct closure, debug_prev),                                          \
	.off_next = offsetof(struct closure, debug_next),                                          \
	.off_magic = offsetof(struct closure, magic),                                              \
	.off_sync_tid = offsetof(struct closure, sync_tid),                                        \
	.off_sync_ip = offsetof(struct closure, sync_ip), .magic_alive = CLOSURE_MAGIC_ALIVE,      \
	.magic_stack = CLOSURE_MAGIC_STACK, .remaining_mask = CLOSURE_REMAINING_MASK,              \
	.flag_destructor = CLOSURE_DESTRUCTOR, .flag_sleeping = CLOSURE_SLEEPING,                  \
	.flag_waiting = CLOSURE_WAITING, .flag_running = CLOSURE_RUNNING,                          \
	.off_queued = offsetof(struct closure, queued),                                            \
	.off_init_ip = offsetof(struct closure, init_ip),                                          \
	.off_init_ns = offsetof(struct closure, init_ns),                                          \
	.off_ip_ns = offsetof(struct closure, ip_ns),                                              \
	.off_wait_ns = offsetof(struct closure, wait_ns),                                          \
	.off_sync_ns = offsetof(struct closure, sync_ns)

#ifdef CLOSURE_DEBUG

/*
 * The live list, split so that threads do not contend on one lock (closure_debug.h): each thread
 * links what it initialises into its own list, taken in turn at its first closure; whoever
 * finishes a closure unlinks it from the list it is on, which is the only time two threads meet
 * on a list. So each list's mutex is almost never contended: an uncontended pthread mutex is two
 * atomic instructions and no system call. (Not a spinlock: with more threads than cores, a thread
 * preempted while holding one leaves the others spinning through their time slices.)
 */
#define DEBUG_LISTS 64 /* more threads than this share lists */

struct debug_list {
	struct closure head; /* the sentinel; head.debug_next 0: never used, empty */
	uint64_t generation; /* odd while the list changes (a seqlock for outside readers) */
	pthread_mutex_t lock;
} __attribute__((aligned(64))); /* one list's lock never shares a cache line with another's */

static struct debug_list lists[DEBUG_LISTS] = {
	[0 ... DEBUG_LISTS - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}};
static unsigned next_list;		 /* the list the next new thread takes */
static __thread unsigned my_list_plus_1; /* this thread's, plus 1 (0: none yet) */

/* Found by section name from outside the process (closure_debug.h); never read in here. */
__attribute__((used, section(CLOSURE_DEBUG_SECTION),
	       visibility("default"))) struct closure_debug_info closure_debug_info = {
	DEBUG_INFO_LAYOUT,
	.keeps_list = 1,
	.list_head = (uintptr_t)&lists[0].head,
	.generation = (uintptr_t)&lists[0].generation,
	.list_count = DEBUG_LISTS,
	.list_stride = sizeof(struct debug_list),
	.off_list = offsetof(struct closure, debug_list),
};

static unsigned my_list(void)
{
	if (!my_list_plus_1)
		my_list_plus_1 =
			__atomic_fetch_add(&next_list, 1, __ATOMIC_RELAXED) % DEBUG_LISTS + 1;
	return my_list_plus_1 - 1;
}

/*
 * Bumped under the list's lock before and after every change (odd while changing), as the seqlock
 * outside readers check; in here the lock alone orders everything, and a reader in another
 * process checks every node it reads anyway (recorder/live_list.c).
 */
static void list_changing(struct debug_list *l)
{
	__atomic_store_n(&l->generation, l->generation + 1, __ATOMIC_RELEASE);
}

static struct debug_list *list_lock(unsigned i)
{
	struct debug_list *l = &lists[i % DEBUG_LISTS];

	pthread_mutex_lock(&l->lock);
	list_changing(l);
	return l;
}

static void list_unlock(struct debug_list *l)
{
	list_changing(l);
	pthread_mutex_unlock(&l->lock);
}

/* Under l's lock. */
static void link_closure(struct debug_list *l, struct closure *cl)
{
	struct closure *head = &l->head;

	if (!head->debug_next)
		head->debug_next = head->debug_prev = head;
	cl->debug_list = (uint8_t)(l - lists);
	cl->debug_next = head;
	cl->debug_prev = head->debug_prev;
	head->debug_prev->debug_next = cl;
	head->debug_prev = cl;
}

/* Under l's lock. */
static void unlink_closure(struct closure *cl)
{
	cl->debug_prev->debug_next = cl->debug_next;
	cl->debug_next->debug_prev = cl->debug_prev;
}

/* Under l's lock: whether cl is on l (a closure's list index is a hint until that is known). */
static bool listed_on(struct debug_list *l, struct closure *cl)
{
	struct closure *i = l->head.debug_next;

	while (i && i != &l->head && i != cl)
		i = i->debug_next;
	return i == cl;
}

static bool listed(struct closure *cl)
{
	struct debug_list *l = list_lock(cl->debug_list);
	bool on = listed_on(l, cl);

	list_unlock(l);
	return on;
}

void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip)
{
	/*
	 * The magic of fresh memory is whatever was there: only a hint, confirmed on the list. Say
	 * so to memcheck, whose client request costs a few instructions outside valgrind.
	 */
	VALGRIND_MAKE_MEM_DEFINED(&cl->magic, sizeof(cl->magic));
	VALGRIND_MAKE_MEM_DEFINED(&cl->debug_list, sizeof(cl->debug_list));
	if (cl->magic != CLOSURE_MAGIC_ALIVE)
		return; /* the common case: fresh memory, finished or destroyed */
	if (listed(cl))
		closure_bug(cl, CLOSURE_BUG_INIT_LIVE, op,
			    __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), ip,
			    "initialised again while alive (neither finished nor destroyed)");
}

/*
 * After init_body() made it alive (its magic, before its count). Not listed already: a closure
 * initialised again while listed was refused by closure_debug_check_init().
 */
void closure_debug_create(struct closure *cl)
{
	struct debug_list *l;

	__atomic_store_n(&cl->sync_tid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->sync_ip, 0, __ATOMIC_RELAXED);
	l = list_lock(my_list());
	link_closure(l, cl);
	list_unlock(l);
}

/*
 * Where the owner sleeps, for `closuretrace ps`. A stack closure is listed only while it sleeps:
 * its frame lives at least that long, and a hung closure_sync is what one looks for.
 */
void closure_debug_sync_begin(struct closure *cl, uintptr_t ip)
{
	struct debug_list *l;

	__atomic_store_n(&cl->sync_tid, (uint32_t)gettid(), __ATOMIC_RELAXED);
	__atomic_store_n(&cl->sync_ip, ip, __ATOMIC_RELAXED);
	closure_debug_stamp(&cl->sync_ns);
	if (cl->magic != CLOSURE_MAGIC_STACK)
		return;
	l = list_lock(my_list());
	link_closure(l, cl);
	list_unlock(l);
}

void closure_debug_sync_end(struct closure *cl)
{
	struct debug_list *l;

	__atomic_store_n(&cl->sync_tid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->sync_ip, 0, __ATOMIC_RELAXED);
	if (cl->magic != CLOSURE_MAGIC_STACK)
		return;
	l = list_lock(cl->debug_list);
	unlink_closure(cl);
	list_unlock(l);
}

void closure_debug_unlist(struct closure *cl)
{
	struct debug_list *l;

	if (cl->magic != CLOSURE_MAGIC_ALIVE)
		return; /* stack closures are not listed */
	l = list_lock(cl->debug_list);
	unlink_closure(cl);
	/* Atomic: the inline get and put read it (closure_magic_live) without the lock. */
	__atomic_store_n(&cl->magic, CLOSURE_MAGIC_DEAD, __ATOMIC_RELAXED);
	list_unlock(l);
}

/* One line for cl, as the kernel's debugfs file prints it. */
static void dump_one(FILE *out, struct closure *cl)
{
	char ip[256], fn[256], waiting[256];
	uint32_t r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);

	describe_address(ip, sizeof(ip), __atomic_load_n(&cl->ip, __ATOMIC_RELAXED));
	describe_address(fn, sizeof(fn), (uintptr_t)__atomic_load_n(&cl->fn, __ATOMIC_RELAXED));
	fprintf(out, "%p: %s -> %s p %p r %u %s%s%s%s", (void *)cl, ip, fn,
		(void *)__atomic_load_n(&cl->parent, __ATOMIC_RELAXED), r & CLOSURE_REMAINING_MASK,
		r & CLOSURE_RUNNING ? "R" : "", r & CLOSURE_SLEEPING ? "S" : "",
		r & CLOSURE_DESTRUCTOR ? "D" : "", r & CLOSURE_WAITING ? "W" : "");
	if (r & CLOSURE_WAITING) {
		describe_address(waiting, sizeof(waiting),
				 __atomic_load_n(&cl->waiting_on, __ATOMIC_RELAXED));
		fprintf(out, " waiting on %p from %s",
			(void *)__atomic_load_n(&cl->waitlist, __ATOMIC_RELAXED), waiting);
	}
	fputc('\n', out);
}

/* List by list, each under its lock: each list whole, the lists one after another. */
int closure_debug_dump(FILE *out)
{
	int n = 0;

	for (unsigned i = 0; i < DEBUG_LISTS; i++) {
		struct debug_list *l = list_lock(i);

		for (struct closure *cl = l->head.debug_next; cl && cl != &l->head;
		     cl = cl->debug_next, n++)
			dump_one(out, cl);
		list_unlock(l);
	}
	return n;
}

#else

/* Says to a reader that this build keeps no list (closuretrace ps tells how to get one). */
__attribute__((used, section(CLOSURE_DEBUG_SECTION),
	       visibility("default"))) struct closure_debug_info closure_debug_info = {
	DEBUG_INFO_LAYOUT, .keeps_list = 0};

void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip)
{
	(void)cl, (void)op, (void)ip; /* the live list is kept only with CLOSURE_DEBUG */
}

void closure_debug_create(struct closure *cl)
{
	(void)cl; /* alive already (init_body); the live list is kept only with CLOSURE_DEBUG */
}

/* Dead in every build: a program built against a CLOSURE_DEBUG closure.h checks it inline. */
void closure_debug_unlist(struct closure *cl)
{
	if (cl->magic == CLOSURE_MAGIC_ALIVE)
		__atomic_store_n(&cl->magic, CLOSURE_MAGIC_DEAD, __ATOMIC_RELAXED);
}

int closure_debug_dump(FILE *out)
{
	(void)out;
	return 0;
}

#endif
