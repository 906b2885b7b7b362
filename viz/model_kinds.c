/* Kinds (init site, first continuation): lifetimes of their finished closures, summed ledgers. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

#define HIST_SUB     32
#define HIST_BUCKETS (HIST_SUB * 60)

struct model_kind *model_kind_of(struct model *m, uint64_t init_ip, uint64_t fn)
{
	bool added;
	struct model_kind **k = hashmap_put(&m->kind_index, init_ip, fn, &added);

	if (added) {
		*k = xcalloc(1, sizeof(**k));
		(*k)->init_ip = init_ip;
		(*k)->fn = fn;
		(*k)->next = m->kinds;
		m->kinds = *k;
	}
	return *k;
}

static unsigned hist_index(uint64_t v)
{
	unsigned e, shift;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	shift = e - 5;
	return (shift + 1) * HIST_SUB + (unsigned)((v >> shift) - HIST_SUB);
}

/* The middle of a bucket. */
static uint64_t hist_value(unsigned idx)
{
	unsigned shift;

	if (idx < HIST_SUB)
		return idx;
	shift = idx / HIST_SUB - 1;
	return ((uint64_t)(idx % HIST_SUB + HIST_SUB) << shift) + ((1ULL << shift) >> 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t model_kind_percentile(const struct model_kind *k, double p)
{
	uint64_t n = k->finished, rank, seen = 0;

	if (!n)
		return 0;
	/* Nearest rank: the smallest value with at least p% of the values at or below it. */
	rank = (uint64_t)((p / 100.0) * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	if (n <= MODEL_EXACT_SAMPLES) {
		uint64_t sorted[MODEL_EXACT_SAMPLES];

		memcpy(sorted, k->samples, n * sizeof(sorted[0]));
		qsort(sorted, n, sizeof(sorted[0]), cmp_u64);
		return sorted[rank - 1];
	}
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += k->hist[i];
		/* A bucket's middle may lie above the largest value in it: never past the max. */
		if (seen >= rank)
			return rank == n || hist_value(i) > k->max_ns ? k->max_ns : hist_value(i);
	}
	return k->max_ns;
}

struct model_site *model_site_in(struct model_site **sites, unsigned *n, unsigned *cap, uint64_t ip)
{
	for (unsigned i = 0; i < *n; i++)
		if ((*sites)[i].ip == ip)
			return &(*sites)[i];
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1; /* most lives have one or two sites */
		*sites = xrealloc(*sites, *cap * sizeof(**sites));
	}
	(*sites)[*n] = (struct model_site){.ip = ip};
	return &(*sites)[(*n)++];
}

void model_kind_add_lifetime(struct model_kind *k, uint64_t ns)
{
	if (k->finished < MODEL_EXACT_SAMPLES)
		k->samples[k->finished] = ns;
	if (k->finished == MODEL_EXACT_SAMPLES) {
		k->hist = xcalloc(HIST_BUCKETS, sizeof(*k->hist));
		for (unsigned i = 0; i < MODEL_EXACT_SAMPLES; i++)
			k->hist[hist_index(k->samples[i])]++;
	}
	if (k->hist)
		k->hist[hist_index(ns)]++;
	k->finished++;
	if (ns > k->max_ns)
		k->max_ns = ns;
}

struct model_kind *model_kind_copy(const struct model_kind *k)
{
	struct model_kind *c = xcalloc(1, sizeof(*c));

	memcpy(c->samples, k->samples, sizeof(c->samples));
	c->finished = k->finished;
	c->max_ns = k->max_ns;
	if (k->hist) {
		c->hist = xcalloc(HIST_BUCKETS, sizeof(*c->hist));
		memcpy(c->hist, k->hist, HIST_BUCKETS * sizeof(*c->hist));
	}
	return c;
}

void model_kind_free(struct model_kind *k)
{
	if (!k)
		return;
	free(k->hist);
	free(k->sites);
	free(k);
}

void model_kind_add_finished(struct model *m, struct model_life *l)
{
	struct model_kind *k = model_kind_of(m, l->init_ip, l->first_fn);
	uint64_t life = l->end_ts >= l->start_ts ? (uint64_t)l->end_ts - (uint64_t)l->start_ts : 0;

	l->kind = k;
	k->total++;
	model_kind_add_lifetime(k, life);
	for (unsigned i = 0; i < l->nsites; i++) {
		struct model_site *s =
			model_site_in(&k->sites, &k->nsites, &k->capsites, l->sites[i].ip);

		s->taken += l->sites[i].taken;
		s->put += l->sites[i].put;
		s->child_taken += l->sites[i].child_taken;
		s->child_put += l->sites[i].child_put;
	}
}
