/* The one writer of JSON strings (json_string.h). */
#include "json_string.h"

#include <string.h>

#include "trace_text.h"

/* JSON_BYTES: the character at p (not plain ASCII, '"' or '\') as the trace writes it; returns
 * how many bytes of p it is. */
static size_t put_bytes_char(json_put_fn *put, void *out, const char *p, const char *end)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = (unsigned char)*p;
	char esc[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
	size_t n;

	if (c == '\n' || c == '\t') {
		put(out, c == '\n' ? "\\n" : "\\t", 2);
		return 1;
	}
	if (c < 0x20) {
		put(out, esc, 6);
		return 1;
	}
	n = trace_utf8_seq(p, end);
	if (n) {
		put(out, p, n); /* valid UTF-8 (and DEL) as it is */
		return n;
	}
	/* A byte that is not UTF-8: \udcXX, read back to the byte. */
	esc[2] = 'd';
	esc[3] = 'c';
	put(out, esc, 6);
	return 1;
}

/* JSON_SHOWN: the character at p as it is shown (text_visible_char), an escape's backslash
 * escaped for JSON; returns how many bytes of p it is. */
static size_t put_shown_char(json_put_fn *put, void *out, const char *p, const char *end)
{
	char esc[TEXT_ESCAPE_MAX + 1];
	const char *shown;
	size_t len, took = text_visible_char(p, end, esc, &shown, &len);

	if (shown == esc)
		put(out, "\\", 1);
	put(out, shown, len);
	return took;
}

void json_string_write(json_put_fn *put, void *out, const char *s, size_t n, enum json_strings how)
{
	const char *p = s, *end = s + n;

	put(out, "\"", 1);
	while (p < end) {
		const char *run = p;

		/* Plain ASCII, nearly all of it, goes out in one piece. */
		while (p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			p++;
		if (p > run) {
			put(out, run, (size_t)(p - run));
		} else if (*p == '"' || *p == '\\') {
			put(out, *p == '"' ? "\\\"" : "\\\\", 2);
			p++;
		} else if (how == JSON_BYTES) {
			p += put_bytes_char(put, out, p, end);
		} else {
			p += put_shown_char(put, out, p, end);
		}
	}
	put(out, "\"", 1);
}

static void put_file(void *out, const char *s, size_t n)
{
	fwrite_unlocked(s, 1, n, out); /* a writer's stream is its thread's alone */
}

void json_string_fputs(FILE *f, const char *s, enum json_strings how)
{
	json_string_write(put_file, f, s ? s : "", s ? strlen(s) : 0, how);
}
