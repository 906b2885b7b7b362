/* What leaks.c and leaks_hang.c share; not for the presentations (they use leaks.h). */
#ifndef CLOSURETRACE_LEAKS_INTERNAL_H
#define CLOSURETRACE_LEAKS_INTERNAL_H

#include "leaks.h"

/* l's first blame of a reference taken and never given back, or NULL. */
const struct model_blame *leaks_get_blame(const struct model_life *l);
/* After every unfinished closure was judged: the roots of the hang the stuck ones wait behind,
 * their verdicts and counts in out changed (leaks_hang.c). */
void leaks_find_hang_roots(struct model *m, struct leaks_summary *out);

#endif
