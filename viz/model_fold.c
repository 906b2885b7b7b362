/*
 * Finished closures folded away (model.h, model_fold_finished): a model that keeps finished lives
 * for the picture keeps a sample of each kind under each parent, and folds the rest into counts
 * and lifetimes, so that its memory follows what is alive, not every closure the trace ever had.
 */
#include "model_internal.h"

#include <stdlib.h>

void model_fold_finished(struct model *m, unsigned keep)
{
	m->fold_keep = keep;
}

struct model_fold *model_folds(struct model *m, const struct model_life *parent)
{
	return parent ? parent->folds : m->top_folds;
}

void model_folds_free(struct model_fold *f)
{
	while (f) {
		struct model_fold *next = f->next;

		model_kind_free(f->lifetimes);
		free(f);
		f = next;
	}
}

/* The fold of kind k in the list at *list, made when new. */
static struct model_fold *fold_of(struct model_fold **list, const struct model_kind *k)
{
	struct model_fold *f;

	for (f = *list; f; f = f->next)
		if (f->kind == k)
			return f;
	f = xcalloc(1, sizeof(*f));
	f->kind = k;
	f->next = *list;
	*list = f;
	return f;
}

/* Whether every life below l is done (a late child may hang under a done parent). */
static bool all_done_below(const struct model_life *l)
{
	const struct model_life *x = l;

	for (;;) {
		if (x->first_child && x->first_child->done) {
			x = x->first_child;
			continue;
		}
		if (x->first_child)
			return false;
		/* x has no children: on to its next sibling, or up until one has one. */
		while (x != l && !x->next_sibling)
			x = x->parent;
		if (x == l)
			return true;
		x = x->next_sibling;
		if (!x->done)
			return false;
	}
}

/* Frees every life below l (all done), with their folds; returns how many lives that stood for.
 * A loop, not a recursion: a tree may be a million deep. */
static uint64_t free_below(struct model *m, struct model_life *l, model_life_free_fn *life_free)
{
	struct model_life *x = l;
	uint64_t n = 0;

	for (;;) {
		if (x->first_child) {
			x = x->first_child;
			continue;
		}
		for (struct model_fold *f = x->folds; f; f = f->next)
			n += f->count + f->below;
		model_folds_free(x->folds);
		x->folds = NULL;
		if (x == l)
			return n;
		struct model_life *up = x->parent;

		n++;
		life_free(m, x);
		x = up;
	}
}

/* l is done: kept as one of its kind's sample under its parent, or folded and freed. */
static void keep_or_fold(struct model *m, struct model_life *l, model_life_free_fn *life_free)
{
	struct model_life *p = l->parent;
	struct model_fold *f = fold_of(p ? &p->folds : &m->top_folds, l->kind);

	if (l->pinned || f->kept < m->fold_keep || !all_done_below(l)) {
		f->kept += !l->pinned;
		return;
	}
	if (!f->lifetimes)
		f->lifetimes = xcalloc(1, sizeof(*f->lifetimes));
	model_kind_add_lifetime(f->lifetimes, l->end_ts > l->start_ts
						      ? (uint64_t)l->end_ts - (uint64_t)l->start_ts
						      : 0);
	f->count++;
	f->below += free_below(m, l, life_free);
	life_free(m, l);
}

void model_fold_done(struct model *m, struct model_life *l, model_life_free_fn *life_free)
{
	while (l && !l->done && l->finished && !l->open_children && l->kind) {
		struct model_life *p = l->parent;

		l->done = true;
		if (p) {
			p->open_children--;
			p->pinned |= l->pinned;
		}
		keep_or_fold(m, l, life_free);
		/* The parent may now be done too: a finished parent waits for its last child. */
		l = p && p->finished &&
				    !(p->flags & TRACE_FLAG_DESTRUCTOR && !p->destructor_fn)
			    ? p
			    : NULL;
	}
}
