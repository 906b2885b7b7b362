/* A process's writable mappings: see proc_maps.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proc_maps.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One more range at the end of m, its room doubled when full (at most PROC_MAPS_MAX). */
static bool add_range(struct proc_maps *m, size_t *cap, uint64_t start, uint64_t end)
{
	if (m->n == *cap) {
		size_t want = *cap ? *cap * 2 : 256;
		struct proc_range *v;

		if (want > PROC_MAPS_MAX || !(v = realloc(m->v, want * sizeof(*v))))
			return false;
		m->v = v;
		*cap = want;
	}
	m->v[m->n++] = (struct proc_range){start, end};
	return true;
}

int proc_maps_read(struct proc_maps *m, pid_t pid)
{
	char path[64], line[4096 + 128], perms[8];
	unsigned long long start, end;
	size_t cap = 0;
	FILE *f;

	proc_maps_free(m);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	/* The kernel lists mappings in address order, without overlaps: kept as listed, and a line
	 * that is not in that order (none is) is passed over, so that the ranges stay sorted. */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || end <= start ||
		    perms[0] != 'r' || perms[1] != 'w' || (m->n && start < m->v[m->n - 1].end))
			continue;
		if (m->n && m->v[m->n - 1].end == start)
			m->v[m->n - 1].end =
				end; /* one range over neighbours: a closure may span two */
		else if (!add_range(m, &cap, start, end))
			break;
	}
	fclose(f);
	m->read_ns = now_ns();
	return 0;
}

bool proc_maps_holds(const struct proc_maps *m, uint64_t addr, uint64_t len)
{
	size_t lo = 0, hi = m->n;

	if (addr + len < addr)
		return false;
	/* The last range starting at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr + len <= m->v[lo - 1].end;
}

void proc_maps_free(struct proc_maps *m)
{
	free(m->v);
	*m = (struct proc_maps){0};
}
