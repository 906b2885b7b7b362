/* What the viewers (graph, report, explain) share: a trace loaded, its errors and warnings said. */
#ifndef CLOSURETRACE_VIEWER_H
#define CLOSURETRACE_VIEWER_H

#include <stdbool.h>
#include <stdint.h>

#include "viz.h"

/* viz_load, then the error or the warnings on standard error. Returns 0, or -1 (bad input). */
int viewer_load(const char *path, bool keep_finished, const struct model_id *watch,
		struct viz_input *in);

#endif
