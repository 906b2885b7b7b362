/* A jansson value written with the one writer of JSON strings (json_value.h). */
#include "json_value.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json_string.h"

struct layout {
	FILE *f;
	int indent, margin;
};

static void put_file(void *out, const char *s, size_t n)
{
	fwrite(s, 1, n, out);
}

static void put_string(const struct layout *l, const char *s, size_t n)
{
	json_string_write(put_file, l->f, s, n, JSON_SHOWN);
}

/* Between members: a newline and the depth's indentation, or nothing (compact). */
static void newline(const struct layout *l, int depth)
{
	if (!l->indent)
		return;
	fprintf(l->f, "\n%*s", l->margin + depth * l->indent, "");
}

/* As jansson's jsonp_dtostr: "%.6g", with ".0" when it would read back as an integer, and the
 * exponent without '+' or leading zeros. JSON has no infinity or NaN: null. */
static void put_real(const struct layout *l, double v)
{
	char buf[64], *e, *digits;

	if (!isfinite(v)) {
		fputs("null", l->f);
		return;
	}
	snprintf(buf, sizeof(buf) - 2, "%.6g", v);
	if (!strpbrk(buf, ".e"))
		strcat(buf, ".0");
	e = strchr(buf, 'e');
	if (e) {
		digits = e + 1 + (e[1] == '-');
		e += 1 + (e[1] == '-' || e[1] == '+');
		while (*e == '0' && e[1])
			e++;
		memmove(digits, e, strlen(e) + 1);
	}
	fputs(buf, l->f);
}

static void put_value(const struct layout *l, const json_t *v, int depth);

static void put_object(const struct layout *l, const json_t *v, int depth)
{
	json_t *o = (json_t *)v; /* jansson's iterators take no const */
	size_t i = 0;

	if (!json_object_size(o)) {
		fputs("{}", l->f);
		return;
	}
	putc('{', l->f);
	for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
		const char *key = json_object_iter_key(it);

		if (i++)
			putc(',', l->f);
		newline(l, depth + 1);
		put_string(l, key, strlen(key));
		fputs(l->indent ? ": " : ":", l->f);
		put_value(l, json_object_iter_value(it), depth + 1);
	}
	newline(l, depth);
	putc('}', l->f);
}

static void put_array(const struct layout *l, const json_t *v, int depth)
{
	size_t n = json_array_size(v);

	if (!n) {
		fputs("[]", l->f);
		return;
	}
	putc('[', l->f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			putc(',', l->f);
		newline(l, depth + 1);
		put_value(l, json_array_get(v, i), depth + 1);
	}
	newline(l, depth);
	putc(']', l->f);
}

static void put_value(const struct layout *l, const json_t *v, int depth)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		put_object(l, v, depth);
		break;
	case JSON_ARRAY:
		put_array(l, v, depth);
		break;
	case JSON_STRING:
		put_string(l, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		fprintf(l->f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		put_real(l, json_real_value(v));
		break;
	case JSON_TRUE:
		fputs("true", l->f);
		break;
	case JSON_FALSE:
		fputs("false", l->f);
		break;
	default:
		fputs("null", l->f);
	}
}

int json_value_write(FILE *f, const json_t *v, int indent, int margin)
{
	const struct layout l = {.f = f, .indent = indent, .margin = margin};

	if (v)
		put_value(&l, v, 0);
	else
		fputs("null", f);
	return ferror(f) ? -1 : 0;
}

json_t *json_text(const char *s)
{
	return json_string_nocheck(s ? s : "");
}
