/* Loading a trace for the presentations: read, rebuild, judge, and say what is incomplete. */
#include "viz.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int viz_load(const char *path, bool keep_finished, const struct model_id *watch,
	     struct viz_input *in, struct viz_error *err)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->m = model_new(keep_finished);
	if (watch)
		model_watch(in->m, watch);
	if (trace_read(path, &model_sink, in->m, &in->info, err)) {
		viz_unload(in);
		return -1;
	}
	model_end(in->m, viz_exited(&in->info));
	leaks_analyze(in->m, &in->leaks);
	return 0;
}

unsigned viz_warnings(const struct viz_input *in, char lines[VIZ_MAX_WARNINGS][256])
{
	unsigned n = 0;

	if (!in->info.has_end)
		snprintf(lines[n++], sizeof(lines[0]),
			 "%s: warning: no end record: the trace was cut short; read up to line "
			 "%" PRIu64,
			 in->path, in->info.lines);
	if (in->info.lost > 0)
		snprintf(lines[n++], sizeof(lines[0]),
			 "%s: warning: %lld events were lost: every verdict is incomplete",
			 in->path, in->info.lost);
	return n;
}

void viz_unload(struct viz_input *in)
{
	model_free(in->m);
	in->m = NULL;
	trace_info_clear(&in->info);
}

bool viz_exited(const struct trace_info *info)
{
	/* A trace cut short says nothing about the process; the launched command's status does. */
	if (!info->has_end)
		return false;
	/* "timeout": check ended the command itself before it stopped recording */
	return !info->reason || !strcmp(info->reason, "exit") || !strcmp(info->reason, "timeout") ||
	       info->has_status;
}

bool viz_incomplete(const struct viz_input *in)
{
	return !in->info.has_end || in->info.lost > 0;
}
