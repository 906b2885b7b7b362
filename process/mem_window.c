/* Reading another process's memory a window at a time: see mem_window.h. */
#include <stdlib.h>
#include <string.h>

#include "mem_window.h"
#include "proc_mem.h"

#define WINDOW_BYTES 16384u /* four pages: the nodes of a list allocated together */
#define WINDOWS	     16u    /* the lists' nodes come from a few places of the heap at once */

struct window {
	uint64_t base;
	bool valid;
	unsigned char bytes[WINDOW_BYTES];
};

struct mem_windows {
	pid_t pid;
	struct window w[WINDOWS];
};

struct mem_windows *mem_windows_new(pid_t pid)
{
	struct mem_windows *w = calloc(1, sizeof(*w));

	if (w)
		w->pid = pid;
	return w;
}

void mem_windows_free(struct mem_windows *w)
{
	free(w);
}

void mem_windows_forget(struct mem_windows *w)
{
	for (unsigned i = 0; i < WINDOWS; i++)
		w->w[i].valid = false;
}

int mem_windows_read(struct mem_windows *w, uint64_t addr, void *buf, size_t len, bool fresh)
{
	uint64_t base = addr & ~(uint64_t)(WINDOW_BYTES - 1);
	struct window *win = &w->w[(base / WINDOW_BYTES) % WINDOWS];

	/* Across a window's end, or larger than makes sense to keep: read as asked. */
	if (len > WINDOW_BYTES / 4 || addr - base + len > WINDOW_BYTES ||
	    base + WINDOW_BYTES < base)
		return proc_mem_read(w->pid, addr, buf, len);
	if (fresh || !win->valid || win->base != base) {
		win->valid = false;
		if (proc_mem_read(w->pid, base, win->bytes, WINDOW_BYTES))
			return proc_mem_read(w->pid, addr, buf, len); /* part of it unmapped */
		win->base = base;
		win->valid = true;
	}
	memcpy(buf, win->bytes + (addr - base), len);
	return 0;
}
