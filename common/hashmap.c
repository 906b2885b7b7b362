/* The tool's one hash map (hashmap.h): linear probing, at most half full, no tombstones. */
#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define FIRST_CAP 16

static uint64_t *key_at(const struct hashmap *h, size_t i)
{
	return (uint64_t *)(void *)(h->slots + i * h->stride);
}

static void *value_at(const struct hashmap *h, size_t i)
{
	return h->slots + i * h->stride + 2 * sizeof(uint64_t);
}

/* The slot of key (a, b), or the empty slot where its probe ends. */
static size_t probe(const struct hashmap *h, uint64_t a, uint64_t b)
{
	size_t mask = h->cap - 1, i = (size_t)hashmap_hash(a, b) & mask;

	for (; h->used[i]; i = (i + 1) & mask) {
		const uint64_t *k = key_at(h, i);

		if (k[0] == a && k[1] == b)
			break;
	}
	return i;
}

void hashmap_init(struct hashmap *h, size_t value_size)
{
	memset(h, 0, sizeof(*h));
	h->value_size = value_size;
	/* Keys are two words; values start on a word boundary and the next key after them. */
	h->stride = 2 * sizeof(uint64_t) + (value_size + 7) / 8 * 8;
}

void hashmap_free(struct hashmap *h)
{
	free(h->slots);
	free(h->used);
	hashmap_init(h, h->value_size);
}

/* Twice the slots (calloc checks cap * stride for overflow: too big aborts, never wraps). */
static void grow(struct hashmap *h)
{
	struct hashmap old = *h;

	h->cap = old.cap ? old.cap * 2 : FIRST_CAP;
	h->slots = xcalloc(h->cap, h->stride);
	h->used = xcalloc(h->cap, 1);
	for (size_t i = 0; i < old.cap; i++) {
		const uint64_t *k;
		size_t j;

		if (!old.used[i])
			continue;
		k = key_at(&old, i);
		j = probe(h, k[0], k[1]);
		memcpy(h->slots + j * h->stride, k, h->stride);
		h->used[j] = 1;
	}
	free(old.slots);
	free(old.used);
}

void *hashmap_get(const struct hashmap *h, uint64_t a, uint64_t b)
{
	size_t i;

	if (!h->count)
		return NULL;
	i = probe(h, a, b);
	return h->used[i] ? value_at(h, i) : NULL;
}

void *hashmap_put(struct hashmap *h, uint64_t a, uint64_t b, bool *added)
{
	size_t i;
	uint64_t *k;

	if ((h->count + 1) * 2 > h->cap)
		grow(h);
	i = probe(h, a, b);
	if (added)
		*added = !h->used[i];
	if (h->used[i])
		return value_at(h, i);
	k = key_at(h, i);
	k[0] = a;
	k[1] = b;
	memset(value_at(h, i), 0, h->value_size);
	h->used[i] = 1;
	h->count++;
	return value_at(h, i);
}

bool hashmap_del(struct hashmap *h, uint64_t a, uint64_t b)
{
	size_t mask = h->cap - 1, gap, j;

	if (!h->count || !h->used[gap = probe(h, a, b)])
		return false;
	h->used[gap] = 0;
	h->count--;
	/* Every entry after the gap whose probe passed through it moves into it; an empty slot ends
	 * the run. Lookups then never meet a hole inside a probe. */
	for (j = (gap + 1) & mask; h->used[j]; j = (j + 1) & mask) {
		const uint64_t *k = key_at(h, j);
		size_t home = (size_t)hashmap_hash(k[0], k[1]) & mask;

		if (((j - home) & mask) < ((j - gap) & mask))
			continue; /* its probe starts after the gap */
		memcpy(h->slots + gap * h->stride, k, h->stride);
		h->used[gap] = 1;
		h->used[j] = 0;
		gap = j;
	}
	return true;
}

void *hashmap_next(const struct hashmap *h, size_t *pos, uint64_t *a, uint64_t *b)
{
	for (; *pos < h->cap; ++*pos) {
		const uint64_t *k;

		if (!h->used[*pos])
			continue;
		k = key_at(h, *pos);
		if (a)
			*a = k[0];
		if (b)
			*b = k[1];
		return value_at(h, (*pos)++);
	}
	return NULL;
}
