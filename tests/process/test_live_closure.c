/*
 * process/live_closure.c's live_closure_read, on this very process (its own libclosure, its own
 * memory read as another process's would be): a closure named mid-life is read with its init
 * site, time, thread and parent; what the process could forge is refused, and an address outside
 * its writable mappings is not read at all (LIVE_READ_OUTSIDE comes before any read: a page that
 * is readable but not writable would read fine).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <closure.h>

#include "../check.h"
#include "live_closure.h"
#include "live_list.h"

static const struct closure_debug_info *d;
static struct proc_maps maps;

static enum live_read read_at(const void *addr, struct live_closure *c)
{
	return live_closure_read(getpid(), d, &maps, (uint64_t)(uintptr_t)addr, c);
}

static void expect_read(const void *addr, enum live_read want, const char *what)
{
	struct live_closure c;
	enum live_read got = read_at(addr, &c);

	EXPECT(got == want, "%s: %d, not %d", what, (int)got, (int)want);
	printf("%s: %s\n", got == want ? "ok" : "FAIL", what);
}

static void put_word(unsigned char *node, uint32_t off, uint64_t v)
{
	memcpy(node + off, &v, d->pointer_size);
}

int main(void)
{
	struct objects objs = {0};
	struct live_list l;
	struct closure *parent = calloc(1, sizeof(*parent)), *child = calloc(1, sizeof(*child));
	struct closure *done = calloc(1, sizeof(*done)), stack;
	unsigned char *copy = calloc(1, 4096), *page;
	struct live_closure c;
	long size = sysconf(_SC_PAGESIZE);

	CHECK(parent && child && done && copy);
	closure_init(parent, NULL);
	closure_init(child, parent);
	closure_init_stack(&stack);
	closure_init(done, NULL);
	closure_return(done);
	CHECK_EQ(live_list_read(getpid(), &objs, &l), LIVE_OK);
	d = &l.info;
	CHECK(d->version >= 4 && d->closure_size <= 4096);
	CHECK_EQ(proc_maps_read(&maps, getpid()), 0);

	/* Alive, in the slot it names: its init as the library wrote it. */
	EXPECT(read_at(child, &c) == LIVE_READ_OK, "the child not read");
	EXPECT(c.addr == (uintptr_t)child && c.parent == (uintptr_t)parent, "its parent: %#jx",
	       (uintmax_t)c.parent);
	EXPECT(c.init_ip && c.init_ns && c.init_tid == (uint32_t)gettid() && !c.stack,
	       "its init site, time, thread: %#jx %ju %u", (uintmax_t)c.init_ip,
	       (uintmax_t)c.init_ns, c.init_tid);
	printf("ok: a live closure read with its init\n");
	/* A stack closure outside closure_sync names no slot: read on its magic alone. */
	EXPECT(read_at(&stack, &c) == LIVE_READ_OK && c.stack, "the stack closure not read");
	expect_read(done, LIVE_READ_NOT_ALIVE, "a finished closure (its magic dead)");

	/* Copies of a live closure elsewhere: its magic, but the slot it names holds the original.
	 */
	memcpy(copy, child, d->closure_size);
	expect_read(copy, LIVE_READ_NOT_LISTED,
		    "a copy of a live closure (its slot holds another)");
	put_word(copy, d->off_registry_slot, 0);
	expect_read(copy, LIVE_READ_NOT_LISTED, "an alive magic naming no slot");
	put_word(copy, d->off_registry_slot, 0x10);
	expect_read(copy, LIVE_READ_NOT_LISTED, "a slot outside the mappings");
	memcpy(copy, child, d->closure_size);
	memset(copy + d->off_magic, 0x5a, 4);
	expect_read(copy, LIVE_READ_NOT_ALIVE, "a wrong magic");
	memset(copy, 0, 4096);
	expect_read(copy, LIVE_READ_NOT_ALIVE, "zeroed memory");

	/* Where no closure can be: refused before any read. */
	expect_read((const char *)child + 1, LIVE_READ_OUTSIDE, "a misaligned address");
	expect_read((const void *)0x1000, LIVE_READ_OUTSIDE, "an unmapped address");
	expect_read((const void *)(uintptr_t)0xffff888000000000ull, LIVE_READ_OUTSIDE,
		    "a kernel address");
	expect_read((const void *)(uintptr_t)&main, LIVE_READ_OUTSIDE, "its code");
	page = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED);
	memcpy(page, child, d->closure_size);
	CHECK(!mprotect(page, size, PROT_READ));
	CHECK(!munmap(page + size, size));
	proc_maps_read(&maps, getpid());
	expect_read(page, LIVE_READ_OUTSIDE, "a read-only page (a closure never lives there)");
	CHECK(!mprotect(page, size, PROT_READ | PROT_WRITE));
	proc_maps_read(&maps, getpid());
	expect_read(page + size - 8, LIVE_READ_OUTSIDE, "a closure past its mapping's end");
	expect_read(page, LIVE_READ_NOT_LISTED, "the same copy, writable");

	closure_sync(&stack);
	closure_return(child);
	closure_return(parent);
	proc_maps_free(&maps);
	live_list_free(&l);
	objects_free(&objs);
	free(copy);
	free(parent);
	free(child);
	free(done);
	return check_failures ? 1 : 0;
}
