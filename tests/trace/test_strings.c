/*
 * Any byte string survives a trace (issue 12, item 6): the writer writes valid UTF-8 JSON for
 * every byte string (bytes that are not UTF-8 as \udcXX), and the reader gives back the same bytes.
 * And every byte string is shown safely (issue 38, item 3: text_visible): C0, DEL, C1, Unicode's
 * Bidi_Control as \uXXXX, bytes that are not UTF-8 as \udcXX, the rest as it is.
 *   test_trace_strings TMPFILE
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_reader.h"
#include "trace_text.h"
#include "trace_writer.h"

static int failures;
static char got_func[256];

static void on_sym(void *ctx, const struct trace_sym *sym)
{
	(void)ctx;
	snprintf(got_func, sizeof(got_func), "%s", sym->func ? sym->func : "(null)");
}

static void check(const char *path, const char *s, const char *what)
{
	struct sym_info si = {.func = (char *)s, .file = (char *)"f.c", .line = 1};
	struct trace_sink sink = {.sym = on_sym};
	struct trace_info info;
	struct trace_error err;
	char *argv[] = {(char *)s, (char *)"x", NULL}, line[4096];
	struct trace_end end = {.reason = "exit", .exit_code = 0};
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	trace_write_header(f, 1, s, argv, 0);
	trace_write_sym(f, 0x401000, &si);
	trace_write_end(f, &end);
	fclose(f);
	/* Valid UTF-8, every line. */
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f)) {
		const char *p = line, *e = line + strlen(line);

		while (p < e) {
			size_t n = trace_utf8_seq(p, e);

			if (!n) {
				printf("FAIL %s: the trace is not UTF-8 at byte %zu of: %s", what,
				       (size_t)(p - line), line);
				failures++;
				break;
			}
			p += n;
		}
	}
	fclose(f);
	got_func[0] = 0;
	if (trace_read(path, &sink, NULL, &info, &err)) {
		printf("FAIL %s: the trace could not be read back: %s\n", what, err.text);
		failures++;
		return;
	}
	if (!info.exe || strcmp(info.exe, s)) {
		printf("FAIL %s: exe read back differs\n", what);
		failures++;
	}
	if (strcmp(got_func, s)) {
		printf("FAIL %s: sym func read back differs\n", what);
		failures++;
	}
	trace_info_clear(&info);
}

/* One string shown: exactly want, and shown again unchanged. */
static void shown(const char *s, const char *want)
{
	char buf[2048], again[2048];

	text_visible(buf, sizeof(buf), s);
	if (strcmp(buf, want)) {
		printf("FAIL shown \"%s\": got \"%s\"\n", want, buf);
		failures++;
	}
	if (strcmp(text_visible(again, sizeof(again), buf), buf)) {
		printf("FAIL shown \"%s\": shown again, \"%s\"\n", want, again);
		failures++;
	}
}

static size_t put_utf8(char *p, unsigned long cp)
{
	if (cp < 0x80)
		return (size_t)(p[0] = (char)cp, 1);
	if (cp < 0x800)
		return (size_t)(p[0] = (char)(0xc0 | cp >> 6), p[1] = (char)(0x80 | (cp & 0x3f)),
				2);
	if (cp < 0x10000)
		return (size_t)(p[0] = (char)(0xe0 | cp >> 12),
				p[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
				p[2] = (char)(0x80 | (cp & 0x3f)), 3);
	p[0] = (char)(0xf0 | cp >> 18);
	p[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	p[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	p[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Every code point: escaped exactly when it is C0, DEL, C1 or a bidi control. */
static void every_code_point(void)
{
	unsigned long escaped = 0;

	for (unsigned long cp = 1; cp <= 0x10ffff; cp++) {
		char s[8] = {0}, buf[16], want[16];
		bool control = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x61c ||
			       cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
			       (cp >= 0x2066 && cp <= 0x2069);

		if (cp >= 0xd800 && cp <= 0xdfff)
			continue; /* not characters: their UTF-8 is bytes that are not UTF-8 */
		put_utf8(s, cp);
		if (control)
			snprintf(want, sizeof(want), "\\u%04lx", cp);
		else
			snprintf(want, sizeof(want), "%s", s);
		text_visible(buf, sizeof(buf), s);
		if (strcmp(buf, want)) {
			printf("FAIL U+%04lX shown as \"%s\"\n", cp, buf);
			failures++;
		}
		escaped += control;
	}
	if (escaped != 31 + 33 + 3 + 5 + 4) /* C0 but NUL, DEL and C1, the bidi controls */
		printf("FAIL %lu code points escaped\n", escaped), failures++;
}

static void visible(void)
{
	char buf[64], all[256], *dup;

	shown("\033]2;PWNED\007\033[2J", "\\u001b]2;PWNED\\u0007\\u001b[2J");
	shown("a\tb\nc\rd\x7f", "a\\u0009b\\u000ac\\u000dd\\u007f");
	shown("\x9b"
	      "31m",
	      "\\udc9b31m");					   /* a lone 8-bit CSI */
	shown("\x80\x85\x9f\xff", "\\udc80\\udc85\\udc9f\\udcff"); /* lone bytes */
	shown("\xc2\x9b"
	      "31m \xc2\x80\xc2\x9f",
	      "\\u009b31m \\u0080\\u009f"); /* C1 as UTF-8 */
	shown("abc\xe2\x80\xae"
	      "cba \xe2\x81\xa6x\xe2\x81\xa9",
	      "abc\\u202ecba \\u2066x\\u2069");
	shown("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\u200e\\u200f\\u061c");
	shown("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0",
	      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0");
	shown("caf\xe9.c", "caf\\udce9.c");
	shown("\xe2\x82", "\\udce2\\udc82");		   /* a cut sequence */
	shown("\xed\xa0\x80", "\\udced\\udca0\\udc80");	   /* an encoded surrogate */
	shown("\\udce9 \\u001b \\", "\\udce9 \\u001b \\"); /* escape-like text: as it is */
	shown("", "");
	/* Cut before an escape or a character that does not fit, never inside. */
	text_visible(buf, 9, "ab\033");
	if (strcmp(buf, "ab\\u001b"))
		printf("FAIL cut at 9: \"%s\"\n", buf), failures++;
	text_visible(buf, 8, "ab\033");
	if (strcmp(buf, "ab"))
		printf("FAIL cut at 8: \"%s\"\n", buf), failures++;
	text_visible(buf, 4, "ab\xe2\x82\xac");
	if (strcmp(buf, "ab"))
		printf("FAIL cut at 4: \"%s\"\n", buf), failures++;
	text_snprintf(buf, 5, "%s!", "abc\xc3\xa9");
	if (strcmp(buf, "abc"))
		printf("FAIL text_snprintf cut: \"%s\"\n", buf), failures++;
	text_snprintf(buf, 6, "%s!", "abc\xc3\xa9");
	if (strcmp(buf, "abc\xc3\xa9"))
		printf("FAIL text_snprintf whole: \"%s\"\n", buf), failures++;
	/* Counted, with NUL bytes, tabs and newlines kept. */
	dup = text_visible_ndup("a\tb\nc\0d\033", 8, "\t\n");
	if (!dup || strcmp(dup, "a\tb\nc\\u0000d\\u001b"))
		printf("FAIL ndup: \"%s\"\n", dup ? dup : "(null)"), failures++;
	free(dup);
	if (text_visible_dup(NULL))
		printf("FAIL dup of NULL\n"), failures++;
	/* Every byte: valid UTF-8 with nothing a terminal obeys, shown again unchanged. */
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = 0;
	dup = text_visible_dup(all);
	if (!dup || strlen(dup) != 0x20 * 6 - 6 + 0x5f + 1 * 6 + 128 * 6) {
		printf("FAIL every byte: %zu bytes shown\n", dup ? strlen(dup) : 0);
		failures++;
	} else {
		shown(dup, dup);
	}
	free(dup);
	every_code_point();
}

int main(int argc, char **argv)
{
	static const struct {
		const char *s, *what;
	} cases[] = {
		{"caf\xe9", "latin-1 byte"},
		{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "valid UTF-8 (2, 3, 4 bytes)"},
		{"\xe2\x82", "cut 3-byte sequence"},
		{"\xc0\xaf", "overlong"},
		{"\xed\xa0\x80", "an encoded surrogate"},
		{"\xf4\x90\x80\x80", "beyond U+10FFFF"},
		{"\\udce9 \"quoted\" \t\x01", "escape-like text, quotes, controls"},
		{"\xed\xb3\xa9", "the UTF-8 of U+DCE9 itself"},
	};
	char all[256];

	if (argc != 2)
		return 2;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check(argv[1], cases[i].s, cases[i].what);
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = 0;
	check(argv[1], all, "every byte 1..255");
	remove(argv[1]);
	if (!failures)
		printf("ok: %zu byte strings written as UTF-8 JSON and read back the same\n",
		       sizeof(cases) / sizeof(cases[0]) + 1);
	visible();
	if (!failures)
		printf("ok: every byte and code point shown as text_visible says\n");
	return failures != 0;
}
