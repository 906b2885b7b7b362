/* A call site as check's diagnostics name it (check_diag.h): its symbol, and its file as shown. */
#include "check_diag.h"
#include "model.h"
#include "source_path.h"

struct check_site check_site_at(struct model *m, uint64_t ip)
{
	const struct model_sym *s = ip ? model_sym(m, ip) : NULL;

	if (!s)
		return (struct check_site){0};
	return (struct check_site){s->func, s->file, s->line, s->file_bytes,
				   s->file ? model_sym_root(m, s) : 0};
}

const char *check_site_file(const struct check_site *s, bool bytes)
{
	if (bytes && s->file_bytes)
		return source_path_shown(s->file_bytes,
					 source_root_in(s->file_bytes, s->file, s->root));
	return source_path_shown(s->file, s->root);
}
