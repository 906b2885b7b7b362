/* Strings in a trace: UTF-8 checked, escapes read, bytes that are not UTF-8 kept (trace_text.h). */
#include "trace_text.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t trace_utf8_seq(const char *p, const char *end)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t n, avail = (size_t)(end - p);
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return 0; /* a continuation byte, an overlong lead (c0, c1), or beyond U+10FFFF */
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static int hex4(const char *p, const char *end)
{
	int v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/*
 * The \u escape at p (just after "\u"): its code point, or for \udc80..\udcff the byte 0x80..0xff
 * as -2 - byte; -1 when invalid. *next: past the escape (and the low half of a surrogate pair).
 */
static long unicode_escape(const char *p, const char *end, const char **next)
{
	long v = hex4(p, end), lo;

	if (v < 0)
		return -1;
	*next = p + 4;
	if (v >= 0xdc80 && v <= 0xdcff)
		return -2 - (v & 0xff); /* a byte that was not UTF-8 */
	if (v >= 0xdc00 && v <= 0xdfff)
		return -1; /* a low half alone that stands for no byte */
	if (v < 0xd800 || v > 0xdbff)
		return v;
	/* A high half: its low half must follow. */
	if (end - *next < 6 || (*next)[0] != '\\' || (*next)[1] != 'u')
		return -1;
	lo = hex4(*next + 2, end);
	if (lo < 0xdc00 || lo > 0xdfff)
		return -1;
	*next += 6;
	return 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
}

const char *trace_string_scan(const char *p, const char *end, bool *escaped)
{
	*escaped = false;
	while (p < end && *p != '"') {
		unsigned char c = (unsigned char)*p;
		size_t n;

		if (c >= 0x20 && c < 0x80 && c != '\\') {
			p++; /* plain ASCII: nearly every byte of a trace */
			continue;
		}
		if (c < 0x20)
			return NULL;
		if (c != '\\') {
			if (!(n = trace_utf8_seq(p, end)))
				return NULL;
			p += n;
			continue;
		}
		*escaped = true;
		if (++p >= end)
			return NULL;
		switch (*p) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			p++;
			break;
		case 'u':
			if (unicode_escape(p + 1, end, &p) == -1)
				return NULL;
			break;
		default:
			return NULL;
		}
	}
	return p < end ? p : NULL;
}

static char *put_utf8(char *w, long cp)
{
	if (cp < 0x80) {
		*w++ = (char)cp;
	} else if (cp < 0x800) {
		*w++ = (char)(0xc0 | cp >> 6);
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*w++ = (char)(0xe0 | cp >> 12);
		*w++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*w++ = (char)(0xf0 | cp >> 18);
		*w++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*w++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	}
	return w;
}

/* Every escape is at least as long as what it stands for, so the text shrinks in place. */
size_t trace_string_decode(char *s, size_t len)
{
	static const char simple[][2] = {{'"', '"'},  {'\\', '\\'}, {'/', '/'},	 {'b', '\b'},
					 {'f', '\f'}, {'n', '\n'},  {'r', '\r'}, {'t', '\t'}};
	const char *p = s, *end = s + len;
	char *w = s;

	while (p < end) {
		if (*p != '\\') {
			*w++ = *p++;
			continue;
		}
		if (p[1] == 'u') {
			long v = unicode_escape(p + 2, end, &p);

			if (v <= -2)
				*w++ = (char)(-2 - v);
			else
				w = put_utf8(w, v);
			continue;
		}
		for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
			if (simple[i][0] == p[1])
				*w++ = simple[i][1];
		p += 2;
	}
	return (size_t)(w - s);
}

/* The code point of the valid UTF-8 sequence of n bytes at s. */
static unsigned long utf8_code_point(const unsigned char *s, size_t n)
{
	static const unsigned char lead_bits[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	unsigned long cp = s[0] & lead_bits[n];

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* Characters a terminal obeys or that reorder the text around them (text_visible). */
static bool shown_escaped(unsigned long cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||      /* C0, DEL, C1 */
	       cp == 0x061c || cp == 0x200e || cp == 0x200f || /* Unicode's Bidi_Control */
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t text_visible_char(const char *p, const char *end, char esc[TEXT_ESCAPE_MAX + 1],
			 const char **shown, size_t *len)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = trace_utf8_seq(p, end);
	unsigned long cp = n ? utf8_code_point((const unsigned char *)p, n)
			     : 0xdc00 | (unsigned char)*p; /* a byte that is not UTF-8 */

	if (n && !shown_escaped(cp)) {
		*shown = p;
		*len = n;
		return n;
	}
	esc[0] = '\\';
	esc[1] = 'u';
	for (int i = 0; i < 4; i++)
		esc[2 + i] = hex[cp >> (12 - 4 * i) & 15];
	esc[TEXT_ESCAPE_MAX] = 0;
	*shown = esc;
	*len = TEXT_ESCAPE_MAX;
	return n ? n : 1;
}

char *text_visible(char *buf, size_t size, const char *s)
{
	const char *end = s ? s + strlen(s) : NULL;
	size_t used = 0;

	for (const char *p = s; p && p < end;) {
		char esc[TEXT_ESCAPE_MAX + 1];
		const char *shown;
		size_t len, took = text_visible_char(p, end, esc, &shown, &len);

		if (used + len >= size)
			break; /* cut before a character or an escape, never inside */
		memcpy(buf + used, shown, len);
		used += len;
		p += took;
	}
	if (size)
		buf[used] = 0;
	return buf;
}

char *text_visible_ndup(const char *s, size_t n, const char *keep)
{
	const char *end = s + n;
	size_t used = 0;
	/* Room for the longest: every byte an escape. */
	char *out = n < (SIZE_MAX - 1) / TEXT_ESCAPE_MAX ? malloc(n * TEXT_ESCAPE_MAX + 1) : NULL;

	if (!out)
		return NULL;
	for (const char *p = s; p < end;) {
		char esc[TEXT_ESCAPE_MAX + 1];
		const char *shown;
		size_t len, took;

		if (*p && keep && strchr(keep, *p)) {
			out[used++] = *p++;
			continue;
		}
		took = text_visible_char(p, end, esc, &shown, &len);
		memcpy(out + used, shown, len);
		used += len;
		p += took;
	}
	out[used] = 0;
	return out;
}

char *text_visible_dup(const char *s)
{
	return s ? text_visible_ndup(s, strlen(s), NULL) : NULL;
}

int text_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, size, fmt, ap);

	if (n >= 0 && (size_t)n >= size && size > 1) {
		/* Cut: the last character goes whole when its bytes do not all fit. */
		size_t len = size - 1, start = len;

		while (start > 0 && len - start < 3 &&
		       ((unsigned char)buf[start - 1] & 0xc0) == 0x80)
			start--;
		if (start > 0 && (unsigned char)buf[start - 1] >= 0xc0 &&
		    trace_utf8_seq(buf + start - 1, buf + len) != len - start + 1)
			buf[start - 1] = 0;
	}
	return n;
}

int text_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = text_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
