/*
 * A process whose live-list descriptor (closure_debug.h, version 3) lies, for ps_test.sh's
 * hostile cases: closuretrace ps reads another process's memory, which may say anything, and
 * must end in bounded time with a clear answer. No libclosure: the descriptor is this file's.
 *   ps_hostile cycle    two closures that link to each other, never back to the sentinel
 *   ps_hostile lists    a list count of a million
 *   ps_hostile stride   lists closer together than a closure is long
 * Prints "ready" and sleeps until killed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <closure.h>
#include <closure_debug.h>

#define MAGIC_ALIVE 0xc054a11eu /* closure.h's CLOSURE_MAGIC_ALIVE */

struct fake_list {
	struct closure head;
	uint64_t generation;
};

static struct fake_list lists[2];
static struct closure a, b;

__attribute__((used, section(CLOSURE_DEBUG_SECTION))) struct closure_debug_info info = {
	.magic = CLOSURE_DEBUG_MAGIC,
	.version = 3,
	.keeps_list = 1,
	.list_head = 0, /* set in main: a constant address would need a relocation anyway */
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
	.magic_alive = MAGIC_ALIVE,
	.magic_stack = MAGIC_ALIVE + 1,
	.remaining_mask = CLOSURE_REMAINING_MASK,
	.off_queued = offsetof(struct closure, queued),
	.off_init_ip = offsetof(struct closure, init_ip),
	.off_init_ns = offsetof(struct closure, init_ns),
	.off_ip_ns = offsetof(struct closure, ip_ns),
	.off_wait_ns = offsetof(struct closure, wait_ns),
	.off_sync_ns = offsetof(struct closure, sync_ns),
	.list_count = 2,
	.list_stride = sizeof(struct fake_list),
	.off_list = offsetof(struct closure, reserved_byte),
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	info.list_head = (uintptr_t)&lists[0].head;
	info.generation = (uintptr_t)&lists[0].generation;
	/* List 0: the sentinel -> a <-> b, and b leads back to a, not to the sentinel. */
	/* A version 3 list's links, in the fields that held them then. */
	lists[0].head.reserved = &a;
	a.magic = b.magic = MAGIC_ALIVE;
	a.registry_slot = (struct closure **)&lists[0].head;
	a.reserved = &b;
	b.registry_slot = (struct closure **)&a;
	b.reserved = &a;
	a.remaining.counter = b.remaining.counter = 1;
	if (!strcmp(mode, "lists"))
		info.list_count = 1000000;
	else if (!strcmp(mode, "stride"))
		info.list_stride = sizeof(struct closure) / 2;
	else if (strcmp(mode, "cycle"))
		return 2;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
