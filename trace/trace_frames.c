/* An event's "frames", checked: see trace_frames.h. */
#include "trace_frames.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "event.h"

_Static_assert(TRACE_FRAMES_MAX == CT_STACK_MAX, "the reader takes what the recorder writes");

/* "0x" and 1 to 16 hex digits: the address; false when s is not one. */
static bool hex_addr(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len < 3 || len > 18 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < len; i++) {
		char c = s[i];

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = v << 4 | (uint64_t)(c - 'A' + 10);
		else
			return false;
	}
	*out = v;
	return true;
}

/* One more address, or false when the array is too long or s is not an address. */
static bool add(const char *s, size_t len, uint64_t *ips, unsigned *n)
{
	return *n < TRACE_FRAMES_MAX && hex_addr(s, len, &ips[*n]) && ++*n;
}

/*
 * The fast path's array, as the line holds it (f->s, f->slen: "[" to "]"), already known to be
 * valid JSON of strings and scalars: each item must be an address string without escapes.
 */
static bool from_text(const char *p, const char *end, uint64_t *ips, unsigned *n)
{
	for (p++; p < end; p++) {
		const char *q;

		while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
			p++;
		if (p < end && *p == ']')
			return true;
		if (p >= end || *p != '"' || !(q = memchr(p + 1, '"', (size_t)(end - p - 1))) ||
		    !add(p + 1, (size_t)(q - p - 1), ips, n))
			return false;
		p = q;
	}
	return false;
}

/* jansson's array (a line the fast path left to it). */
static bool from_json(json_t *a, uint64_t *ips, unsigned *n)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a))
		return false;
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v) || !add(json_string_value(v), json_string_length(v), ips, n))
			return false;
	}
	return true;
}

int trace_frames_parse(const struct field *f, uint64_t *ips, unsigned *n, char *why, size_t whylen)
{
	bool ok;

	*n = 0;
	if (f->json)
		ok = from_json(f->json, ips, n);
	else
		ok = f->kind == V_OTHER && f->s && f->slen >= 2 && f->s[0] == '[' &&
		     from_text(f->s, f->s + f->slen, ips, n);
	if (ok)
		return 0;
	snprintf(why, whylen,
		 "\"frames\" must be an array of at most %d address strings like "
		 "\"0x7ffc5e2a0010\"",
		 TRACE_FRAMES_MAX);
	return -1;
}
