/* One closure of a running process, decoded, or read alone and validated: see live_closure.h. */
#include <string.h>

#include "live_closure.h"
#include "proc_mem.h"

uint64_t live_field_ptr(const struct closure_debug_info *d, const unsigned char *node, uint32_t off)
{
	uint64_t v = 0;

	if (d->pointer_size == 8) {
		memcpy(&v, node + off, 8);
	} else {
		uint32_t v32;

		memcpy(&v32, node + off, 4);
		v = v32;
	}
	return v;
}

uint32_t live_field_u32(const unsigned char *node, uint32_t off)
{
	uint32_t v;

	memcpy(&v, node + off, 4);
	return v;
}

void live_decode(const struct closure_debug_info *d, const unsigned char *node, uint64_t addr,
		 struct live_closure *c)
{
	c->addr = addr;
	c->parent = live_field_ptr(d, node, d->off_parent);
	c->fn = live_field_ptr(d, node, d->off_fn);
	c->waitlist = live_field_ptr(d, node, d->off_waitlist);
	c->ip = live_field_ptr(d, node, d->off_ip);
	c->waiting_on = live_field_ptr(d, node, d->off_waiting_on);
	c->sync_ip = live_field_ptr(d, node, d->off_sync_ip);
	c->remaining = live_field_u32(node, d->off_remaining);
	c->sync_tid = live_field_u32(node, d->off_sync_tid);
	c->stack = live_field_u32(node, d->off_magic) == d->magic_stack;
	c->queued = node[d->off_queued] != 0;
	if (d->version >= 2) {
		c->init_ip = live_field_ptr(d, node, d->off_init_ip);
		memcpy(&c->init_ns, node + d->off_init_ns, 8);
		memcpy(&c->ip_ns, node + d->off_ip_ns, 8);
		memcpy(&c->wait_ns, node + d->off_wait_ns, 8);
		memcpy(&c->sync_ns, node + d->off_sync_ns, 8);
	}
	if (d->version >= 4)
		c->init_tid = live_field_u32(node, d->off_init_tid);
}

bool live_magic(const struct closure_debug_info *d, const unsigned char *node)
{
	uint32_t magic = live_field_u32(node, d->off_magic);

	return magic == d->magic_alive || magic == d->magic_stack;
}

/* An address the process named, where a pointer-aligned object of len bytes may be written. */
static bool writable(const struct closure_debug_info *d, const struct proc_maps *maps,
		     uint64_t addr, uint64_t len)
{
	return addr && addr <= UINT64_MAX / 2 && !(addr % d->pointer_size) &&
	       proc_maps_holds(maps, addr, len);
}

/* The slot a closure at addr names holds it: read from the process, inside its mappings. */
static bool slot_holds(pid_t pid, const struct closure_debug_info *d, const struct proc_maps *maps,
		       uint64_t slot, uint64_t addr)
{
	unsigned char word[8];

	return writable(d, maps, slot, d->pointer_size) &&
	       !proc_mem_read(pid, slot, word, d->pointer_size) &&
	       live_field_ptr(d, word, 0) == addr;
}

enum live_read live_closure_read(pid_t pid, const struct closure_debug_info *d,
				 const struct proc_maps *maps, uint64_t addr,
				 struct live_closure *out)
{
	unsigned char node[LIVE_CLOSURE_SIZE_MAX];
	uint64_t slot;

	if (d->version < 4)
		return LIVE_READ_OLD;
	if (d->closure_size > sizeof(node) || !writable(d, maps, addr, d->closure_size))
		return LIVE_READ_OUTSIDE;
	if (proc_mem_read(pid, addr, node, d->closure_size))
		return LIVE_READ_FAILED;
	if (!live_magic(d, node))
		return LIVE_READ_NOT_ALIVE;
	memset(out, 0, sizeof(*out));
	live_decode(d, node, addr, out);
	slot = live_field_ptr(d, node, d->off_registry_slot);
	if ((slot || !out->stack) && !slot_holds(pid, d, maps, slot, addr))
		return LIVE_READ_NOT_LISTED;
	if (!out->init_ip || !out->init_ns)
		return LIVE_READ_NO_INIT;
	return LIVE_READ_OK;
}
