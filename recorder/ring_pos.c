/* A ring buffer's positions: see ring_pos.h. */
#include <sys/mman.h>
#include <unistd.h>

#include "ring_pos.h"

const volatile uint64_t *ring_pos_map(int map_fd)
{
	void *at = map_fd < 0 ? MAP_FAILED
			      : mmap(NULL, 2 * sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, map_fd,
				     0);

	return at == MAP_FAILED ? NULL : at;
}

void ring_pos_read(const volatile uint64_t *pos, uint64_t *consumer, uint64_t *producer)
{
	/* The consumer's page first, the producer's on the next page. */
	*consumer = __atomic_load_n(&pos[0], __ATOMIC_ACQUIRE);
	*producer =
		__atomic_load_n(&pos[sysconf(_SC_PAGESIZE) / sizeof(uint64_t)], __ATOMIC_ACQUIRE);
}

void ring_pos_unmap(const volatile uint64_t *pos)
{
	if (pos)
		munmap((void *)pos, 2 * sysconf(_SC_PAGESIZE));
}
