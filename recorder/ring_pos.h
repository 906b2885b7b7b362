/*
 * A BPF ring buffer's consumer and producer positions, from a read-only mapping of its first two
 * pages (libbpf 1.1 has no accessor): how far behind its reader is. Equal positions: empty, no
 * record being written either (a reserved record moves the producer).
 */
#ifndef CLOSURETRACE_RING_POS_H
#define CLOSURETRACE_RING_POS_H

#include <stdint.h>

/* Maps the positions of the ring buffer map map_fd; NULL when it cannot. */
const volatile uint64_t *ring_pos_map(int map_fd);

void ring_pos_read(const volatile uint64_t *pos, uint64_t *consumer, uint64_t *producer);

void ring_pos_unmap(const volatile uint64_t *pos);

#endif
