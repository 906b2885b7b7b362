/* Copying libclosure's live list out of a running process: see live_list.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hashmap.h"
#include "live_list.h"
#include "mem_window.h"
#include "object_open.h"
#include "proc_mem.h"

/* Longer lists are cut (complete = false): the reader's memory stays bounded. */
#define MAX_CLOSURES (1u << 20)
/* A walk follows a changed link this often before it gives up (a list that churns). */
#define MAX_RESYNCS 100000
/* The descriptor's closure_size is believed up to this. */
#define MAX_CLOSURE_SIZE LIVE_CLOSURE_SIZE_MAX
/* And its list_count (version 3: one list per thread in turn) up to this, list_stride this. */
#define MAX_LISTS	4096
#define MAX_LIST_STRIDE (2 * MAX_CLOSURE_SIZE)
/* A registry's chunks are believed up to this size, and walked up to this many (version 4). */
#define MAX_CHUNK_SIZE	(1u << 20)
#define MAX_CHUNK_SLOTS (MAX_CHUNK_SIZE / 4)
#define MAX_CHUNKS	(1u << 16)

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

/* The registry's fields (version 4): a chunk holds its header and its slots, within bounds. */
static bool registry_descriptor_ok(const struct closure_debug_info *d)
{
	uint64_t slots_end = d->chunk_off_slots + (uint64_t)d->chunk_slots * d->pointer_size;

	return d->registry && d->chunk_slots && d->chunk_slots <= MAX_CHUNK_SLOTS &&
	       d->chunk_size <= MAX_CHUNK_SIZE && slots_end <= d->chunk_size &&
	       d->chunk_off_next <= d->chunk_size - d->pointer_size && d->chunk_size >= 8 &&
	       offset_ok(d, d->off_registry_slot, d->pointer_size) &&
	       offset_ok(d, d->off_init_tid, 4);
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
	if ((p != 4 && p != 8) || (d->version < 4 && (!d->list_head || !d->generation)) ||
	    d->closure_size < p || d->closure_size > MAX_CLOSURE_SIZE ||
	    !offset_ok(d, d->off_remaining, 4) || !offset_ok(d, d->off_parent, p) ||
	    !offset_ok(d, d->off_fn, p) || !offset_ok(d, d->off_waitlist, p) ||
	    !offset_ok(d, d->off_ip, p) || !offset_ok(d, d->off_waiting_on, p) ||
	    !offset_ok(d, d->off_prev, p) || !offset_ok(d, d->off_next, p) ||
	    !offset_ok(d, d->off_magic, 4) || !offset_ok(d, d->off_sync_tid, 4) ||
	    !offset_ok(d, d->off_sync_ip, p) || !offset_ok(d, d->off_queued, 1))
		return LIVE_BAD_DESCRIPTOR;
	if (d->version >= 2 &&
	    (!offset_ok(d, d->off_init_ip, p) || !offset_ok(d, d->off_init_ns, 8) ||
	     !offset_ok(d, d->off_ip_ns, 8) || !offset_ok(d, d->off_wait_ns, 8) ||
	     !offset_ok(d, d->off_sync_ns, 8)))
		return LIVE_BAD_DESCRIPTOR;
	if (d->version >= 4)
		return registry_descriptor_ok(d) ? LIVE_OK : LIVE_BAD_DESCRIPTOR;
	/* Each list's sentinel is whole before the next one's; the last one's address fits. */
	if (d->version >= 3 &&
	    (!d->list_count || d->list_count > MAX_LISTS || d->list_stride < d->closure_size ||
	     d->list_stride > MAX_LIST_STRIDE || !offset_ok(d, d->off_list, 1) ||
	     d->list_head > UINT64_MAX - (uint64_t)d->list_count * d->list_stride ||
	     d->generation > UINT64_MAX - (uint64_t)d->list_count * d->list_stride))
		return LIVE_BAD_DESCRIPTOR;
	return LIVE_OK;
}

/* What a descriptor of an older version did not have: zero, then one list. */
static void upgrade_descriptor(struct closure_debug_info *d)
{
	size_t from = d->version < 2   ? offsetof(struct closure_debug_info, off_init_ip)
		      : d->version < 3 ? offsetof(struct closure_debug_info, list_count)
		      : d->version < 4 ? offsetof(struct closure_debug_info, registry)
				       : sizeof(*d);

	memset((char *)d + from, 0, sizeof(*d) - from);
	if (d->version < 3) {
		d->list_count = 1;
		d->list_stride = d->closure_size;
	}
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
		/* An older descriptor is shorter: it may end where the mapping does. */
		err = proc_mem_read(pid, at + objs->v[i].bias, &out->info, sizeof(out->info));
		if (err == -EFAULT)
			err = proc_mem_read(pid, at + objs->v[i].bias, &out->info,
					    offsetof(struct closure_debug_info, registry));
		if (err == -EFAULT)
			err = proc_mem_read(pid, at + objs->v[i].bias, &out->info,
					    offsetof(struct closure_debug_info, list_count));
		if (err)
			return from_errno(pid, err);
		out->library = objs->v[i].path;
		/* An older descriptor ends before the newer fields: what was read past it is not
		 * its. */
		if (out->info.magic == CLOSURE_DEBUG_MAGIC && out->info.version < 4)
			upgrade_descriptor(&out->info);
		return check_descriptor(&out->info);
	}
	return LIVE_NO_LIBCLOSURE;
}

/* A node read at addr is listed on list i: a live magic, linked back to the node before it, and
 * (version 3) its list index says i. */
static bool node_ok(const struct live_list *l, const unsigned char *node, uint64_t prev, uint32_t i)
{
	return live_magic(&l->info, node) &&
	       live_field_ptr(&l->info, node, l->info.off_prev) == prev &&
	       (l->info.version < 3 || node[l->info.off_list] == (uint8_t)i);
}

/* List i's sentinel, or its generation (base: the first one's). */
static uint64_t list_at(const struct live_list *l, uint64_t base, uint32_t i)
{
	return base + (uint64_t)i * l->info.list_stride;
}

/* One pass over the lists: how far it may resynchronise, whatever the lists, and its reads. */
struct walk_pass {
	unsigned resyncs;
	bool resynced;
	size_t cap, max;	 /* l->v's room, and how far it may grow */
	struct mem_windows *mem; /* the nodes, a window at a time */
};

/* Room for one more node in l->v: grown (doubled, up to w->max) when full. */
static bool room(struct live_list *l, struct walk_pass *w)
{
	struct live_closure *v;
	size_t cap = w->cap * 2 < w->max ? w->cap * 2 : w->max;

	if (l->n < w->cap)
		return true;
	if (cap <= w->cap || !(v = realloc(l->v, cap * sizeof(*v))))
		return false;
	l->v = v;
	w->cap = cap;
	return true;
}

/* The node at cur, listed on list i after prev: from its window, or read afresh when the window
 * is older than the node (allocated or linked since the window was read). */
static bool read_node(struct live_list *l, struct walk_pass *w, unsigned char *node, uint64_t cur,
		      uint64_t prev, uint32_t i)
{
	size_t size = l->info.closure_size;

	if (!cur)
		return false;
	if (!mem_windows_read(w->mem, cur, node, size, false) && node_ok(l, node, prev, i))
		return true;
	return !mem_windows_read(w->mem, cur, node, size, true) && node_ok(l, node, prev, i);
}

/*
 * One walk of list i from its sentinel, appending to l->v. A node that fails node_ok was
 * unlinked (or reused) after the node before it was read: the walk reads that node again and
 * follows its new link (or starts again when that one is gone too), up to MAX_RESYNCS times in a
 * pass, then it is cut short. Returns 0 when the walk reached the sentinel again (or the list was
 * never used), 1 when it was cut short, 2 when l->v is full (w->max entries), -errno.
 */
static int walk_list(pid_t pid, struct live_list *l, unsigned char *node, uint32_t i,
		     struct walk_pass *w)
{
	const struct closure_debug_info *d = &l->info;
	uint64_t head = list_at(l, d->list_head, i), prev = head, cur;
	int err;

	if ((err = proc_mem_read(pid, head, node, d->closure_size)))
		return err;
	if (!(cur = live_field_ptr(&l->info, node, d->off_next)))
		return 0; /* a list no thread has used yet */
	while (cur != head) {
		if (!room(l, w))
			return 2;
		if (!read_node(l, w, node, cur, prev, i)) {
			/*
			 * Read the node before again: still listed, it links to what follows
			 * now. Gone too: start again from the sentinel (drop_duplicates() then
			 * removes what is met twice).
			 */
			if (w->resyncs++ == MAX_RESYNCS)
				return 1;
			w->resynced = true;
			if (proc_mem_read(pid, prev, node, d->closure_size) ||
			    (prev != head && !live_magic(&l->info, node))) {
				prev = head;
				if ((err = proc_mem_read(pid, prev, node, d->closure_size)))
					return err;
			}
			cur = live_field_ptr(&l->info, node, d->off_next);
			continue;
		}
		live_decode(&l->info, node, cur, &l->v[l->n]);
		l->v[l->n].seq = l->n;
		l->n++;
		prev = cur;
		cur = live_field_ptr(&l->info, node, d->off_next);
	}
	return 0;
}

/* One pass over every list: 0, 1, 2 or -errno as walk_list, for the first list not 0. */
static int walk(pid_t pid, struct live_list *l, unsigned char *node, struct walk_pass *w)
{
	int cut = 0;

	l->n = 0;
	w->resyncs = 0;
	w->resynced = false;
	mem_windows_forget(w->mem);
	for (uint32_t i = 0; i < l->info.list_count && !cut; i++)
		cut = walk_list(pid, l, node, i, w);
	return cut;
}

/* Every list's generation into g (list_count of them). */
static int read_generations(pid_t pid, const struct live_list *l, uint64_t *g)
{
	int err = 0;

	for (uint32_t i = 0; i < l->info.list_count && !err; i++)
		err = proc_mem_read(pid, list_at(l, l->info.generation, i), &g[i], sizeof(g[i]));
	return err;
}

/* No list changed between the two reads (none was changing at the first). */
static bool unchanged(const struct live_list *l, const uint64_t *before, const uint64_t *after)
{
	for (uint32_t i = 0; i < l->info.list_count; i++)
		if (before[i] != after[i] || (before[i] & 1))
			return false;
	return true;
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

/* A closure's place in an order, sorted instead of the closure (120 bytes: sorting a million
 * whole was most of their read). */
struct sort_key {
	uint64_t init_ns, seq;
	size_t i;
};

static int by_init_seq(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->init_ns != y->init_ns)
		return x->init_ns < y->init_ns ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void live_list_sort(struct live_list *l)
{
	struct sort_key *k = malloc((l->n ? l->n : 1) * sizeof(*k));

	if (!k)
		return; /* out of memory: left in the order read */
	for (size_t i = 0; i < l->n; i++)
		k[i] = (struct sort_key){l->v[i].init_ns, l->v[i].seq, i};
	qsort(k, l->n, sizeof(*k), by_init_seq);
	/* Each cycle of the permutation moved once: place j takes the closure at k[j].i. */
	for (size_t i = 0; i < l->n; i++) {
		struct live_closure first = l->v[i];
		size_t j = i;

		while (k[j].i != j) {
			size_t from = k[j].i;

			k[j].i = j;
			l->v[j] = from == i ? first : l->v[from];
			j = from;
		}
	}
	free(k);
}

/* Oldest first (by init time), numbered in that order. */
static void oldest_first(struct live_list *l)
{
	live_list_sort(l);
	for (size_t i = 0; i < l->n; i++)
		l->v[i].seq = i;
}

/* Several lists, one per thread in turn: merged oldest first, as one list would be. */
static void merge_lists(struct live_list *l)
{
	if (l->info.list_count >= 2)
		oldest_first(l);
}

/* Walks until a walk is consistent, at most twice; keeps the last walk. */
static enum live_status copy_list(pid_t pid, struct live_list *l, size_t max)
{
	unsigned char *node = malloc(l->info.closure_size);
	uint64_t *before = calloc(l->info.list_count, sizeof(*before));
	uint64_t *after = calloc(l->info.list_count, sizeof(*after));
	struct walk_pass w = {.cap = 1024, .max = max, .mem = mem_windows_new(pid)};
	int err = -ENOMEM, cut;

	l->v = malloc(w.cap * sizeof(*l->v));
	for (l->walks = 1; node && before && after && l->v && w.mem && l->walks <= 2; l->walks++) {
		if ((err = read_generations(pid, l, before)))
			break;
		cut = walk(pid, l, node, &w);
		if (cut < 0 || (err = read_generations(pid, l, after))) {
			err = cut < 0 ? cut : err;
			break;
		}
		l->complete = cut == 0;
		l->too_long = cut == 2;
		l->consistent = l->complete && !w.resynced && unchanged(l, before, after);
		if (l->consistent || l->walks == 2)
			break;
	}
	if (l->v && node && before && after && w.mem) {
		drop_duplicates(l);
		merge_lists(l);
	}
	mem_windows_free(w.mem);
	free(node);
	free(before);
	free(after);
	if (l->walks > 2)
		l->walks = 2;
	if (err == -ENOMEM || !l->v)
		return LIVE_BAD_DESCRIPTOR;
	return err ? from_errno(pid, err) : LIVE_OK;
}

/* A closure the registry names (version 4): the slot that held it, and its address. */
struct registry_entry {
	uint64_t slot, addr;
};

static int by_entry_addr(const void *a, const void *b)
{
	const struct registry_entry *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Every slot of every chunk that names a closure, into *out (*n of them, at most max: beyond,
 * 2). 0 when the chunks ended (a null link), 1 when cut (a chunk that is none, MAX_CHUNKS
 * walked: a cycle), 2 when past max, -errno when the first read failed.
 */
static int registry_entries(pid_t pid, const struct live_list *l, struct registry_entry **out,
			    size_t *n, size_t max)
{
	const struct closure_debug_info *d = &l->info;
	unsigned char *chunk = malloc(d->chunk_size);
	size_t cap = 0;
	uint64_t at = 0, magic;
	int err, cut = 0;

	*n = 0;
	if (!chunk)
		return -ENOMEM;
	if ((err = proc_mem_read(pid, d->registry, chunk, d->pointer_size))) {
		free(chunk);
		return err;
	}
	at = live_field_ptr(&l->info, chunk, 0);
	for (unsigned walked = 0; at && !cut; walked++) {
		if (walked == MAX_CHUNKS || proc_mem_read(pid, at, chunk, d->chunk_size)) {
			cut = 1;
			break;
		}
		memcpy(&magic, chunk, sizeof(magic));
		if (magic != d->chunk_magic) {
			cut = 1;
			break;
		}
		for (uint32_t i = 0; i < d->chunk_slots && !cut; i++) {
			uint32_t off = d->chunk_off_slots + i * d->pointer_size;
			uint64_t addr = live_field_ptr(&l->info, chunk, off);
			struct registry_entry *v;

			/* Past half the address space: no process's closure (nor a sum that wraps).
			 */
			if (!addr || addr > UINT64_MAX / 2)
				continue;
			if (*n == max) {
				cut = 2;
				break;
			}
			if (*n == cap) {
				cap = cap ? cap * 2 : 4096;
				if (cap > max)
					cap = max;
				if (!(v = realloc(*out, cap * sizeof(*v)))) {
					free(chunk);
					return -ENOMEM;
				}
				*out = v;
			}
			(*out)[(*n)++] = (struct registry_entry){.slot = at + off, .addr = addr};
		}
		at = live_field_ptr(&l->info, chunk, d->chunk_off_next);
	}
	free(chunk);
	return cut;
}

/*
 * The closures are read in pieces of the process's memory: closures allocated together (an array,
 * a slab) lie a few bytes apart, and one piece read costs one page walk where a closure a piece
 * cost a walk each (most of the read of a million). A piece takes in a next closure up to
 * PIECE_GAP bytes past the last and grows to PIECE_MAX; one system call reads up to READ_PIECES
 * pieces, READ_BYTES in all, for up to READ_ENTRIES entries.
 */
#define PIECE_GAP    256
#define PIECE_MAX    (64u << 10)
#define READ_PIECES  512
#define READ_BYTES   (1u << 20)
#define READ_ENTRIES 16384

/* One system call's worth of entries: where each one's closure landed, and which pieces came. */
struct read_plan {
	size_t k, pieces;
	struct iovec local[READ_PIECES], remote[READ_PIECES];
	size_t at[READ_ENTRIES];      /* entry i's closure is at buf + at[i] */
	uint32_t piece[READ_ENTRIES]; /* ... read in that piece */
	bool ok[READ_PIECES];
};

/* The pieces for the entries from e[0] on (sorted by address, each addr + size not past 2^64). */
static void plan_pieces(struct read_plan *p, const struct registry_entry *e, size_t n, size_t size,
			unsigned char *buf)
{
	size_t used = 0;

	p->k = p->pieces = 0;
	while (p->k < n && p->pieces < READ_PIECES) {
		uint64_t start = e[p->k].addr, end = start + size;
		size_t j = p->k + 1;

		while (j < n && j - p->k < READ_ENTRIES && e[j].addr <= end + PIECE_GAP &&
		       e[j].addr + size - start <= PIECE_MAX) {
			if (e[j].addr + size > end)
				end = e[j].addr + size;
			j++;
		}
		if ((p->pieces && used + (end - start) > READ_BYTES) || j > READ_ENTRIES)
			break;
		for (size_t i = p->k; i < j; i++) {
			p->at[i] = used + (e[i].addr - start);
			p->piece[i] = (uint32_t)p->pieces;
		}
		p->local[p->pieces] = (struct iovec){buf + used, end - start};
		p->remote[p->pieces] = (struct iovec){(void *)(uintptr_t)start, end - start};
		p->ok[p->pieces++] = false;
		used += end - start;
		p->k = j;
	}
}

/*
 * Reads the plan's pieces; a piece that could not be read whole (a page between two closures is
 * not mapped, or the process let memory go) is read a closure at a time, each closure ok or not.
 * entry_ok[i]: entry i's closure was read.
 */
static void read_pieces(pid_t pid, struct read_plan *p, const struct registry_entry *e, size_t size,
			unsigned char *buf, bool *entry_ok)
{
	size_t done = 0;

	while (done < p->pieces) {
		ssize_t got = process_vm_readv(pid, p->local + done, p->pieces - done,
					       p->remote + done, p->pieces - done, 0);

		if (got < 0 && errno != EFAULT)
			break; /* no process_vm_readv: every piece a closure at a time, below */
		for (size_t left = got > 0 ? (size_t)got : 0;
		     done < p->pieces && left >= p->local[done].iov_len; done++) {
			left -= p->local[done].iov_len;
			p->ok[done] = true;
		}
		done++; /* the piece the call stopped in: closure by closure */
	}
	for (size_t i = 0; i < p->k; i++)
		entry_ok[i] =
			p->ok[p->piece[i]] || !proc_mem_read(pid, e[i].addr, buf + p->at[i], size);
}

/*
 * Version 4: the registry's entries, each closure read and kept when it is still alive in the
 * slot it was found in (it may have finished, and its memory been reused, since the slot was
 * read). Oldest first by init time.
 */
static enum live_status copy_registry(pid_t pid, struct live_list *l, size_t max)
{
	size_t size = l->info.closure_size, n = 0;
	struct registry_entry *e = NULL;
	unsigned char *buf = malloc(READ_BYTES);
	struct read_plan *plan = malloc(sizeof(*plan));
	bool *ok = malloc(READ_ENTRIES * sizeof(*ok));
	int cut = buf && plan && ok ? registry_entries(pid, l, &e, &n, max) : -ENOMEM;

	l->walks = 1;
	if (cut < 0 || !(l->v = malloc((n ? n : 1) * sizeof(*l->v)))) {
		free(e);
		free(buf);
		free(plan);
		free(ok);
		return cut == -ENOMEM || cut >= 0 ? LIVE_BAD_DESCRIPTOR : from_errno(pid, cut);
	}
	/* By address: closures allocated together are read together (none: e is NULL). */
	if (n)
		qsort(e, n, sizeof(*e), by_entry_addr);
	for (size_t from = 0; from < n; from += plan->k) {
		plan_pieces(plan, e + from, n - from, size, buf);
		read_pieces(pid, plan, e + from, size, buf, ok);
		for (size_t i = 0; i < plan->k; i++) {
			const unsigned char *node = buf + plan->at[i];
			uint64_t addr = e[from + i].addr;

			/* Two slots naming one closure: its slot field names one of them at most.
			 */
			if (!ok[i] || !live_magic(&l->info, node) ||
			    live_field_ptr(&l->info, node, l->info.off_registry_slot) !=
				    e[from + i].slot ||
			    (l->n && l->v[l->n - 1].addr == addr))
				continue;
			live_decode(&l->info, node, addr, &l->v[l->n]);
			l->v[l->n].seq = l->n;
			l->n++;
		}
	}
	l->complete = cut == 0;
	l->too_long = cut == 2;
	l->consistent = l->complete; /* each closure checked against its own slot */
	oldest_first(l);
	free(e);
	free(buf);
	free(plan);
	free(ok);
	return LIVE_OK;
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
	max = max < MAX_CLOSURES ? max : MAX_CLOSURES;
	st = out->info.version >= 4 ? copy_registry(pid, out, max) : copy_list(pid, out, max);
	if (st != LIVE_OK)
		live_list_free(out);
	return st;
}

/*
 * The parents the list names but does not hold, read from the process's memory: a stack closure
 * is listed only while it sleeps in closure_sync, and one whose children are in flight is not
 * there yet. Each is read where its child points, kept only with a live magic (the parent may
 * have finished since, or the pointer lie), and its own parent followed in turn: at most
 * LIVE_PARENTS_MAX in all, every address read once.
 */
size_t live_list_add_parents(pid_t pid, struct live_list *l, struct hashmap *at)
{
	unsigned char *node = malloc(l->info.closure_size);
	struct live_closure *v;
	size_t added = 0;

	for (size_t i = 0; i < l->n; i++)
		*(size_t *)hashmap_put(at, l->v[i].addr, 0, NULL) = i;
	if (!node || !(v = realloc(l->v, (l->n + LIVE_PARENTS_MAX) * sizeof(*v)))) {
		free(node);
		return 0;
	}
	l->v = v;
	/* l->n grows as parents are added: theirs are looked at in the same loop. A parent that
	 * could not be read is kept out of at by its index, SIZE_MAX. */
	for (size_t i = 0; i < l->n && added < LIVE_PARENTS_MAX; i++) {
		uint64_t parent = l->v[i].stack ? 0 : l->v[i].parent;
		bool is_new = false;
		size_t *index;

		if (!parent)
			continue;
		index = hashmap_put(at, parent, 0, &is_new);
		if (!is_new)
			continue;
		*index = SIZE_MAX;
		if (proc_mem_read(pid, parent, node, l->info.closure_size) ||
		    !live_magic(&l->info, node))
			continue;
		live_decode(&l->info, node, parent, &l->v[l->n]);
		l->v[l->n].seq = l->n;
		*index = l->n++;
		added++;
	}
	free(node);
	return added;
}

const char *live_status_text(enum live_status st)
{
	switch (st) {
	case LIVE_OK:
		break;
	case LIVE_NO_PROCESS:
		return "the process is gone";
	case LIVE_NOT_PERMITTED:
		return "its memory may not be read";
	case LIVE_NO_LIBCLOSURE:
		return "no libclosure of it describes its live closures";
	case LIVE_NO_LIST:
		return "its libclosure keeps no live list";
	case LIVE_NEWER:
		return "its libclosure describes them in a newer version";
	case LIVE_BAD_DESCRIPTOR:
		return "its libclosure's registry could not be read as one";
	}
	return "";
}

void live_list_free(struct live_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
