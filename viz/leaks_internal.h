/* What leaks.c and leaks_hang.c share; not for the presentations (they use leaks.h). */
#ifndef CLOSURETRACE_LEAKS_INTERNAL_H
#define CLOSURETRACE_LEAKS_INTERNAL_H

#include "leaks.h"

/* l's first blame of a reference taken and never given back, or NULL. */
const struct model_blame *leaks_get_blame(const struct model_life *l);
/* The verdict of one unfinished life, counted in out (leaks.c; leaks_analyze in leaks_hang.c
 * judges every one, then finds the roots of a hang). */
void leaks_judge(struct model *m, struct model_life *l, struct leaks_summary *out);

#endif
