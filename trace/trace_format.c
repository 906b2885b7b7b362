/* The trace format's constants (trace_format.h). */
#include "trace_format.h"

#include <string.h>

static const struct {
	const char *name, *by;
} ends[] = {
#define TRACE_END_ROW(NAME, name, by) [TRACE_END_##NAME] = {name, by},
	TRACE_END_LIST(TRACE_END_ROW)
#undef TRACE_END_ROW
};

const char *trace_end_name(enum trace_end_reason r)
{
	return ends[r].name;
}

const char *trace_end_cut_by(const char *reason)
{
	for (size_t i = 0; reason && i < sizeof(ends) / sizeof(ends[0]); i++)
		if (!strcmp(reason, ends[i].name))
			return ends[i].by;
	return NULL;
}
