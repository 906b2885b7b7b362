/* One line of a trace split into its fields (trace_line.h). */
#include "trace_line.h"

#include <stdio.h>
#include <limits.h>
#include <string.h>

#include "trace_args.h"
#include "trace_text.h"

/* Every key a record may have that the reader uses: jansson's lines keep these, and only these,
 * so that a record with many unknown fields keeps its known ones. */
static const char *const known_keys[] = {
	"type",
	"ts",
	"tid",
	"ev",
	"cl",
	"remaining",
	"flags",
	"ip",
	"pid",
	"addr",
	"line",
	"func",
	"file",
	"obj",
	"format",
	"version",
	"exe",
	"events",
	"lost",
	"duration_ns",
	"reason",
	"exit_code",
	"signal",
	"cut_short",
	"sample",
	"trees",
	"trees_left_out",
	"snapshot",
	"snapshot_missed",
	"midlife_read",
	"midlife_unread",
	"midlife_limited",
	"unread_why",
	"lost_claimed",
	"claims_refused",
	"frames",
};

static bool known_key(const char *key)
{
	if (trace_arg_find(key, strlen(key))) /* the operations' own, from the contract */
		return true;
	for (size_t i = 0; i < sizeof(known_keys) / sizeof(known_keys[0]); i++)
		if (!strcmp(key, known_keys[i]))
			return true;
	return false;
}

/* ---- the fast path: a strict parser for flat objects ---- */

const char *trace_line_skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

static const char *fast_value(const char *p, const char *end, struct field *f);

/* A string (escapes are decoded once the whole line is parsed); NULL when it is not valid. */
static const char *fast_string(const char *p, const char *end, const char **s, size_t *len,
			       bool *escaped)
{
	const char *q = ++p;

	/* Plain ASCII inline (nearly every string of a trace); the rest in trace_string_scan. */
	while (q < end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20 &&
	       (unsigned char)*q < 0x80)
		q++;
	*escaped = false;
	if ((q >= end || *q != '"') && !(q = trace_string_scan(q, end, escaped)))
		return NULL;
	*s = p;
	*len = (size_t)(q - p);
	return q + 1;
}

/* An array of strings and scalars (the header's "cmd"), skipped; NULL when it needs jansson. */
static const char *fast_array(const char *p, const char *end)
{
	struct field ignored;

	p = trace_line_skip_ws(p + 1, end);
	if (p < end && *p == ']')
		return p + 1;
	for (;;) {
		if (p >= end || *p == '[' || !(p = fast_value(p, end, &ignored)))
			return NULL;
		p = trace_line_skip_ws(p, end);
		if (p >= end)
			return NULL;
		if (*p == ']')
			return p + 1;
		if (*p != ',')
			return NULL;
		p = trace_line_skip_ws(p + 1, end);
	}
}

static const char *fast_value(const char *p, const char *end, struct field *f)
{
	if (*p == '"') {
		f->kind = V_STR;
		return fast_string(p, end, &f->s, &f->slen, &f->escaped);
	}
	if (*p == '[') {
		const char *after = fast_array(p, end);

		f->kind = V_OTHER;
		f->s = p;
		f->slen = after ? (size_t)(after - p) : 0;
		return after;
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		bool neg = *p == '-';
		unsigned long long v = 0;
		int digits = 0;

		if (neg)
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return NULL;
		if (*p == '0' && p + 1 < end && p[1] >= '0' && p[1] <= '9')
			return NULL; /* a leading zero: let jansson say so */
		/* Any long long (what the writer writes: a 64-bit field may take 19 digits); past
		 * it, jansson says so. */
		while (p < end && *p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned)(*p++ - '0');
			if (++digits > 19 || v > (unsigned long long)LLONG_MAX + neg)
				return NULL;
		}
		if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
			return NULL;
		f->kind = V_INT;
		f->i = neg ? (long long)(0 - v) : (long long)v;
		return p;
	}
	if (end - p >= 4 && !memcmp(p, "true", 4)) {
		f->kind = V_BOOL;
		f->i = 1;
		return p + 4;
	}
	if (end - p >= 5 && !memcmp(p, "false", 5)) {
		f->kind = V_BOOL;
		f->i = 0;
		return p + 5;
	}
	if (end - p >= 4 && !memcmp(p, "null", 4)) {
		f->kind = V_NULL;
		return p + 4;
	}
	return NULL;
}

/* The escapes of a parsed line's strings, decoded in place (the line is not read again). */
void trace_line_fast_decode(struct field *fields, int n)
{
	for (int i = 0; i < n; i++) {
		struct field *f = &fields[i];

		if (f->kescaped)
			f->klen = trace_string_decode((char *)f->key, f->klen);
		if (f->kind == V_STR && f->escaped)
			f->slen = trace_string_decode((char *)f->s, f->slen);
	}
}

/* Returns the number of fields, or -1 when the line is not a simple flat object. */
int trace_line_fast(const char *p, const char *end, struct field *fields)
{
	int n = 0;

	p = trace_line_skip_ws(p, end);
	if (p >= end || *p != '{')
		return -1;
	p = trace_line_skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return trace_line_skip_ws(p + 1, end) == end ? 0 : -1;
	for (;;) {
		struct field *f;

		if (n == MAX_FIELDS || p >= end || *p != '"')
			return -1;
		f = &fields[n++];
		f->escaped = false;
		f->json = NULL;
		p = fast_string(p, end, &f->key, &f->klen, &f->kescaped);
		if (!p)
			return -1;
		p = trace_line_skip_ws(p, end);
		if (p >= end || *p != ':')
			return -1;
		p = trace_line_skip_ws(p + 1, end);
		if (p >= end || !(p = fast_value(p, end, f)))
			return -1;
		p = trace_line_skip_ws(p, end);
		if (p >= end)
			return -1;
		if (*p == '}')
			break;
		if (*p != ',')
			return -1;
		p = trace_line_skip_ws(p + 1, end);
	}
	return trace_line_skip_ws(p + 1, end) == end ? n : -1;
}

/* ---- the general path: jansson ---- */

int trace_line_slow(const char *line, size_t len, struct field *fields, json_t **root, char *why,
		    size_t whylen)
{
	json_error_t err;
	const char *key;
	json_t *value;
	int n = 0;

	*root = json_loadb(line, len, 0, &err);
	if (!*root)
		return snprintf(why, whylen, "invalid JSON: %s (column %d)", err.text, err.column),
		       -2;
	if (!json_is_object(*root))
		return snprintf(why, whylen, "a record must be a JSON object"), -2;
	json_object_foreach(*root, key, value)
	{
		struct field *f;

		if (n == MAX_FIELDS || !known_key(key))
			continue; /* an unknown field: ignored, as the format promises */
		f = &fields[n++];
		f->key = key;
		f->klen = strlen(key);
		f->json = json_is_array(value) ? value : NULL;
		f->s = NULL;
		f->slen = 0;
		switch (json_typeof(value)) {
		case JSON_STRING:
			f->kind = V_STR;
			f->s = json_string_value(value);
			f->slen = json_string_length(value);
			break;
		case JSON_INTEGER:
			f->kind = V_INT;
			f->i = json_integer_value(value);
			break;
		case JSON_TRUE:
		case JSON_FALSE:
			f->kind = V_BOOL;
			f->i = json_is_true(value);
			break;
		case JSON_NULL:
			f->kind = V_NULL;
			break;
		default:
			f->kind = V_OTHER;
		}
	}
	return n;
}
