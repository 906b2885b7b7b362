#!/usr/bin/env bash
# make deb builds libclosure0, libclosure-dev and closuretrace; lintian finds no error in them;
# they install with dpkg -i; a program built with the -dev package's pkg-config alone is checked
# by the packaged closuretrace (its planted leak found at its line, exit 1; clean, exit 0); the
# example CMake project builds against the packages and its .leakcheck test finds its leak.
# The packages are removed again at the end (unless they were installed before).
#   deb.sh SOURCE_DIR
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
src=$(realpath "$1")
scratch
skip_without_bpf
packages=(closuretrace libclosure-dev libclosure0)
installed_before=$(dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | grep -c 'install ok installed')
on_exit() {
	[[ $installed_before == 0 ]] && dpkg -r "${packages[@]}" >/dev/null 2>&1
}

make -C "$src" deb DEB_BUILD="$tmp/build-deb" DIST="$tmp/dist" JOBS=2 >make.log 2>&1 ||
	fail "make deb: $(tail -30 make.log)"
debs=("$tmp"/dist/*.deb)
[[ ${#debs[@]} == 3 ]] || fail "make deb made ${#debs[@]} packages: ${debs[*]}"
for p in "${packages[@]}"; do
	[[ -s $(echo "$tmp/dist/${p}_"*_amd64.deb) ]] || fail "no package $p in dist/"
done
echo "ok: make deb: $(cd dist && echo *.deb)"

lintian "${debs[@]}" >lintian.out 2>&1
grep -E '^E: ' lintian.out && fail "lintian errors: $(grep -E '^E: ' lintian.out)"
echo "ok: lintian: no error ($(grep -c '^W: ' lintian.out) warnings)"

dpkg -i "${debs[@]}" >dpkg.out 2>&1 || fail "dpkg -i: $(cat dpkg.out)"
dpkg-query -W -f='${Status}\n' "${packages[@]}" | grep -c 'install ok installed' | grep -qx 3 ||
	fail "not all three installed"
echo "ok: dpkg -i installed ${packages[*]}"

cat >smoke.c <<'C'
#include <string.h>
#include <closure.h>

int main(int argc, char **argv)
{
	struct closure cl;

	closure_init(&cl, NULL);
	closure_get(&cl);
	if (argc < 2 || strcmp(argv[1], "leak"))
		closure_put(&cl);
	closure_return(&cl);
	return 0;
}
C
leak_line=$(grep -n 'closure_get(&cl);' smoke.c | cut -d: -f1)
# shellcheck disable=SC2046 # pkg-config's words
env -u PKG_CONFIG_PATH cc -g -std=c11 -pedantic -Wall -Wextra -Werror $(env -u PKG_CONFIG_PATH pkg-config --cflags closure) \
	smoke.c -o smoke $(env -u PKG_CONFIG_PATH pkg-config --libs closure) || fail "the smoke program does not build"
[[ $(realpath "$(ldd ./smoke | sed -n 's/.*libclosure.so.0 => \(.*\) (.*/\1/p')") == /usr/lib/x86_64-linux-gnu/libclosure.so.0.1.0 ]] || fail "not linked with the packaged library: $(ldd ./smoke)"
/usr/bin/closuretrace check -- ./smoke >check.out 2>check.err || fail "check of the clean run: exit $?: $(cat check.err)"
grep -q '^closuretrace: no leaks; ' check.err || fail "check of the clean run: $(cat check.err)"
/usr/bin/closuretrace check -- ./smoke leak >check.out 2>check.err
rc=$?
[[ $rc == 1 ]] || fail "check of the leak: exit $rc: $(cat check.err)"
grep -q "^$tmp/smoke.c:$leak_line: error: closure leaked" check.err ||
	grep -q "^smoke.c:$leak_line: error: closure leaked" check.err ||
	fail "check did not blame smoke.c:$leak_line: $(cat check.err)"
echo "ok: a pkg-config build checked by the packaged closuretrace: the leak at smoke.c:$leak_line, exit 1"

cmake -S "$src/examples/cmake-project" -B example >example.log 2>&1 &&
	cmake --build example >>example.log 2>&1 || fail "the example project against the packages: $(tail -20 example.log)"
ctest --test-dir example >ctest.out 2>&1 || fail "the example's tests: $(cat ctest.out)"
grep -qE 'queue_forgets_put.leakcheck \.+ +Passed' ctest.out && grep -q '100% tests passed, 0 tests failed out of 4' ctest.out ||
	fail "the example's tests: $(cat ctest.out)"
grep -q '/usr/bin/closuretrace' example/closuretrace_leak_checks.cmake || fail "the example did not use the packaged closuretrace"
man -w closuretrace-check >/dev/null 2>&1 || fail "man closuretrace-check: not installed"
echo "ok: examples/cmake-project against the packages: its .leakcheck test finds its leak"
