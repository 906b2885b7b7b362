/* What the text report (report.c) and the JSON report (report_json.c) share, in report_facts.c;
 * private to them. */
#ifndef CLOSURETRACE_REPORT_INTERNAL_H
#define CLOSURETRACE_REPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "viz.h"

#define TXT 512

/* Every kind, most closures first (a new array the caller frees; NULL when out of memory). */
struct model_kind **report_sorted_kinds(struct model *m, size_t *n);
/* An unfinished life's age at the end of the recording; a finished one's lifetime. */
uint64_t report_age_at_end(struct model *m, const struct model_life *l);
/* What share of the trees the trace holds when it was sampled, else "" (buf). */
const char *report_sampled_text(const struct trace_info *info, char *buf, size_t len);
/* The closures from before the recording its snapshot missed, left out; "" when none. */
const char *report_missed_text(const struct trace_info *info, char *buf, size_t len);
/* Closures from before the recording not read (all of them, or some first seen mid-life); "". */
const char *report_unread_text(const struct trace_info *info, char *buf, size_t len);
/* Of the lost events, the processes' own count of drops, and claims refused; "" when none. */
const char *report_claims_text(const struct trace_info *info, char *buf, size_t len);
/* report --json: one JSON document, written as it is made. */
int report_json(struct viz_input *in, FILE *out);

#endif
