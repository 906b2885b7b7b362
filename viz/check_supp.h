/*
 * Suppression files for check, in the spirit of valgrind's and LeakSanitizer's: one entry a line,
 * '#' comments. The format is documented in docs/closuretrace-check.1.
 *
 *   [leak:|stuck:]fun:GLOB         a function
 *   [leak:|stuck:]src:GLOB         a source file (the glob's '*' also matches '/')
 *   [leak:|stuck:]site:FILE:LINE   a call site; FILE matches the end of the path, or is a glob
 */
#ifndef CLOSURETRACE_CHECK_SUPP_H
#define CLOSURETRACE_CHECK_SUPP_H

#include <stdbool.h>
#include <stddef.h>

#include "trace_error.h"

enum check_rule { CHECK_LEAK, CHECK_STUCK, CHECK_NR_RULES };

/* A place a diagnostic names: the blamed call site, the closure's init site. */
struct check_site {
	const char *func, *file; /* as shown (trace_text.h); NULL when not known */
	long line;		 /* 0 when not known */
	const char *file_bytes;	 /* the file's own name when it is not shown as it is, else NULL */
	size_t root; /* file's source root (source_path.h): its first bytes, not shown */
};

enum supp_what { SUPP_FUN, SUPP_SRC, SUPP_SITE };

struct supp_entry {
	enum supp_what what;
	int rule; /* an enum check_rule, or -1 for both */
	char *pattern;
	long line;	  /* site: */
	const char *file; /* the suppression file (borrowed from the command line) */
	unsigned long file_line;
	unsigned long used; /* diagnostics it hid */
};

struct check_supp {
	struct supp_entry *v;
	size_t n;
};

/*
 * Adds the entries of the suppression file at path to *s (zeroed before the first). Returns 0, or
 * -1 with err saying "FILE:LINE: error: ..." or why the file cannot be read. A UTF-8 byte order
 * mark at its start is skipped; a NUL byte in an entry, or a path that is not a regular file, is
 * an error.
 */
int check_supp_load(struct check_supp *s, const char *path, struct trace_error *err);
void check_supp_free(struct check_supp *s);

/* The first entry that matches one of the sites of a diagnostic of rule, counted; or NULL. */
struct supp_entry *check_supp_match(struct check_supp *s, enum check_rule rule,
				    const struct check_site *sites, size_t n);

#endif
