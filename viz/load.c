/* Loading a trace for the presentations: read, rebuild, judge, and say what is incomplete. */
#include "viz.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_text.h"

int viz_load(const char *path, unsigned keep, const struct model_id *watch, struct viz_input *in,
	     struct trace_error *err)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->m = model_new(keep != VIZ_KEEP_NONE);
	if (keep != VIZ_KEEP_NONE && keep != VIZ_KEEP_ALL)
		model_fold_finished(in->m, keep);
	if (watch)
		model_watch(in->m, watch);
	if (trace_read(path, &model_sink, in->m, &in->info, err)) {
		viz_unload(in);
		return -1;
	}
	viz_judge(in->m, &in->info, &in->leaks);
	return 0;
}

unsigned viz_warnings(const struct viz_input *in, char lines[VIZ_MAX_WARNINGS][256])
{
	unsigned n = 0;
	char path[256]; /* a file's name may be anyone's: shown as every name is */

	text_visible(path, sizeof(path), in->path);
	if (!in->info.has_end)
		text_snprintf(
			lines[n++], sizeof(lines[0]),
			"%s: warning: no end record: the trace was cut short; read up to line "
			"%" PRIu64,
			path, in->info.lines);
	if (in->info.lost > 0)
		text_snprintf(lines[n++], sizeof(lines[0]),
			      "%s: warning: %lld event%s lost: every verdict is incomplete", path,
			      in->info.lost, in->info.lost == 1 ? " was" : "s were");
	return n;
}

void viz_unload(struct viz_input *in)
{
	model_free(in->m);
	in->m = NULL;
	trace_info_clear(&in->info);
}

enum leaks_end viz_end(const struct trace_info *info)
{
	if (!info->has_end)
		return LEAKS_UNKNOWN;
	/* No reason: a trace older than the field, written when the process exited. */
	if (!info->cut_short &&
	    (!info->reason || !strcmp(info->reason, trace_end_name(TRACE_END_EXIT))))
		return LEAKS_EXITED;
	/* Cut short. A status: the recorder passed the stop on to the command it launched. */
	return info->has_status ? LEAKS_CUT_ENDED : LEAKS_CUT_RUNNING;
}

void viz_judge(struct model *m, const struct trace_info *info, struct leaks_summary *out)
{
	enum leaks_end end = viz_end(info);
	int64_t end_ts;

	model_end(m, end == LEAKS_EXITED);
	end_ts = model_counts(m)->last_ts;
	/* The trailer's duration counts from the header's start_ns, as event times do. */
	if (info->has_end && info->duration_ns > end_ts)
		end_ts = info->duration_ns;
	leaks_analyze(m, end, end_ts, out);
}

/* What cut a recording short, from the trailer's reason (a reason not known: as written). */
static const char *cut_by(const char *reason, char *buf, size_t len)
{
	const char *by = trace_end_cut_by(reason);

	char shown[64];

	if (by)
		return by;
	/* What the trace says, shown as every name is (trace_text.h). */
	text_snprintf(buf, len, "\"%s\"", text_visible(shown, sizeof(shown), reason));
	return buf;
}

const char *viz_end_text(const struct trace_info *info, char *buf, size_t len)
{
	char by[64];

	switch (viz_end(info)) {
	case LEAKS_EXITED:
		snprintf(buf, len, "the process exited");
		break;
	case LEAKS_CUT_ENDED:
		text_snprintf(buf, len,
			      "the recording was cut short by %s and the process ended with it",
			      cut_by(info->reason, by, sizeof(by)));
		break;
	case LEAKS_CUT_RUNNING:
		text_snprintf(buf, len,
			      "the recording was cut short by %s while the process ran on",
			      cut_by(info->reason, by, sizeof(by)));
		break;
	default:
		snprintf(buf, len, "whether the process exited is not known (no end record)");
	}
	return buf;
}

bool viz_incomplete(const struct viz_input *in)
{
	return !in->info.has_end || in->info.lost > 0;
}
