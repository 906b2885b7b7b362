/*
 * What would wake a waitlist, one rule for the hang's roots (leaks.c) and the pictures' "would
 * wake it" edges (graph_wait.c). The trace names no closure for a closure_wake_up, only its call
 * site; the model keeps each waitlist's wake-up sites, also when the closures woken are forgotten
 * (model_wake_sites: check forgets finished closures). A closure would wake a waitlist when its
 * continuation runs in a function whose closure_wake_up woke a waiter of that waitlist earlier in
 * the recording.
 */
#ifndef CLOSURETRACE_WAKERS_H
#define CLOSURETRACE_WAKERS_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

#define WAKERS_MAX 4 /* functions remembered per waitlist: the first found */

/* The functions whose closure_wake_up woke a waiter of the waitlist at waitlist in process pid. */
struct wakers {
	int64_t pid;
	uint64_t waitlist;
	const char *fn[WAKERS_MAX]; /* borrowed from the model's symbols */
	unsigned n;
};

/* w for the waitlist at waitlist in process pid, from the model's wake-ups of it. */
void wakers_collect(struct model *m, struct wakers *w, int64_t pid, uint64_t waitlist);
/* Whether l (of w's process) would wake w's waitlist: its continuation runs in one of them. */
bool wakers_would_wake(struct model *m, const struct wakers *w, const struct model_life *l);

#endif
