/*
 * The user stacks of call sites (--stacks, docs/trace-format.md "frames"): the first stack seen
 * at each init or get site, kept per site, not per life, so that memory follows the program's
 * call sites, not its closures; and their text, one frame a line, as LSan shows an allocation's.
 */
#include "model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One site's stack: n addresses, innermost first. */
struct site_stack {
	unsigned n;
	uint64_t ips[];
};

void model_on_frames(void *ctx, const struct trace_event *ev, const uint64_t *ips, unsigned n)
{
	struct model *m = ctx;
	struct site_stack **slot, *st;
	bool added;

	if (!ev->ip || !n || n > TRACE_FRAMES_MAX)
		return;
	slot = hashmap_put(&m->stacks, ev->ip, 0, &added);
	if (!added)
		return; /* the first stack seen at the site stands for it */
	st = xrealloc(NULL, sizeof(*st) + n * sizeof(*ips));
	st->n = n;
	memcpy(st->ips, ips, n * sizeof(*ips));
	*slot = st;
}

void model_stacks_free(struct model *m)
{
	struct site_stack **st;
	size_t pos = 0;

	while ((st = hashmap_next(&m->stacks, &pos, NULL, NULL)))
		free(*st);
	hashmap_free(&m->stacks);
}

const uint64_t *model_site_frames(struct model *m, uint64_t site, unsigned *n)
{
	struct site_stack *const *st = site ? hashmap_get(&m->stacks, site, 0) : NULL;

	*n = st ? (*st)->n : 0;
	return st ? (*st)->ips : NULL;
}

const char *model_frame_text(struct model *m, uint64_t ip, char *buf, size_t len)
{
	char site[512], fn[256];

	snprintf(buf, len, "%s (%s)", model_site_text(m, ip, site, sizeof(site)),
		 model_func_text(m, ip, fn, sizeof(fn)));
	return buf;
}

void model_print_site_frames(struct model *m, FILE *out, uint64_t site, const char *indent)
{
	unsigned n;
	const uint64_t *ips = model_site_frames(m, site, &n);
	char text[800];

	for (unsigned i = 0; i < n; i++)
		fprintf(out, "%s#%u %s\n", indent, i,
			model_frame_text(m, ips[i], text, sizeof(text)));
}
