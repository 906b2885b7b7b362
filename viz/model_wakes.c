/* A waitlist's wake-up sites (model.h, model_wake_sites): what would wake it (wakers.h). */
#include "model_internal.h"

/* A waitlist's wake-up sites, kept when the closures woken are forgotten (check). */
void model_note_wake(struct model *m, int64_t pid, const struct trace_event *ev)
{
	bool added;
	struct model_wakes *w = hashmap_put(&m->wakes, ev->waitlist, (uint64_t)pid, &added);
	unsigned i = 0;

	if (!w)
		return;
	while (i < w->n && w->ip[i] != ev->ip)
		i++;
	if (i == w->n && i < MODEL_WAKE_SITES)
		w->ip[w->n++] = ev->ip;
}

const uint64_t *model_wake_sites(struct model *m, int64_t pid, uint64_t waitlist, unsigned *n)
{
	const struct model_wakes *w = hashmap_get(&m->wakes, waitlist, (uint64_t)pid);

	*n = w ? w->n : 0;
	return w ? w->ip : NULL;
}
