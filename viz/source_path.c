/* The one rule for showing a source file: see source_path.h. */
#include <stdio.h>
#include <string.h>

#include "source_path.h"
#include "trace_text.h"

char *source_path_join(const char *dir, const char *file)
{
	char *out, *w;
	size_t len;

	if (!file)
		return NULL;
	if (file[0] != '/' && (!dir || dir[0] != '/'))
		return strdup(file);
	len = strlen(dir ? dir : "") + strlen(file) + 2;
	if (!(out = malloc(len)))
		return NULL;
	if (file[0] == '/')
		snprintf(out, len, "%s", file);
	else
		snprintf(out, len, "%s/%s", dir, file);
	/* Folder by folder, in place: the result is never longer than what is read. */
	w = out;
	for (const char *r = out; *r;) {
		size_t n;

		while (*r == '/')
			r++;
		n = strcspn(r, "/");
		if (n == 2 && !strncmp(r, "..", 2)) {
			while (w > out && *--w != '/')
				;
		} else if (n && !(n == 1 && *r == '.')) {
			*w++ = '/';
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	if (w == out)
		*w++ = '/';
	*w = 0;
	return out;
}

size_t source_common_dir(const char *a, const char *b)
{
	size_t n = 0;

	if (!a || !b || a[0] != '/' || b[0] != '/')
		return 0;
	while (a[n] && a[n] == b[n])
		n++;
	if (!b[n] && a[n] == '/')
		n++; /* b is a folder a lies in */
	while (n && a[n - 1] != '/')
		n--; /* whole folders only */
	return n > 1 ? n : 0;
}

const char *source_path_shown(const char *path, size_t root)
{
	return path && root && strlen(path) > root ? path + root : path;
}

size_t source_root_in(const char *bytes, const char *shown, size_t root)
{
	size_t folders = 0, n = 0;

	for (size_t i = 0; i < root; i++)
		folders += shown[i] == '/';
	while (folders && bytes[n])
		folders -= bytes[n++] == '/';
	return n;
}

size_t source_root_shown(const char *shown, const char *dir)
{
	char *folder = dir ? source_path_join(dir, ".") : NULL;
	char *visible = folder ? text_visible_dup(folder) : NULL;
	size_t root = visible ? source_common_dir(shown, visible) : 0;

	free(visible);
	free(folder);
	return root;
}

char *source_path_show(const char *dir, const char *file)
{
	char *whole = dir ? source_path_join(dir, file) : NULL;
	char *shown = text_visible_dup(whole ? whole : file), *out;

	if (!shown) {
		free(whole);
		return NULL;
	}
	out = strdup(source_path_shown(shown, source_root_shown(shown, dir)));
	free(shown);
	free(whole);
	return out;
}
