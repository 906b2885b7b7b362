/* A recording's header, sym records and trailer without the file: see trace_live.h. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "trace_live.h"

int trace_live_header(struct trace_info *info, pid_t pid, const char *exe)
{
	info->version = TRACE_FORMAT_VERSION;
	info->pid = pid;
	free(info->exe);
	info->exe = strdup(exe ? exe : ""); /* the writer writes "" for none */
	return info->exe ? 0 : -1;
}

void trace_live_sym(uint64_t addr, const struct sym_info *s, struct trace_sym *out)
{
	*out = (struct trace_sym){.addr = addr, .func = s->func, .file = s->file, .obj = s->obj};
	if (s->file) /* the writer gives a line only with its file */
		out->line = s->line;
}

int trace_live_end(struct trace_info *info, const struct trace_end *end)
{
	info->has_end = true;
	info->end_events = (long long)end->events;
	info->lost = (long long)end->lost;
	info->duration_ns = (long long)end->duration_ns;
	free(info->reason);
	info->reason = strdup(end->reason);
	info->has_status = trace_end_has_status(end);
	info->cut_short = end->cut_short;
	info->sample = trace_end_sampled(end) ? end->sample_every : 0;
	info->has_trees = end->trees_counted;
	if (end->trees_counted) {
		info->trees = (long long)end->trees;
		info->trees_left_out = (long long)end->trees_left_out;
	}
	return info->reason ? 0 : -1;
}
