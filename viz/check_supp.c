/* Suppression files: see check_supp.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_supp.h"
#include "source_path.h"

static int entry_error(struct trace_error *err, const char *path, unsigned long line,
		       const char *msg, const char *text)
{
	return trace_error_at(err, path, line, "%s: '%s'", msg, text);
}

/* Cuts a trailing comment (a '#' after a blank) and surrounding blanks; returns the start. */
static char *trim(char *s)
{
	char *hash, *end;

	for (hash = s; (hash = strchr(hash, '#')); hash++)
		if (hash == s || hash[-1] == ' ' || hash[-1] == '\t') {
			*hash = '\0';
			break;
		}
	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && strchr(" \t\r\n", end[-1]))
		*--end = '\0';
	return s;
}

static const char *skip_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) ? NULL : s + n;
}

/* Parses one entry (already trimmed, not empty) into *e. 0, or -1 after the message. */
static int parse_entry(const char *path, unsigned long nr, char *text, struct supp_entry *e,
		       struct trace_error *err)
{
	const char *p = text, *rest;
	char *colon, *end;

	e->rule = -1;
	if ((rest = skip_prefix(p, "leak:")))
		e->rule = CHECK_LEAK, p = rest;
	else if ((rest = skip_prefix(p, "stuck:")))
		e->rule = CHECK_STUCK, p = rest;
	if ((rest = skip_prefix(p, "fun:")))
		e->what = SUPP_FUN;
	else if ((rest = skip_prefix(p, "src:")))
		e->what = SUPP_SRC;
	else if ((rest = skip_prefix(p, "site:")))
		e->what = SUPP_SITE;
	else
		return entry_error(err, path, nr, "not a suppression (fun:, src: or site:)", text);
	if (!*rest)
		return entry_error(err, path, nr, "empty pattern", text);
	e->pattern = strdup(rest);
	if (!e->pattern)
		return entry_error(err, path, nr, strerror(errno), text);
	e->file = path;
	e->file_line = nr;
	if (e->what != SUPP_SITE)
		return 0;
	colon = strrchr(e->pattern, ':');
	if (!colon || colon == e->pattern)
		goto bad_site;
	errno = 0;
	e->line = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || e->line <= 0)
		goto bad_site;
	*colon = '\0';
	return 0;
bad_site:
	free(e->pattern);
	e->pattern = NULL;
	return entry_error(err, path, nr, "a site is FILE:LINE", text);
}

int check_supp_load(struct check_supp *s, const char *path, struct trace_error *err)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	unsigned long nr = 0;
	ssize_t len;
	struct stat st;
	int ret = 0;

	if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		trace_error_set(err, "cannot read the suppressions %s: %s", path,
				f ? "not a regular file" : strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	while ((len = getline(&buf, &cap, f)) >= 0) {
		char *text = buf;
		struct supp_entry *v;

		nr++;
		/* An editor's byte order mark is not part of the first entry. */
		if (nr == 1 && len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
			text += 3;
		/* A NUL would cut the pattern short: "src:*\0junk" must not become "src:*". */
		if (memchr(buf, '\0', (size_t)len)) {
			ret = entry_error(err, path, nr, "a NUL byte in the entry", trim(text));
			break;
		}
		text = trim(text);
		if (!*text)
			continue;
		v = realloc(s->v, (s->n + 1) * sizeof(*v));
		if (!v) {
			ret = entry_error(err, path, nr, "out of memory", text);
			break;
		}
		s->v = v;
		memset(&v[s->n], 0, sizeof(*v));
		if (parse_entry(path, nr, text, &v[s->n], err)) {
			ret = -1;
			break;
		}
		s->n++;
	}
	free(buf);
	fclose(f);
	if (ret)
		check_supp_free(s);
	return ret;
}

void check_supp_free(struct check_supp *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].pattern);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/*
 * FILE of a site: the whole path as it is (as --gen-suppressions writes it: a name shown with
 * escapes holds backslashes, which a glob would read as its own), a glob over the whole path, or
 * the path's last components.
 */
static bool file_matches(const char *pattern, const char *file)
{
	size_t pl = strlen(pattern), fl = strlen(file);

	if (!strcmp(pattern, file) || !fnmatch(pattern, file, 0))
		return true;
	return fl > pl && file[fl - pl - 1] == '/' && !strcmp(file + fl - pl, pattern);
}

static bool entry_matches(const struct supp_entry *e, const struct check_site *site)
{
	switch (e->what) {
	case SUPP_FUN:
		return site->func && !fnmatch(e->pattern, site->func, 0);
	case SUPP_SRC: /* the whole path, or as diagnostics show it (source_path.h) */
		return site->file &&
		       (!fnmatch(e->pattern, site->file, 0) ||
			!fnmatch(e->pattern, source_path_shown(site->file, site->root), 0));
	case SUPP_SITE:
		return site->file && site->line == e->line && file_matches(e->pattern, site->file);
	}
	return false;
}

struct supp_entry *check_supp_match(struct check_supp *s, enum check_rule rule,
				    const struct check_site *sites, size_t n)
{
	for (size_t i = 0; i < s->n; i++) {
		struct supp_entry *e = &s->v[i];

		if (e->rule >= 0 && e->rule != (int)rule)
			continue;
		for (size_t k = 0; k < n; k++)
			if (entry_matches(e, &sites[k])) {
				e->used++;
				return e;
			}
	}
	return NULL;
}
