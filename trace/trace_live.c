/* A recording's header, sym records and trailer without the file: see trace_live.h. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "closure_batch.h"
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
	if (s->file) { /* the writer gives a line and a folder only with its file */
		out->line = s->line;
		out->dir = s->dir;
	}
}

bool trace_live_name(unsigned kind, uint32_t pid, uint64_t id, const char *name,
		     struct trace_name *out, char buf[TRACE_NAME_MAX + 1])
{
	if (kind != CLOSURE_NAME_THREAD && kind != CLOSURE_NAME_WORKQUEUE)
		return false; /* trace_write_name writes nothing */
	if (kind == CLOSURE_NAME_THREAD && id > INT32_MAX)
		return false; /* the reader refuses the record */
	*out = (struct trace_name){.kind = kind == CLOSURE_NAME_THREAD ? TRACE_NAME_THREAD
								       : TRACE_NAME_WORKQUEUE,
				   .pid = pid,
				   .id = id,
				   .name = name};
	if (strlen(name) > TRACE_NAME_MAX) {
		memcpy(buf, name, TRACE_NAME_MAX);
		buf[TRACE_NAME_MAX] = '\0';
		out->name = buf;
	}
	return true;
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
	info->snapshot_missed = (long long)end->snapshot_missed;
	info->midlife_read = (long long)end->midlife_read;
	info->midlife_unread = (long long)end->midlife_unread;
	info->midlife_limited = (long long)end->midlife_limited;
	free(info->unread_why);
	info->unread_why = end->unread_why ? strdup(end->unread_why) : NULL;
	info->lost_claimed = (long long)end->lost_claimed;
	info->claims_refused = (long long)end->claims_refused;
	if (end->trees_counted) {
		info->trees = (long long)end->trees;
		info->trees_left_out = (long long)end->trees_left_out;
	}
	return info->reason ? 0 : -1;
}
