/*
 * The one hash map of the tool (viz, the recorder, the commands): keys of two 64-bit words (an
 * address with 0; a pid and an address; an init site and a continuation; a pointer with 0), values
 * of one fixed size kept in the table itself, so a million addresses cost no allocation each.
 *
 * Open addressing with linear probing, at most half full (the table doubles before that), and a
 * delete moves the entries after it back into the gap, so no tombstones pile up. A value's pointer
 * holds until the next hashmap_put or hashmap_del (both may move entries). Iteration goes in table
 * order, which is no order at all: callers that print sort first. Out of memory aborts (xalloc.c).
 */
#ifndef CLOSURETRACE_HASHMAP_H
#define CLOSURETRACE_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap {
	unsigned char *slots; /* cap slots of stride bytes: the key's two words, then the value */
	unsigned char *used;  /* cap bytes: 1 where a slot holds an entry */
	size_t cap, count;    /* cap: 0 or a power of two */
	size_t value_size, stride;
};

/* An empty map whose values are value_size bytes; nothing is allocated until the first put. */
void hashmap_init(struct hashmap *h, size_t value_size);
/* Frees the table; the map is empty and can be used again. */
void hashmap_free(struct hashmap *h);

/* The value of key (a, b), borrowed; NULL when absent. */
void *hashmap_get(const struct hashmap *h, uint64_t a, uint64_t b);
/* The value of key (a, b), added zeroed when absent (*added says which, when added is not NULL). */
void *hashmap_put(struct hashmap *h, uint64_t a, uint64_t b, bool *added);
/* Removes key (a, b); false when it was absent. */
bool hashmap_del(struct hashmap *h, uint64_t a, uint64_t b);
static inline size_t hashmap_count(const struct hashmap *h)
{
	return h->count;
}

/*
 * Iteration: start with *pos = 0; each call returns the next value (borrowed) and its key in *a,
 * *b (either may be NULL), or NULL after the last. No put or delete in between.
 */
void *hashmap_next(const struct hashmap *h, size_t *pos, uint64_t *a, uint64_t *b);

/* The hash of a key; its low bits choose the slot (told so that a test can make collisions). The
 * second word spread by the golden ratio, then MurmurHash3's finaliser: aligned addresses (low
 * bits all zero) still fill every slot. */
static inline uint64_t hashmap_hash(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

#endif
