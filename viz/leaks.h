/*
 * Verdicts (DESIGN.md "What a leak is"): which unfinished closures are root causes, which are only
 * kept alive by unfinished children, which are stuck, and the call sites to blame.
 */
#ifndef CLOSURETRACE_LEAKS_H
#define CLOSURETRACE_LEAKS_H

#include "model.h"

struct leaks_summary {
	uint64_t unfinished, leaked, kept_alive, stuck;
};

/*
 * Fill the verdict fields of every unfinished life of m (after model_end). The blamed sites of a
 * root cause are ranked, most likely first, with how sure the ranking is.
 */
void leaks_analyze(struct model *m, struct leaks_summary *out);

/* "took 1 more reference than ..." for a blame; writes into buf (caller-owned), returns it. */
const char *leaks_blame_text(struct model *m, const struct model_blame *b, char *buf, size_t len);
/* A few words for a picture: "a put is missing" (static). */
const char *leaks_blame_short(const struct model_blame *b);
const char *leaks_sure_text(enum blame_sure sure); /* static: "high", "medium", "low" */

/* The topmost ancestor still in the model (l itself when it has no parent); borrowed. */
struct model_life *leaks_root_of(struct model_life *l);

#endif
