/*
 * The closure debug (debug.h): the live registry's slow paths (chunks, threads that come and
 * go), the descriptor that tells another process how to read it, closure_debug_dump() that
 * prints it, and what CLOSURE_DEBUG checks in it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "closure_debug.h"
#include "debug.h"

#if defined(CLOSURE_DEBUG) && __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(addr, len) ((void)(addr), (void)(len))
#endif

__thread struct registry_log registry_log __attribute__((tls_model("initial-exec")));
struct registry_chunk *closure_registry;

/* The rings of threads that exited, each whole, for new threads to take (under orphans_lock). */
static struct registry_chunk *orphans[64];
static unsigned n_orphans;
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* A pass over the ring that took fewer than this share of its slots adds a chunk (1/4): the
 * slots looked at per slot taken stay about 4, whatever the closures alive. */
#define PASS_MIN_TAKEN(chunks) ((chunks) * (REGISTRY_SLOTS / 4))

static void at_thread_exit(void *arg)
{
	struct registry_log *log = arg;

	pthread_mutex_lock(&orphans_lock);
	if (n_orphans < sizeof(orphans) / sizeof(orphans[0]))
		orphans[n_orphans++] = log->first;
	/* else the ring stays as it is: its closures are still found, its slots never reused */
	pthread_mutex_unlock(&orphans_lock);
	log->cur = log->first = NULL;
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, at_thread_exit);
}

/* The child of a fork is one thread: its own id, and the parent's other threads' rings stay
 * where they were (their closures, copied, are still found). */
static void after_fork_child(void)
{
	registry_log.tid = (uint32_t)gettid();
}

static void make_fork_handler(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

static struct registry_chunk *new_chunk(void)
{
	struct registry_chunk *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->magic = CLOSURE_REGISTRY_MAGIC;
	c->next = __atomic_load_n(&closure_registry, __ATOMIC_RELAXED);
	/* Release: a reader that finds c finds it whole. */
	while (!__atomic_compare_exchange_n(&closure_registry, &c->next, c, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	return c;
}

/* A thread's first closure: a ring left by a thread that exited, or a new chunk. */
static bool start_log(struct registry_log *log)
{
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
	struct registry_chunk *ring = NULL;

	pthread_once(&fork_once, make_fork_handler);
	pthread_once(&exit_key_once, make_exit_key);
	pthread_mutex_lock(&orphans_lock);
	if (n_orphans)
		ring = orphans[--n_orphans];
	pthread_mutex_unlock(&orphans_lock);
	if (!ring && (ring = new_chunk()))
		ring->next_own = ring;
	if (!ring)
		return false;
	log->first = log->cur = ring;
	log->chunks = 1;
	for (struct registry_chunk *c = ring->next_own; c != ring; c = c->next_own)
		log->chunks++;
	log->cursor = 0;
	log->taken = 0;
	log->visited = 0;
	log->tid = (uint32_t)gettid();
	pthread_setspecific(exit_key, log);
	return true;
}

/* A pass over the ring ended having taken too few: a new chunk after cur, looked at next. */
static bool grow(struct registry_log *log)
{
	struct registry_chunk *c = new_chunk();

	if (!c)
		return false;
	c->next_own = log->cur->next_own;
	log->cur->next_own = c;
	log->chunks++;
	return true;
}

struct closure **registry_slot_slow(struct registry_log *log)
{
	if (!log->cur && !start_log(log))
		return NULL;
	for (;;) {
		while (log->cursor < REGISTRY_SLOTS) {
			struct closure **slot = &log->cur->slot[log->cursor++];

			if (!__atomic_load_n(slot, __ATOMIC_RELAXED)) {
				log->taken++;
				return slot;
			}
		}
		/* A chunk looked through: a pass ends once every chunk of the ring was. */
		if (++log->visited >= log->chunks) {
			if (log->taken < PASS_MIN_TAKEN(log->chunks) && !grow(log))
				return NULL;
			log->visited = 0;
			log->taken = 0;
		}
		log->cur = log->cur->next_own;
		log->cursor = 0;
	}
}

uint32_t registry_tid(void)
{
	if (!registry_log.tid)
		registry_log.tid = (uint32_t)gettid();
	return registry_log.tid;
}

/* Found by section name from outside the process (closure_debug.h); never read in here. */
__attribute__((used, section(CLOSURE_DEBUG_SECTION),
	       visibility("default"))) struct closure_debug_info closure_debug_info = {
	.magic = CLOSURE_DEBUG_MAGIC,
	.version = CLOSURE_DEBUG_VERSION,
	.keeps_list = 1,
	.closure_size = sizeof(struct closure),
	.pointer_size = sizeof(void *),
	.off_remaining = offsetof(struct closure, remaining),
	.off_parent = offsetof(struct closure, parent),
	.off_fn = offsetof(struct closure, fn),
	.off_waitlist = offsetof(struct closure, waitlist),
	.off_ip = offsetof(struct closure, ip),
	.off_waiting_on = offsetof(struct closure, waiting_on),
	.off_prev = offsetof(struct closure, registry_slot),
	.off_next = offsetof(struct closure, reserved),
	.off_magic = offsetof(struct closure, magic),
	.off_sync_tid = offsetof(struct closure, sync_tid),
	.off_sync_ip = offsetof(struct closure, sync_ip),
	.magic_alive = CLOSURE_MAGIC_ALIVE,
	.magic_stack = CLOSURE_MAGIC_STACK,
	.remaining_mask = CLOSURE_REMAINING_MASK,
	.flag_destructor = CLOSURE_DESTRUCTOR,
	.flag_sleeping = CLOSURE_SLEEPING,
	.flag_waiting = CLOSURE_WAITING,
	.flag_running = CLOSURE_RUNNING,
	.off_queued = offsetof(struct closure, queued),
	.off_init_ip = offsetof(struct closure, init_ip),
	.off_init_ns = offsetof(struct closure, init_ns),
	.off_ip_ns = offsetof(struct closure, ip_ns),
	.off_wait_ns = offsetof(struct closure, wait_ns),
	.off_sync_ns = offsetof(struct closure, sync_ns),
	.off_list = offsetof(struct closure, reserved_byte),
	.registry = (uintptr_t)&closure_registry,
	.chunk_magic = CLOSURE_REGISTRY_MAGIC,
	.chunk_size = sizeof(struct registry_chunk),
	.chunk_off_next = offsetof(struct registry_chunk, next),
	.chunk_off_slots = offsetof(struct registry_chunk, slot),
	.chunk_slots = REGISTRY_SLOTS,
	.off_registry_slot = offsetof(struct closure, registry_slot),
	.off_init_tid = offsetof(struct closure, init_tid),
};

/*
 * Where the owner sleeps, for `closuretrace ps`. A stack closure is listed only while it sleeps:
 * its frame lives at least that long, and a hung closure_sync is what one looks for.
 */
void closure_debug_sync_begin(struct closure *cl, uintptr_t ip)
{
	__atomic_store_n(&cl->sync_tid, registry_tid(), __ATOMIC_RELAXED);
	__atomic_store_n(&cl->sync_ip, ip, __ATOMIC_RELAXED);
	/* In every build: a sleep costs far more than a clock read. */
	__atomic_store_n(&cl->sync_ns, closure_clock_ns(), __ATOMIC_RELAXED);
	if (cl->magic == CLOSURE_MAGIC_STACK)
		registry_add(cl);
}

void closure_debug_sync_end(struct closure *cl)
{
	__atomic_store_n(&cl->sync_tid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->sync_ip, 0, __ATOMIC_RELAXED);
	if (cl->magic == CLOSURE_MAGIC_STACK)
		registry_remove(cl);
}

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

/* One line for cl (a copy), as the kernel's debugfs file prints it. */
static void dump_one(FILE *out, const struct closure *cl, const struct closure *at)
{
	char ip[256], fn[256], waiting[256];
	uint32_t r = *CLOSURE_WORD(cl);

	describe_address(ip, sizeof(ip), cl->ip);
	describe_address(fn, sizeof(fn), (uintptr_t)cl->fn);
	fprintf(out, "%p: %s -> %s p %p r %u %s%s%s%s", (const void *)at, ip, fn,
		(void *)cl->parent, r & CLOSURE_REMAINING_MASK, r & CLOSURE_RUNNING ? "R" : "",
		r & CLOSURE_SLEEPING ? "S" : "", r & CLOSURE_DESTRUCTOR ? "D" : "",
		r & CLOSURE_WAITING ? "W" : "");
	if (r & CLOSURE_WAITING) {
		describe_address(waiting, sizeof(waiting), cl->waiting_on);
		fprintf(out, " waiting on %p from %s", (void *)cl->waitlist, waiting);
	}
	fputc('\n', out);
}

/*
 * A copy of the closure in slot, read as another process would (process_vm_readv on ourselves):
 * the registry takes no lock, so the closure may finish and its memory go while it is read. False
 * when it did (not alive, or no longer in that slot), or its memory could not be read.
 */
static struct closure *copy_listed(struct closure **slot, struct closure *copy)
{
	struct closure *cl = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	struct iovec local = {copy, sizeof(*copy)}, remote = {cl, sizeof(*copy)};

	if (!cl || process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(*copy))
		return NULL;
	VALGRIND_MAKE_MEM_DEFINED(copy, sizeof(*copy)); /* memcheck cannot see the system call */
	if ((copy->magic != CLOSURE_MAGIC_ALIVE && copy->magic != CLOSURE_MAGIC_STACK) ||
	    copy->registry_slot != slot)
		return NULL;
	return cl;
}

/* Chunk by chunk, newest first; a closure that finishes meanwhile may be left out. */
int closure_debug_dump(FILE *out)
{
	int n = 0;

	for (struct registry_chunk *c = __atomic_load_n(&closure_registry, __ATOMIC_ACQUIRE); c;
	     c = c->next)
		for (unsigned i = 0; i < REGISTRY_SLOTS; i++) {
			struct closure copy, *cl = copy_listed(&c->slot[i], &copy);

			if (cl) {
				dump_one(out, &copy, cl);
				n++;
			}
		}
	return n;
}

#ifdef CLOSURE_DEBUG
/* cl is in the registry: its slot in one of the chunks, holding it. */
static bool registry_holds(struct closure *cl)
{
	struct closure **slot = cl->registry_slot;

	for (struct registry_chunk *c = __atomic_load_n(&closure_registry, __ATOMIC_ACQUIRE); c;
	     c = c->next)
		if (slot >= c->slot && slot < c->slot + REGISTRY_SLOTS)
			return __atomic_load_n(slot, __ATOMIC_RELAXED) == cl;
	return false;
}

void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip)
{
	/*
	 * The magic of fresh memory is whatever was there: only a hint, confirmed in the registry.
	 * Say so to memcheck, whose client request costs a few instructions outside valgrind.
	 */
	VALGRIND_MAKE_MEM_DEFINED(&cl->magic, sizeof(cl->magic));
	VALGRIND_MAKE_MEM_DEFINED(&cl->registry_slot, sizeof(cl->registry_slot));
	if (cl->magic != CLOSURE_MAGIC_ALIVE)
		return; /* the common case: fresh memory, finished or destroyed */
	if (registry_holds(cl))
		closure_bug(cl, CLOSURE_BUG_INIT_LIVE, op,
			    __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED), ip,
			    "initialised again while alive (neither finished nor destroyed)");
}
#endif
