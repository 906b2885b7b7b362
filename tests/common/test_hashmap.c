/*
 * common/hashmap.c's contract, tested directly:
 * - put adds a zeroed value once, get finds it, del removes it and nothing else;
 * - the table stays between a quarter and a half full as it grows (bounded growth);
 * - keys that all hash to one slot, and runs that wrap around the end of the table, are found
 *   after every delete (the entries after a gap move back into it);
 * - iteration visits every entry once, whatever the order;
 * - random puts, gets and deletes agree with a plain array at every step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "hashmap.h"

/* 12 bytes: the map rounds the slot up, values must still come back whole. */
struct val {
	uint64_t x;
	uint32_t y;
};

static void test_empty(void)
{
	struct hashmap h;
	size_t pos = 0;

	hashmap_init(&h, sizeof(struct val));
	EXPECT(hashmap_get(&h, 1, 2) == NULL, "get on an empty map");
	EXPECT(!hashmap_del(&h, 1, 2), "del on an empty map");
	EXPECT(hashmap_count(&h) == 0, "count %zu", hashmap_count(&h));
	EXPECT(hashmap_next(&h, &pos, NULL, NULL) == NULL, "next on an empty map");
	hashmap_free(&h);
	hashmap_free(&h); /* twice: still empty, nothing freed again */
}

/* Bounded growth: never more than half full, never less than a quarter once past the first size. */
static void check_load(const struct hashmap *h, const char *when)
{
	EXPECT(h->cap >= 2 * h->count, "%s: %zu entries in %zu slots", when, h->count, h->cap);
	EXPECT(h->cap <= 16 || h->cap <= 4 * h->count + 4, "%s: %zu entries in %zu slots", when,
	       h->count, h->cap);
	EXPECT((h->cap & (h->cap - 1)) == 0, "%s: %zu slots, not a power of two", when, h->cap);
}

#define MANY 100000

static void test_many(void)
{
	struct hashmap h;
	bool added;
	size_t pos = 0, seen = 0;
	uint64_t a, b;
	struct val *v;
	unsigned char *visited = calloc(MANY, 1);

	hashmap_init(&h, sizeof(struct val));
	for (uint64_t i = 0; i < MANY; i++) {
		/* Aligned addresses, in a few processes: the keys the model uses. */
		v = hashmap_put(&h, 0x7f0000001000 + i * 64, i % 7, &added);
		EXPECT(added, "key %llu not added", (unsigned long long)i);
		EXPECT(v->x == 0 && v->y == 0, "key %llu: value not zeroed", (unsigned long long)i);
		v->x = i * 3;
		v->y = (uint32_t)i ^ 0x5a5a5a5au;
		if (i % 1000 == 0)
			check_load(&h, "growing");
	}
	EXPECT(hashmap_count(&h) == MANY, "count %zu", hashmap_count(&h));
	EXPECT(h.cap == 262144, "%zu slots for %d entries", h.cap, MANY);
	for (uint64_t i = 0; i < MANY; i++) {
		v = hashmap_get(&h, 0x7f0000001000 + i * 64, i % 7);
		EXPECT(v && v->x == i * 3 && v->y == ((uint32_t)i ^ 0x5a5a5a5au), "key %llu",
		       (unsigned long long)i);
	}
	/* The same address in another process is another key. */
	EXPECT(hashmap_get(&h, 0x7f0000001000, 1) == NULL, "(addr, pid 1) found");
	v = hashmap_put(&h, 0x7f0000001000 + 5 * 64, 5, &added);
	EXPECT(!added && v->x == 15, "put of a present key: added %d, x %llu", added,
	       (unsigned long long)v->x);
	EXPECT(hashmap_count(&h) == MANY, "count %zu after a put of a present key",
	       hashmap_count(&h));

	while ((v = hashmap_next(&h, &pos, &a, &b))) {
		uint64_t i = (a - 0x7f0000001000) / 64;

		EXPECT(i < MANY && b == i % 7 && v->x == i * 3 && !visited[i],
		       "iteration: key %llu", (unsigned long long)i);
		if (i < MANY)
			visited[i] = 1;
		seen++;
	}
	EXPECT(seen == MANY, "iteration saw %zu of %d", seen, MANY);

	for (uint64_t i = 0; i < MANY; i += 2)
		EXPECT(hashmap_del(&h, 0x7f0000001000 + i * 64, i % 7), "del %llu",
		       (unsigned long long)i);
	EXPECT(!hashmap_del(&h, 0x7f0000001000, 0), "second del of key 0 succeeded");
	EXPECT(hashmap_count(&h) == MANY / 2, "count %zu after deleting half", hashmap_count(&h));
	for (uint64_t i = 0; i < MANY; i++) {
		v = hashmap_get(&h, 0x7f0000001000 + i * 64, i % 7);
		if (i % 2)
			EXPECT(v && v->x == i * 3, "key %llu lost by the deletes",
			       (unsigned long long)i);
		else
			EXPECT(!v, "deleted key %llu found", (unsigned long long)i);
	}
	v = hashmap_put(&h, 0x7f0000001000, 0, &added);
	EXPECT(added && v->x == 0 && v->y == 0, "a deleted key comes back zeroed");
	pos = seen = 0;
	while (hashmap_next(&h, &pos, NULL, NULL))
		seen++;
	EXPECT(seen == MANY / 2 + 1, "iteration after deletes saw %zu", seen);

	hashmap_free(&h);
	EXPECT(hashmap_count(&h) == 0 && hashmap_get(&h, 0x7f0000001040, 1) == NULL,
	       "a freed map is empty");
	v = hashmap_put(&h, 9, 9, &added);
	EXPECT(added && hashmap_count(&h) == 1, "a freed map is usable again");
	hashmap_free(&h);
	free(visited);
}

/* n keys (a, b fixed) whose hashes end in the 12 bits low: one home slot in any table of up to
 * 4096 slots. */
static size_t colliding(uint64_t *keys, size_t n, uint64_t low, uint64_t start)
{
	size_t k = 0;

	for (uint64_t a = start; k < n; a++)
		if ((hashmap_hash(a, 42) & 0xfff) == low)
			keys[k++] = a;
	return k;
}

#define GROUP 300

static void test_collisions(void)
{
	uint64_t keys[2 * GROUP];
	unsigned char gone[2 * GROUP] = {0};
	struct hashmap h;
	uint64_t r = 12345;

	/* One group at the last slot (its run wraps round to the start), one at slot 0: the runs
	 * meet, so a delete must tell from each entry's home whether it may move back. */
	colliding(keys, GROUP, 0xfff, 1);
	colliding(keys + GROUP, GROUP, 0, 1);
	hashmap_init(&h, sizeof(uint64_t));
	for (size_t i = 0; i < 2 * GROUP; i++)
		*(uint64_t *)hashmap_put(&h, keys[i], 42, NULL) = i;
	EXPECT(h.cap == 2048, "%zu slots", h.cap);
	EXPECT(hashmap_count(&h) == 2 * GROUP, "count %zu", hashmap_count(&h));
	for (size_t d = 0; d < 2 * GROUP; d++) {
		size_t victim;

		do {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			victim = (size_t)(r >> 33) % (2 * GROUP);
		} while (gone[victim]);
		EXPECT(hashmap_del(&h, keys[victim], 42), "del of colliding key %zu", victim);
		gone[victim] = 1;
		for (size_t i = 0; i < 2 * GROUP; i++) {
			const uint64_t *v = hashmap_get(&h, keys[i], 42);

			if (gone[i])
				EXPECT(!v, "after %zu deletes: deleted key %zu found", d + 1, i);
			else
				EXPECT(v && *v == i, "after %zu deletes: key %zu lost", d + 1, i);
		}
		if (check_failures)
			break;
	}
	EXPECT(hashmap_count(&h) == 0, "count %zu after deleting all", hashmap_count(&h));
	hashmap_free(&h);
}

/* Random operations on keys of a small range, against a plain array. */
static void test_against_array(void)
{
	enum { RANGE = 3000, OPS = 400000 };
	static uint32_t ref[RANGE][2]; /* value + 1; 0: absent */
	struct hashmap h;
	size_t count = 0;
	uint64_t r = 987654321;

	hashmap_init(&h, sizeof(uint32_t));
	for (uint32_t op = 1; op <= OPS; op++) {
		uint64_t a, b;
		uint32_t *v;
		bool added;

		r = r * 6364136223846793005ull + 1442695040888963407ull;
		a = (r >> 20) % RANGE;
		b = (r >> 40) & 1;
		switch ((r >> 50) % 3) {
		case 0:
			v = hashmap_put(&h, a * 16, b, &added);
			EXPECT(added == !ref[a][b], "op %u: put added %d", op, added);
			EXPECT(added ? *v == 0 : *v == ref[a][b] - 1, "op %u: put's value", op);
			*v = op;
			count += !ref[a][b];
			ref[a][b] = op + 1;
			break;
		case 1:
			EXPECT(hashmap_del(&h, a * 16, b) == !!ref[a][b], "op %u: del", op);
			count -= !!ref[a][b];
			ref[a][b] = 0;
			break;
		default:
			v = hashmap_get(&h, a * 16, b);
			EXPECT(ref[a][b] ? v && *v == ref[a][b] - 1 : !v, "op %u: get", op);
		}
		EXPECT(hashmap_count(&h) == count, "op %u: count %zu, expected %zu", op,
		       hashmap_count(&h), count);
		if (check_failures)
			break;
	}
	EXPECT(h.cap >= 2 * hashmap_count(&h), "after random operations: %zu entries in %zu slots",
	       hashmap_count(&h), h.cap);
	hashmap_free(&h);
}

int main(void)
{
	test_empty();
	test_many();
	test_collisions();
	test_against_array();
	if (check_failures) {
		fprintf(stderr, "%d check_failures\n", check_failures);
		return 1;
	}
	printf("hashmap: all checks passed\n");
	return 0;
}
