/* What the viewers share (viewer.h). */
#include "viewer.h"

#include <stdio.h>

int viewer_load(const char *path, bool keep_finished, const struct model_id *watch,
		struct viz_input *in)
{
	char warnings[VIZ_MAX_WARNINGS][256];
	struct viz_error err;
	unsigned n;

	if (viz_load(path, keep_finished, watch, in, &err)) {
		fprintf(stderr, "%s\n", err.text);
		return -1;
	}
	n = viz_warnings(in, warnings);
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, "%s\n", warnings[i]);
	return 0;
}
