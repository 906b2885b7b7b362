/*
 * What libclosure says when something is wrong: the enforced-rule messages; the descriptor that
 * tells another process how to read the live registry, and closure_debug_dump() that prints it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "closure_debug.h"
#include "internal.h"
#include "probes.h"
#include "registry.h"

#if defined(CLOSURE_DEBUG) && __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(addr, len) ((void)(addr), (void)(len))
#endif

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

void closure_debug_check_init(struct closure *cl, const char *op, uintptr_t ip)
{
#ifdef CLOSURE_DEBUG
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
#else
	(void)cl, (void)op, (void)ip; /* no check: the registry is asked only with CLOSURE_DEBUG */
#endif
}

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
