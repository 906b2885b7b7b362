#!/usr/bin/env bash
# make install installs a release build (its own folder, RelWithDebInfo, no -Werror) whose library
# keeps the live registry as every build does (issue 35): a program built against it lists its one
# live closure in closure_debug_dump(), at its init site, and runs clean under valgrind's memcheck
# (the dump reads the registry with process_vm_readv); the tool and its man pages,
# closuretrace(1) first, the docs they cite and the CMake leak-check module are installed beside
# it; pkg-config gives the prefix's folders as they are (no ..).
#   release.sh SOURCE_DIR
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
src=$(realpath "$1")
scratch

make -C "$src" install PREFIX="$tmp/prefix" RELEASE_BUILD="$tmp/build-release" JOBS=2 >make.log 2>&1 ||
	fail "make install: $(tail -30 make.log)"
grep -qx 'CLOSURETRACE_WERROR:BOOL=OFF' build-release/CMakeCache.txt || fail "make install builds with -Werror"
grep -qx 'CLOSURE_DEBUG:BOOL=OFF' build-release/CMakeCache.txt || fail "make install builds with CLOSURE_DEBUG"
grep -qx 'CMAKE_BUILD_TYPE:STRING=RelWithDebInfo' build-release/CMakeCache.txt || fail "not a release build"
for f in bin/closuretrace share/man/man1/closuretrace.1.gz share/man/man1/closuretrace-check.1.gz \
	include/closure.h lib/cmake/closure/closuretrace.cmake share/doc/closuretrace/design.md \
	share/doc/closuretrace/fleet.md share/doc/closuretrace/probes.md \
	share/doc/closuretrace/trace-format.md; do
	[[ -s prefix/$f ]] || fail "make install did not install $f"
done
man -l prefix/share/man/man1/closuretrace.1.gz 2>/dev/null | tr -s ' \n' ' ' | grep -q 'closuretrace - see what kernel-style closures wait for' ||
	fail "closuretrace(1) does not read"

cat >live.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <closure.h>

int main(void)
{
	struct closure *cl = malloc(sizeof(*cl));
	int listed;

	closure_init(cl, NULL);
	listed = closure_debug_dump(stdout);
	closure_return(cl);
	free(cl);
	printf("listed %d\n", listed);
	return 0;
}
C
PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
[[ $(env -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH=$PKG_CONFIG_PATH pkg-config --cflags --libs closure | sed 's/ *$//') == "-I$tmp/prefix/include -L$tmp/prefix/lib -lclosure" ]] ||
	fail "pkg-config --cflags --libs closure: $(PKG_CONFIG_PATH=$PKG_CONFIG_PATH pkg-config --cflags --libs closure)"
# shellcheck disable=SC2046 # pkg-config's words
cc -g -std=c11 -pedantic -Wall -Wextra -Werror $(PKG_CONFIG_PATH=$PKG_CONFIG_PATH pkg-config --cflags closure) live.c -o live \
	$(PKG_CONFIG_PATH=$PKG_CONFIG_PATH pkg-config --libs closure) -Wl,-rpath,"$tmp/prefix/lib" || fail "live.c does not build"
./live >live.out || fail "live: $(cat live.out)"
grep -qE '^0x[0-9a-f]+: 0x[0-9a-f]+ in \./live -> 0x0 p \(nil\) r 1 R$' live.out ||
	fail "the installed library's registry: $(cat live.out)"
[[ $(tail -1 live.out) == "listed 1" ]] || fail "not one closure listed: $(cat live.out)"
valgrind -q --error-exitcode=99 --leak-check=full ./live >/dev/null 2>valgrind.err ||
	fail "memcheck: $(cat valgrind.err)"
[[ -s valgrind.err ]] && fail "memcheck said: $(cat valgrind.err)"
echo "ok: make install: a release library with its live registry, clean under memcheck; closuretrace(1) installed"
