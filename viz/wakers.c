/* What would wake a waitlist: see wakers.h. */
#include "wakers.h"

#include <string.h>

void wakers_collect(struct model *m, struct wakers *w, int64_t pid, uint64_t waitlist)
{
	unsigned n;
	const uint64_t *ip = model_wake_sites(m, pid, waitlist, &n);

	*w = (struct wakers){.pid = pid, .waitlist = waitlist};
	for (unsigned i = 0; i < n; i++) {
		const struct model_sym *s = model_sym(m, ip[i]);
		unsigned k = 0;

		if (!s || !s->func)
			continue;
		while (k < w->n && strcmp(w->fn[k], s->func))
			k++;
		if (k == w->n && k < WAKERS_MAX)
			w->fn[w->n++] = s->func;
	}
}

bool wakers_would_wake(struct model *m, const struct wakers *w, const struct model_life *l)
{
	const struct model_sym *s = l->fn && l->pid == w->pid ? model_sym(m, l->fn) : NULL;

	for (unsigned k = 0; s && s->func && k < w->n; k++)
		if (!strcmp(w->fn[k], s->func))
			return true;
	return false;
}
