/* What would wake a waitlist: see wakers.h. */
#include "wakers.h"

#include <string.h>

void wakers_note(struct model *m, struct wakers *w, const struct model_life *l)
{
	const struct model_sym *s;
	unsigned k = 0;

	if (!l->wake_ip || l->waitlist != w->waitlist || l->pid != w->pid)
		return;
	s = model_sym(m, l->wake_ip);
	if (!s || !s->func)
		return;
	while (k < w->n && strcmp(w->fn[k], s->func))
		k++;
	if (k == w->n && k < WAKERS_MAX)
		w->fn[w->n++] = s->func;
}

void wakers_collect(struct model *m, struct wakers *w, int64_t pid, uint64_t waitlist)
{
	*w = (struct wakers){.pid = pid, .waitlist = waitlist};
	for (const struct model_life *l = model_lives(m); l; l = l->next)
		wakers_note(m, w, l);
}

bool wakers_would_wake(struct model *m, const struct wakers *w, const struct model_life *l)
{
	const struct model_sym *s = l->fn && l->pid == w->pid ? model_sym(m, l->fn) : NULL;

	for (unsigned k = 0; s && s->func && k < w->n; k++)
		if (!strcmp(w->fn[k], s->func))
			return true;
	return false;
}
