/* What the text report (report.c) and the JSON report (report_json.c) both say: see
 * report_internal.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "trace_text.h"

static int cmp_kinds(const void *a, const void *b)
{
	const struct model_kind *x = *(const struct model_kind *const *)a;
	const struct model_kind *y = *(const struct model_kind *const *)b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->init_ip != y->init_ip)
		return x->init_ip < y->init_ip ? -1 : 1;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

struct model_kind **report_sorted_kinds(struct model *m, size_t *n)
{
	struct model_kind **v, *k;
	size_t count = 0;

	for (k = model_kinds(m); k; k = k->next)
		count++;
	v = calloc(count + 1, sizeof(*v));
	if (!v)
		return NULL;
	count = 0;
	for (k = model_kinds(m); k; k = k->next)
		v[count++] = k;
	qsort(v, count, sizeof(*v), cmp_kinds);
	*n = count;
	return v;
}

/* An unfinished life's age at the end of the recording (leaks.c measures it); a finished one's
 * lifetime. */
uint64_t report_age_at_end(struct model *m, const struct model_life *l)
{
	(void)m;
	if (l->finished)
		return l->end_ts > l->start_ts ? (uint64_t)l->end_ts - (uint64_t)l->start_ts : 0;
	return l->age_ns;
}

/*
 * Whole trees or nothing: what share of the root closures' trees the trace holds, or "" when it
 * holds them all. Nothing is scaled: the counts are of the trees recorded.
 */
const char *report_missed_text(const struct trace_info *info, char *buf, size_t len)
{
	buf[0] = 0;
	if (info->snapshot_missed > 0)
		snprintf(buf, len,
			 "%lld closure%s from before the recording ended while the closures alive "
			 "at attach were being read: left out (their init is not known)",
			 info->snapshot_missed, info->snapshot_missed == 1 ? "" : "s");
	return buf;
}

/*
 * record -p: the closures from before the recording that could not be read at all (an older
 * libclosure), or those first seen mid-life left out; "" when neither. Said once, at the top: the
 * report's views then show such a closure from its first event on, without its init.
 */
const char *report_unread_text(const struct trace_info *info, char *buf, size_t len)
{
	char why[512];

	buf[0] = 0;
	if (info->unread_why)
		text_snprintf(
			buf, len,
			"the closures made before the recording could not be read (%s): one "
			"that the trace does not begin is shown from its first event, without "
			"its init site, its parent or the references it held then",
			text_visible(why, sizeof(why), info->unread_why));
	else if (info->midlife_unread > 0 || info->midlife_limited > 0)
		snprintf(buf, len,
			 "%lld closure%s from before the recording not read when met mid-life: "
			 "%lld had ended (left out), %lld were past the recorder's bound of reads "
			 "a second (left out until read)",
			 info->midlife_unread + info->midlife_limited,
			 info->midlife_unread + info->midlife_limited == 1 ? "" : "s",
			 info->midlife_unread, info->midlife_limited);
	return buf;
}

/*
 * Whose counts: of the lost events, those the traced processes say their library dropped (their
 * own count, which nothing can check), and the claims refused as impossible; "" when none.
 */
const char *report_claims_text(const struct trace_info *info, char *buf, size_t len)
{
	int at = 0;

	buf[0] = 0;
	if (info->lost_claimed > 0)
		at = snprintf(buf, len,
			      "%lld of the lost events are the traced process's own count of records "
			      "its library dropped (not verified)",
			      info->lost_claimed);
	if (info->claims_refused > 0 && at >= 0 && (size_t)at < len)
		snprintf(buf + at, len - (size_t)at,
			 "%sthe traced process claimed %lld more records it never handed over than "
			 "its CPU time could have made: refused, not counted as lost",
			 at ? "; " : "", info->claims_refused);
	return buf;
}

const char *report_sampled_text(const struct trace_info *info, char *buf, size_t len)
{
	long long kept = info->trees - info->trees_left_out;

	buf[0] = 0;
	if (!info->has_trees || (!info->trees_left_out && !info->sample))
		return buf;
	snprintf(buf, len,
		 "%s%lld of %lld trees recorded (%.1f%%), %lld left out whole%s: every closure "
		 "here has its whole life; the counts are of the recorded trees, not scaled",
		 info->sample ? "sampled, " : "", kept, info->trees,
		 info->trees ? 100.0 * (double)kept / (double)info->trees : 100.0,
		 info->trees_left_out,
		 info->sample ? "" : " (the recorder fell behind: no new tree was recorded)");
	if (info->sample) {
		char every[48];

		snprintf(every, sizeof(every), " (one root in %lld asked)", info->sample);
		strncat(buf, every, len - strlen(buf) - 1);
	}
	return buf;
}
