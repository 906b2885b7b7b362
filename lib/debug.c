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

noreturn void closure_bug(struct closure *cl, enum closure_bug bug, const char *op,
			  uint32_t remaining, uintptr_t ip, const char *detail)
{
	char where[512];

	(void)bug; /* only the probe uses it */
	/* The probe first, so that a tracer sees the bug even if stderr is lost. */
	/* Recorded whatever its tree: a bug is never sampled away (and cl may be no closure). */
	probe_op1_rec_in(PROBE_TRACED(bug), true, bug, cl, remaining, ip, (long)bug);
	if (CLOSURE_BATCH_ON())
		closure_batch_flush(); /* abort() runs no exit handler */
	describe_site(where, sizeof(where), ip);
	fprintf(stderr, "closure BUG: %s(%p): %s (count %u, flags 0x%x), called from %s\n", op,
		(void *)cl, detail, remaining & CLOSURE_REMAINING_MASK,
		remaining & ~CLOSURE_REMAINING_MASK, where);
	fflush(stderr);
	abort();
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

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct closure list_head = {.debug_prev = &list_head, .debug_next = &list_head};
/*
 * Bumped under list_lock before and after every change (odd while changing), as a seqlock: a
 * reader in another process that sees the same even value before and after its walk read a
 * consistent list.
 */
static uint64_t list_generation;

static void list_changing(void)
{
	__atomic_store_n(&list_generation, list_generation + 1, __ATOMIC_RELEASE);
}

/* Found by section name from outside the process (closure_debug.h); never read in here. */
__attribute__((used, section(CLOSURE_DEBUG_SECTION),
	       visibility("default"))) struct closure_debug_info closure_debug_info = {
	DEBUG_INFO_LAYOUT,
	.keeps_list = 1,
	.list_head = (uintptr_t)&list_head,
	.generation = (uintptr_t)&list_generation,
};

static void link_closure(struct closure *cl)
{
	list_changing();
	cl->debug_next = &list_head;
	cl->debug_prev = list_head.debug_prev;
	list_head.debug_prev->debug_next = cl;
	list_head.debug_prev = cl;
	list_changing();
}

static bool listed(struct closure *cl)
{
	struct closure *i;

	for (i = list_head.debug_next; i != &list_head; i = i->debug_next)
		if (i == cl)
			return true;
	return false;
}

static void unlink_closure(struct closure *cl)
{
	list_changing();
	cl->debug_prev->debug_next = cl->debug_next;
	cl->debug_next->debug_prev = cl->debug_prev;
	list_changing();
}

void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip)
{
	bool live;

	/*
	 * The magic of fresh memory is whatever was there: only a hint, confirmed on the list. Say
	 * so to memcheck, whose client request costs a few instructions outside valgrind.
	 */
	VALGRIND_MAKE_MEM_DEFINED(&cl->magic, sizeof(cl->magic));
	if (cl->magic != CLOSURE_MAGIC_ALIVE)
		return; /* the common case: fresh memory, finished or destroyed */
	pthread_mutex_lock(&list_lock);
	live = listed(cl);
	pthread_mutex_unlock(&list_lock);
	if (live)
		closure_bug(cl, CLOSURE_BUG_INIT_LIVE, op,
			    __atomic_load_n(&cl->remaining, __ATOMIC_RELAXED), ip,
			    "initialised again while alive (neither finished nor destroyed)");
}

void closure_debug_create(struct closure *cl)
{
	pthread_mutex_lock(&list_lock);
	/* Initialised again while still alive (a leak, then reuse): list it once. */
	if (cl->magic == CLOSURE_MAGIC_ALIVE && listed(cl))
		unlink_closure(cl);
	cl->magic = CLOSURE_MAGIC_ALIVE;
	cl->sync_tid = 0;
	cl->sync_ip = 0;
	link_closure(cl);
	pthread_mutex_unlock(&list_lock);
}

/*
 * Where the owner sleeps, for `closuretrace ps`. A stack closure is listed only while it sleeps:
 * its frame lives at least that long, and a hung closure_sync is what one looks for.
 */
void closure_debug_sync_begin(struct closure *cl, uintptr_t ip)
{
	pthread_mutex_lock(&list_lock);
	cl->sync_tid = (uint32_t)gettid();
	cl->sync_ip = ip;
	closure_debug_stamp(&cl->sync_ns);
	if (cl->magic == CLOSURE_MAGIC_STACK)
		link_closure(cl);
	pthread_mutex_unlock(&list_lock);
}

void closure_debug_sync_end(struct closure *cl)
{
	pthread_mutex_lock(&list_lock);
	cl->sync_tid = 0;
	cl->sync_ip = 0;
	if (cl->magic == CLOSURE_MAGIC_STACK)
		unlink_closure(cl);
	pthread_mutex_unlock(&list_lock);
}

void closure_debug_unlist(struct closure *cl)
{
	if (cl->magic != CLOSURE_MAGIC_ALIVE)
		return; /* stack closures are not listed */
	pthread_mutex_lock(&list_lock);
	unlink_closure(cl);
	cl->magic = CLOSURE_MAGIC_DEAD;
	pthread_mutex_unlock(&list_lock);
}

int closure_debug_dump(FILE *out)
{
	char ip[256], fn[256], waiting[256];
	struct closure *cl;
	uint32_t r;
	int n = 0;

	pthread_mutex_lock(&list_lock);
	for (cl = list_head.debug_next; cl != &list_head; cl = cl->debug_next, n++) {
		r = __atomic_load_n(&cl->remaining, __ATOMIC_RELAXED);
		describe_address(ip, sizeof(ip), __atomic_load_n(&cl->ip, __ATOMIC_RELAXED));
		describe_address(fn, sizeof(fn),
				 (uintptr_t)__atomic_load_n(&cl->fn, __ATOMIC_RELAXED));
		fprintf(out, "%p: %s -> %s p %p r %u %s%s%s%s", (void *)cl, ip, fn,
			(void *)__atomic_load_n(&cl->parent, __ATOMIC_RELAXED),
			r & CLOSURE_REMAINING_MASK, r & CLOSURE_RUNNING ? "R" : "",
			r & CLOSURE_SLEEPING ? "S" : "", r & CLOSURE_DESTRUCTOR ? "D" : "",
			r & CLOSURE_WAITING ? "W" : "");
		if (r & CLOSURE_WAITING) {
			describe_address(waiting, sizeof(waiting),
					 __atomic_load_n(&cl->waiting_on, __ATOMIC_RELAXED));
			fprintf(out, " waiting on %p from %s",
				(void *)__atomic_load_n(&cl->waitlist, __ATOMIC_RELAXED), waiting);
		}
		fputc('\n', out);
	}
	pthread_mutex_unlock(&list_lock);
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
	cl->magic = CLOSURE_MAGIC_ALIVE;
}

void closure_debug_unlist(struct closure *cl)
{
	if (cl->magic == CLOSURE_MAGIC_ALIVE)
		cl->magic = CLOSURE_MAGIC_DEAD;
}

int closure_debug_dump(FILE *out)
{
	(void)out;
	return 0;
}

#endif
