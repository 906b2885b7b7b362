/*
 * The one rule for showing a source file (viz/source_path.h), case by case: the root a file shares
 * with the folder it was compiled in, files made whole, and the same root in a name's own bytes.
 */
#include "../check.h"
#include "source_path.h"

static void root_is(const char *file, const char *dir, const char *shown)
{
	size_t n = source_common_dir(file, dir);

	EXPECT(!strcmp(source_path_shown(file, n), shown), "%s compiled in %s: shown %s, not %s",
	       file, dir ? dir : "(null)", source_path_shown(file, n), shown);
}

static void join_is(const char *dir, const char *file, const char *want)
{
	char *got = source_path_join(dir, file);

	EXPECT(got && !strcmp(got, want), "%s in %s: %s, not %s", file, dir ? dir : "(null)",
	       got ? got : "(null)", want);
	free(got);
}

int main(void)
{
	/* Built in place: the compile folder is the checkout. */
	root_is("/home/me/bcachefs-tools/libbcachefs/super.c", "/home/me/bcachefs-tools",
		"libbcachefs/super.c");
	root_is("/home/me/bcachefs-tools/libbcachefs/super.c", "/home/me/bcachefs-tools/",
		"libbcachefs/super.c");
	/* cmake -B build: the folder above both trees. */
	root_is("/tmp/a/src/tests/suites/check/ck_prog.c", "/tmp/a/src/build/tests/check",
		"tests/suites/check/ck_prog.c");
	root_is("/tmp/b/src/leak.c", "/tmp/b/build", "src/leak.c");
	/* Whole folders only: /tmp/ab is no folder of /tmp/abc. */
	root_is("/tmp/abc/x.c", "/tmp/ab", "abc/x.c");
	/* Nothing shared but /, relative, or no folder known: shown whole. */
	root_is("/usr/include/stdio.h", "/home/me/proj", "/usr/include/stdio.h");
	root_is("src/io.c", "/home/me/proj", "src/io.c");
	root_is("/home/me/proj/io.c", NULL, "/home/me/proj/io.c");
	root_is("/home/me/proj/io.c", "build", "/home/me/proj/io.c");
	/* Two files: the folder they share (a trace without compile folders). */
	EXPECT(source_common_dir("/src/a/x.c", "/src/b/y.c") == 5, "/src/ shared");
	EXPECT(source_common_dir("/src/x.c", "/src/x.c") == 5, "one file: its folder");

	join_is("/home/me/proj", "src/io.c", "/home/me/proj/src/io.c");
	join_is("/tmp/b/build", "../src/./io.c", "/tmp/b/src/io.c");
	join_is("/tmp/b/build/", "/tmp/b//src/../src/io.c", "/tmp/b/src/io.c");
	join_is("/", "../../io.c", "/io.c");
	join_is("/tmp/b", ".", "/tmp/b");
	join_is("/tmp/b", "..", "/tmp");
	join_is("/tmp", "..", "/");
	join_is(NULL, "src/io.c", "src/io.c");
	join_is("build", "src/io.c", "src/io.c");
	EXPECT(!source_path_join("/tmp", NULL), "no file: NULL");

	/* A name shown with escapes: its root in its own bytes has as many folders. */
	EXPECT(source_root_in("/caf\xe9/b/x.c", "/caf\\udce9/b/x.c", 13) == 8,
	       "the root of /caf\\xe9/b/ in bytes");
	EXPECT(source_root_in("/a/x.c", "/a/x.c", 0) == 0, "no root");
	return check_failures ? 1 : 0;
}
