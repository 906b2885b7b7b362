/* Items from many sources in time order: see time_order.h. */
#include <stdlib.h>
#include <string.h>

#include "time_order.h"

static bool key_earlier(const void *a, const void *b)
{
	const struct time_key *x = a, *y = b;

	return x->ts != y->ts ? x->ts < y->ts : x->order < y->order;
}

static unsigned char *at(const struct time_order *m, const struct time_order_source *s, uint32_t i)
{
	return s->v + (size_t)((s->head + i) & (s->cap - 1)) * m->size;
}

static unsigned char *late_at(const struct time_order *m, size_t i)
{
	return m->late + i * m->size;
}

static bool source_earlier(const struct time_order *m, uint32_t a, uint32_t b)
{
	return key_earlier(at(m, &m->sources[a], 0), at(m, &m->sources[b], 0));
}

static void sift_up(struct time_order *m, uint32_t i)
{
	uint32_t src = m->heap[i];

	for (; i && source_earlier(m, src, m->heap[(i - 1) / 2]); i = (i - 1) / 2)
		m->heap[i] = m->heap[(i - 1) / 2];
	m->heap[i] = src;
}

static void sift_down(struct time_order *m, uint32_t i)
{
	uint32_t src = m->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= m->n_heap)
			break;
		if (c + 1 < m->n_heap && source_earlier(m, m->heap[c + 1], m->heap[c]))
			c++;
		if (!source_earlier(m, m->heap[c], src))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	m->heap[i] = src;
}

void time_order_init(struct time_order *m, size_t size)
{
	*m = (struct time_order){.size = size};
}

int64_t time_order_source(struct time_order *m)
{
	if (m->n_sources == m->sources_cap) {
		uint32_t cap = m->sources_cap ? m->sources_cap * 2 : 16;
		struct time_order_source *v = realloc(m->sources, cap * sizeof(*v));
		uint32_t *heap = v ? realloc(m->heap, cap * sizeof(*heap)) : NULL;

		if (v)
			m->sources = v;
		if (!heap)
			return -1;
		m->heap = heap;
		m->sources_cap = cap;
	}
	m->sources[m->n_sources] = (struct time_order_source){0};
	return m->n_sources++;
}

/* A source's first ring (most sources hold few at a time), and the late heap's. */
#define RING_MIN 16u
#define LATE_MIN 1024u

/* Moves s's items to a ring of cap (a power of two, at least len), from index 0. */
static bool resize(struct time_order *m, struct time_order_source *s, uint32_t cap)
{
	unsigned char *v = cap ? malloc((size_t)cap * m->size) : NULL;

	if (cap && !v)
		return false;
	for (uint32_t i = 0; i < s->len; i++)
		memcpy(v + (size_t)i * m->size, at(m, s, i), m->size);
	free(s->v);
	m->bytes = m->bytes + (size_t)cap * m->size - (size_t)s->cap * m->size;
	s->v = v;
	s->head = 0;
	s->cap = cap;
	return true;
}

/*
 * A ring past RING_MIN halves when a quarter full and goes when empty: a burst held by many
 * sources at once (thousands of threads' buffers waiting for one late frontier) would otherwise
 * keep each ring at its largest for good, and the room would not follow what is held.
 */
static void shrink(struct time_order *m, struct time_order_source *s)
{
	if (s->cap <= RING_MIN || s->len > s->cap / 4)
		return;
	if (!resize(m, s, s->len ? s->cap / 2 : 0))
		return; /* out of memory: the larger ring stays */
}

/* The late heap: an item earlier than the latest of its source. */
static bool push_late(struct time_order *m, const void *item)
{
	size_t i;

	if (m->n_late == m->late_cap) {
		size_t cap = m->late_cap ? m->late_cap * 2 : LATE_MIN;
		unsigned char *v = realloc(m->late, cap * m->size);

		if (!v)
			return false;
		m->bytes += (cap - m->late_cap) * m->size;
		m->late = v;
		m->late_cap = cap;
	}
	for (i = m->n_late++; i && key_earlier(item, late_at(m, (i - 1) / 2)); i = (i - 1) / 2)
		memcpy(late_at(m, i), late_at(m, (i - 1) / 2), m->size);
	memcpy(late_at(m, i), item, m->size);
	return true;
}

/* The late heap halves when a quarter full, as a ring does. */
static void shrink_late(struct time_order *m)
{
	size_t cap = m->late_cap / 2;
	unsigned char *v;

	if (m->late_cap <= LATE_MIN || m->n_late > m->late_cap / 4)
		return;
	if (!(v = realloc(m->late, cap * m->size)))
		return;
	m->bytes -= (m->late_cap - cap) * m->size;
	m->late = v;
	m->late_cap = cap;
}

static void pop_late(struct time_order *m)
{
	/* The last item stays at index n_late while the hole sinks: no child reaches it. */
	const unsigned char *last = late_at(m, --m->n_late);
	size_t i = 0;

	if (!m->n_late)
		return;
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= m->n_late)
			break;
		if (c + 1 < m->n_late && key_earlier(late_at(m, c + 1), late_at(m, c)))
			c++;
		if (!key_earlier(late_at(m, c), last))
			break;
		memcpy(late_at(m, i), late_at(m, c), m->size);
		i = c;
	}
	memcpy(late_at(m, i), last, m->size);
}

bool time_order_push(struct time_order *m, uint32_t src, const void *item)
{
	struct time_order_source *s = &m->sources[src];

	if (s->len && key_earlier(item, at(m, s, s->len - 1))) {
		if (!push_late(m, item))
			return false;
		m->held++;
		return true;
	}
	if (s->len == s->cap && !resize(m, s, s->cap ? s->cap * 2 : RING_MIN))
		return false;
	memcpy(at(m, s, s->len++), item, m->size);
	m->held++;
	if (s->len > 1)
		return true; /* the source's earliest is unchanged */
	/* It was empty: it joins the heap (a source's earliest changes only when it leaves). */
	m->heap[m->n_heap++] = src;
	sift_up(m, m->n_heap - 1);
	return true;
}

/* The source whose earliest item is the earliest, or NULL: none, or a late one is earlier. */
static struct time_order_source *first_source(const struct time_order *m)
{
	struct time_order_source *s = m->n_heap ? &m->sources[m->heap[0]] : NULL;

	if (s && m->n_late && key_earlier(m->late, at(m, s, 0)))
		return NULL;
	return s;
}

const void *time_order_first(const struct time_order *m)
{
	struct time_order_source *s = first_source(m);

	return s ? at(m, s, 0) : m->n_late ? m->late : NULL;
}

void time_order_pop(struct time_order *m)
{
	struct time_order_source *s = first_source(m);

	m->held--;
	if (!s) {
		pop_late(m);
		shrink_late(m);
		return;
	}
	s->head = (s->head + 1) & (s->cap - 1);
	s->len--;
	shrink(m, s);
	if (!s->len) {
		if (--m->n_heap) {
			m->heap[0] = m->heap[m->n_heap];
			sift_down(m, 0);
		}
		return;
	}
	sift_down(m, 0);
}

void time_order_free(struct time_order *m)
{
	for (uint32_t i = 0; i < m->n_sources; i++)
		free(m->sources[i].v);
	free(m->sources);
	free(m->heap);
	free(m->late);
	*m = (struct time_order){.size = m->size};
}
