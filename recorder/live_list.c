/* Copying libclosure's live list out of a running process: see live_list.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "live_list.h"
#include "object_open.h"
#include "proc_mem.h"

/* Longer lists are cut (complete = false): the reader's memory stays bounded. */
#define MAX_CLOSURES (1u << 20)
/* A walk follows a changed link this often before it gives up (a list that churns). */
#define MAX_RESYNCS 100000
/* The descriptor's closure_size is believed up to this. */
#define MAX_CLOSURE_SIZE 4096

/* The link-time address of the descriptor's section in the ELF file at path, or 0. */
static uint64_t descriptor_section(const char *path)
{
	int fd = object_open(path);
	uint64_t addr = 0;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getshdrstrndx(e, &shstrndx)) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
				continue;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			if (name && !strcmp(name, CLOSURE_DEBUG_SECTION)) {
				addr = sh.sh_addr;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return addr;
}

static enum live_status from_errno(pid_t pid, int err)
{
	if (err == -ESRCH || (kill(pid, 0) && errno == ESRCH))
		return LIVE_NO_PROCESS;
	return err == -EPERM || err == -EACCES ? LIVE_NOT_PERMITTED : LIVE_BAD_DESCRIPTOR;
}

static bool offset_ok(const struct closure_debug_info *d, uint32_t off, uint32_t size)
{
	return off <= d->closure_size && size <= d->closure_size - off;
}

static enum live_status check_descriptor(const struct closure_debug_info *d)
{
	uint32_t p = d->pointer_size;

	if (d->magic != CLOSURE_DEBUG_MAGIC)
		return LIVE_BAD_DESCRIPTOR;
	if (d->version > CLOSURE_DEBUG_VERSION)
		return LIVE_NEWER;
	if (!d->keeps_list)
		return LIVE_NO_LIST;
	if ((p != 4 && p != 8) || !d->list_head || !d->generation || d->closure_size < p ||
	    d->closure_size > MAX_CLOSURE_SIZE || !offset_ok(d, d->off_remaining, 4) ||
	    !offset_ok(d, d->off_parent, p) || !offset_ok(d, d->off_fn, p) ||
	    !offset_ok(d, d->off_waitlist, p) || !offset_ok(d, d->off_ip, p) ||
	    !offset_ok(d, d->off_waiting_on, p) || !offset_ok(d, d->off_prev, p) ||
	    !offset_ok(d, d->off_next, p) || !offset_ok(d, d->off_magic, 4) ||
	    !offset_ok(d, d->off_sync_tid, 4) || !offset_ok(d, d->off_sync_ip, p) ||
	    !offset_ok(d, d->off_queued, 1))
		return LIVE_BAD_DESCRIPTOR;
	if (d->version >= 2 &&
	    (!offset_ok(d, d->off_init_ip, p) || !offset_ok(d, d->off_init_ns, 8) ||
	     !offset_ok(d, d->off_ip_ns, 8) || !offset_ok(d, d->off_wait_ns, 8) ||
	     !offset_ok(d, d->off_sync_ns, 8)))
		return LIVE_BAD_DESCRIPTOR;
	return LIVE_OK;
}

/* Finds and reads the descriptor: the first object of the process that carries one. */
static enum live_status find_descriptor(pid_t pid, struct objects *objs, struct live_list *out)
{
	int err;

	if (objects_scan_maps(objs, pid) < 0)
		return from_errno(pid, -errno);
	for (size_t i = 0; i < objs->n; i++) {
		uint64_t at;

		if (!objs->v[i].elf || !(at = descriptor_section(objs->v[i].file)))
			continue;
		err = proc_mem_read(pid, at + objs->v[i].bias, &out->info, sizeof(out->info));
		if (err)
			return from_errno(pid, err);
		out->library = objs->v[i].path;
		/* A version 1 descriptor ends before the ages: what was read past it is not its. */
		if (out->info.version < 2)
			memset(&out->info.off_init_ip, 0,
			       sizeof(out->info) -
				       offsetof(struct closure_debug_info, off_init_ip));
		return check_descriptor(&out->info);
	}
	return LIVE_NO_LIBCLOSURE;
}

static uint64_t field_ptr(const struct live_list *l, const unsigned char *node, uint32_t off)
{
	uint64_t v = 0;

	if (l->info.pointer_size == 8) {
		memcpy(&v, node + off, 8);
	} else {
		uint32_t v32;

		memcpy(&v32, node + off, 4);
		v = v32;
	}
	return v;
}

static uint32_t field_u32(const unsigned char *node, uint32_t off)
{
	uint32_t v;

	memcpy(&v, node + off, 4);
	return v;
}

static void decode(const struct live_list *l, const unsigned char *node, uint64_t addr,
		   struct live_closure *c)
{
	const struct closure_debug_info *d = &l->info;

	c->addr = addr;
	c->parent = field_ptr(l, node, d->off_parent);
	c->fn = field_ptr(l, node, d->off_fn);
	c->waitlist = field_ptr(l, node, d->off_waitlist);
	c->ip = field_ptr(l, node, d->off_ip);
	c->waiting_on = field_ptr(l, node, d->off_waiting_on);
	c->sync_ip = field_ptr(l, node, d->off_sync_ip);
	c->remaining = field_u32(node, d->off_remaining);
	c->sync_tid = field_u32(node, d->off_sync_tid);
	c->stack = field_u32(node, d->off_magic) == d->magic_stack;
	c->queued = node[d->off_queued] != 0;
	if (d->version >= 2) {
		c->init_ip = field_ptr(l, node, d->off_init_ip);
		memcpy(&c->init_ns, node + d->off_init_ns, 8);
		memcpy(&c->ip_ns, node + d->off_ip_ns, 8);
		memcpy(&c->wait_ns, node + d->off_wait_ns, 8);
		memcpy(&c->sync_ns, node + d->off_sync_ns, 8);
	}
}

static bool live_magic(const struct live_list *l, const unsigned char *node)
{
	uint32_t magic = field_u32(node, l->info.off_magic);

	return magic == l->info.magic_alive || magic == l->info.magic_stack;
}

/* A node read at addr is listed: a live magic, linked back to the node before it. */
static bool node_ok(const struct live_list *l, const unsigned char *node, uint64_t prev)
{
	return live_magic(l, node) && field_ptr(l, node, l->info.off_prev) == prev;
}

/*
 * One walk from the sentinel. A node that fails node_ok was unlinked (or reused) after the node
 * before it was read: the walk reads that node again and follows its new link (or starts again
 * when that one is gone too), up to MAX_RESYNCS times, then it is cut short.
 * Returns 0 when the walk reached the sentinel again, 1 when it was cut short, 2 when l->v (cap
 * entries) is full, -errno.
 */
static int walk(pid_t pid, struct live_list *l, unsigned char *node, size_t cap, bool *resynced)
{
	const struct closure_debug_info *d = &l->info;
	uint64_t prev = d->list_head, cur;
	unsigned resyncs = 0;
	int err;

	l->n = 0;
	if ((err = proc_mem_read(pid, d->list_head, node, d->closure_size)))
		return err;
	cur = field_ptr(l, node, d->off_next);
	while (cur != d->list_head) {
		if (l->n == cap)
			return 2;
		if (!cur || proc_mem_read(pid, cur, node, d->closure_size) ||
		    !node_ok(l, node, prev)) {
			/*
			 * Read the node before again: still listed, it links to what follows
			 * now. Gone too: start again from the sentinel (drop_duplicates() then
			 * removes what is met twice).
			 */
			if (resyncs++ == MAX_RESYNCS)
				return 1;
			*resynced = true;
			if (proc_mem_read(pid, prev, node, d->closure_size) ||
			    (prev != d->list_head && !live_magic(l, node))) {
				prev = d->list_head;
				if ((err = proc_mem_read(pid, prev, node, d->closure_size)))
					return err;
			}
			cur = field_ptr(l, node, d->off_next);
			continue;
		}
		decode(l, node, cur, &l->v[l->n]);
		l->v[l->n].seq = l->n;
		l->n++;
		prev = cur;
		cur = field_ptr(l, node, d->off_next);
	}
	return 0;
}

static int by_addr_seq(const void *a, const void *b)
{
	const struct live_closure *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_seq(const void *a, const void *b)
{
	const struct live_closure *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A closure unlinked and linked again during a walk may be met twice: keep its first place. */
static void drop_duplicates(struct live_list *l)
{
	size_t kept = 0;

	qsort(l->v, l->n, sizeof(*l->v), by_addr_seq);
	for (size_t i = 0; i < l->n; i++)
		if (!kept || l->v[kept - 1].addr != l->v[i].addr)
			l->v[kept++] = l->v[i];
	l->n = kept;
	qsort(l->v, l->n, sizeof(*l->v), by_seq);
}

/* Walks until a walk is consistent, at most twice; keeps the last walk. */
static enum live_status copy_list(pid_t pid, struct live_list *l, size_t max)
{
	unsigned char *node = malloc(l->info.closure_size);
	uint64_t before, after;
	int err = -ENOMEM, cut;
	size_t cap = 1024;
	bool resynced = false;

	l->v = malloc(cap * sizeof(*l->v));
	for (l->walks = 1; node && l->v && l->walks <= 2; l->walks++) {
		if ((err = proc_mem_read(pid, l->info.generation, &before, sizeof(before))))
			break;
		/* Room for every node (grown between walks; the list may have grown too). */
		resynced = false;
		cut = walk(pid, l, node, cap, &resynced);
		while (cut == 2 && cap < max) {
			struct live_closure *v = realloc(l->v, 2 * cap * sizeof(*v));

			if (!v)
				break;
			l->v = v;
			cap *= 2;
			resynced = false;
			cut = walk(pid, l, node, cap, &resynced);
		}
		if (cut < 0 ||
		    (err = proc_mem_read(pid, l->info.generation, &after, sizeof(after)))) {
			err = cut < 0 ? cut : err;
			break;
		}
		l->complete = cut == 0;
		l->too_long = cut == 2;
		l->consistent = l->complete && !resynced && before == after && !(before & 1);
		if (l->consistent || l->walks == 2)
			break;
	}
	free(node);
	if (l->v)
		drop_duplicates(l);
	if (l->walks > 2)
		l->walks = 2;
	if (!node || !l->v)
		return LIVE_BAD_DESCRIPTOR;
	return err ? from_errno(pid, err) : LIVE_OK;
}

enum live_status live_list_read(pid_t pid, struct objects *objs, struct live_list *out)
{
	return live_list_read_max(pid, objs, out, MAX_CLOSURES);
}

enum live_status live_list_read_max(pid_t pid, struct objects *objs, struct live_list *out,
				    size_t max)
{
	enum live_status st;

	memset(out, 0, sizeof(*out));
	st = find_descriptor(pid, objs, out);
	if (st != LIVE_OK)
		return st;
	st = copy_list(pid, out, max < MAX_CLOSURES ? max : MAX_CLOSURES);
	if (st != LIVE_OK)
		live_list_free(out);
	return st;
}

void live_list_free(struct live_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
