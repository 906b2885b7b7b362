/*
 * The SQL files of sql/ (the schema, the fleet queries), compiled in from the repository's files
 * (cmake/embed_sql.cmake), so that the commands and the documentation read the same text.
 */
#ifndef CLOSURETRACE_SQL_TEXT_H
#define CLOSURETRACE_SQL_TEXT_H

struct sql_text {
	const char *name; /* "schema.sql", "fleet/top-leaks.sql" */
	const char *text;
};

extern const struct sql_text sql_texts[]; /* ends with a NULL name */

/* The text of sql/NAME (static), NULL when there is none. */
const char *sql_text(const char *name);

#endif
