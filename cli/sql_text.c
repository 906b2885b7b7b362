/* The SQL files of sql/, by name (sql_text.h); the texts are generated (cmake/embed_sql.cmake). */
#include "sql_text.h"

#include <string.h>

const char *sql_text(const char *name)
{
	for (const struct sql_text *s = sql_texts; s->name; s++)
		if (!strcmp(s->name, name))
			return s->text;
	return NULL;
}
