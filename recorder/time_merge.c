/* Events from many sources in time order: see time_merge.h. */
#include <stdlib.h>
#include <string.h>

#include "time_merge.h"

static bool item_earlier(const struct merge_item *a, const struct merge_item *b)
{
	return a->e.ts != b->e.ts ? a->e.ts < b->e.ts : a->order < b->order;
}

static struct merge_item *at(struct merge_source *s, uint32_t i)
{
	return &s->v[(s->head + i) & (s->cap - 1)];
}

static bool source_earlier(struct time_merge *m, uint32_t a, uint32_t b)
{
	return item_earlier(at(&m->sources[a], 0), at(&m->sources[b], 0));
}

static void sift_up(struct time_merge *m, uint32_t i)
{
	uint32_t src = m->heap[i];

	for (; i && source_earlier(m, src, m->heap[(i - 1) / 2]); i = (i - 1) / 2)
		m->heap[i] = m->heap[(i - 1) / 2];
	m->heap[i] = src;
}

static void sift_down(struct time_merge *m, uint32_t i)
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

int64_t time_merge_source(struct time_merge *m)
{
	if (m->n_sources == m->sources_cap) {
		uint32_t cap = m->sources_cap ? m->sources_cap * 2 : 16;
		struct merge_source *v = realloc(m->sources, cap * sizeof(*v));
		uint32_t *heap = v ? realloc(m->heap, cap * sizeof(*heap)) : NULL;

		if (v)
			m->sources = v;
		if (!heap)
			return -1;
		m->heap = heap;
		m->sources_cap = cap;
	}
	m->sources[m->n_sources] = (struct merge_source){0};
	return m->n_sources++;
}

/* Doubles s's ring (a power of two), its items from index 0. */
static bool grow(struct merge_source *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : 16; /* most streams hold few at a time */
	struct merge_item *v = malloc(cap * sizeof(*v));

	if (!v)
		return false;
	for (uint32_t i = 0; i < s->len; i++)
		v[i] = *at(s, i);
	free(s->v);
	s->v = v;
	s->head = 0;
	s->cap = cap;
	return true;
}

/* The late heap: an event earlier than the latest of its source. */
static bool push_late(struct time_merge *m, const struct merge_item *it)
{
	size_t i;

	if (m->n_late == m->late_cap) {
		size_t cap = m->late_cap ? m->late_cap * 2 : 1024;
		struct merge_item *v = realloc(m->late, cap * sizeof(*v));

		if (!v)
			return false;
		m->late = v;
		m->late_cap = cap;
	}
	for (i = m->n_late++; i && item_earlier(it, &m->late[(i - 1) / 2]); i = (i - 1) / 2)
		m->late[i] = m->late[(i - 1) / 2];
	m->late[i] = *it;
	return true;
}

static void pop_late(struct time_merge *m)
{
	struct merge_item last = m->late[--m->n_late];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= m->n_late)
			break;
		if (c + 1 < m->n_late && item_earlier(&m->late[c + 1], &m->late[c]))
			c++;
		if (!item_earlier(&m->late[c], &last))
			break;
		m->late[i] = m->late[c];
		i = c;
	}
	if (m->n_late)
		m->late[i] = last;
}

bool time_merge_push(struct time_merge *m, uint32_t src, const struct merge_item *it)
{
	struct merge_source *s = &m->sources[src];

	if (s->len && item_earlier(it, at(s, s->len - 1))) {
		if (!push_late(m, it))
			return false;
		m->held++;
		return true;
	}
	if (s->len == s->cap && !grow(s))
		return false;
	*at(s, s->len++) = *it;
	m->held++;
	if (s->len > 1)
		return true; /* the source's earliest is unchanged */
	/* It was empty: it joins the heap (a source's earliest changes only when it leaves). */
	m->heap[m->n_heap++] = src;
	sift_up(m, m->n_heap - 1);
	return true;
}

/* The source whose earliest event is the earliest, or NULL: none, or a late one is earlier. */
static struct merge_source *first_source(const struct time_merge *m)
{
	struct merge_source *s = m->n_heap ? &m->sources[m->heap[0]] : NULL;

	if (s && m->n_late && item_earlier(&m->late[0], &s->v[s->head]))
		return NULL;
	return s;
}

const struct merge_item *time_merge_first(const struct time_merge *m)
{
	struct merge_source *s = first_source(m);

	return s ? &s->v[s->head] : m->n_late ? &m->late[0] : NULL;
}

void time_merge_pop(struct time_merge *m)
{
	struct merge_source *s = first_source(m);

	m->held--;
	if (!s) {
		pop_late(m);
		return;
	}
	s->head = (s->head + 1) & (s->cap - 1);
	s->len--;
	if (!s->len) {
		if (--m->n_heap) {
			m->heap[0] = m->heap[m->n_heap];
			sift_down(m, 0);
		}
		return;
	}
	sift_down(m, 0);
}

void time_merge_free(struct time_merge *m)
{
	for (uint32_t i = 0; i < m->n_sources; i++)
		free(m->sources[i].v);
	free(m->sources);
	free(m->heap);
	free(m->late);
	memset(m, 0, sizeof(*m));
}
