/*
 * What libclosure says when a rule is broken: the bug probe, one line naming the closure, the
 * operation and the call site, then abort() (docs/design.md, "Misuse aborts at its site").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include "bug.h"
#include "probes.h"

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
