/*
 * Any byte string survives a trace (issue 12, item 6): the writer writes valid UTF-8 JSON for
 * every byte string (bytes that are not UTF-8 as \udcXX), and the reader gives back the same bytes.
 *   test_trace_strings TMPFILE
 */
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
	struct viz_error err;
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
	return failures != 0;
}
