#!/usr/bin/env bash
# make deb builds libclosure0, libclosure-dev and closuretrace; lintian finds no error in them. The
# packages are checked without installing anything (what dpkg -l says of closure packages is the
# same at the end): no file in two of them or owned by an installed package, and their
# dependencies met by what is installed (apt-get's simulation), as dpkg -i needs; then, in scratch
# roots they are extracted to:
# - all three: a program built with the -dev package's pkg-config file (PKG_CONFIG_SYSROOT_DIR)
#   and the packaged libclosure is checked by the packaged closuretrace (its planted leak found at
#   its line, exit 1; clean, exit 0); examples/cmake-project builds against the tree and its
#   .leakcheck test finds its leak; the man pages are there, and the docs they cite in
#   /usr/share/doc/closuretrace; closure.pc names /usr/include and /usr/lib/x86_64-linux-gnu;
# - libclosure0 and libclosure-dev alone (no closuretrace anywhere): examples/cmake-project
#   configures, says that its leak checks will be skipped, builds, and its .leakcheck tests skip.
#   deb.sh SOURCE_DIR
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
src=$(realpath "$1")
scratch
skip_without_bpf
packages=(closuretrace libclosure-dev libclosure0)
lib=/usr/lib/x86_64-linux-gnu
# What dpkg says of the closure packages; nothing here may change it.
dpkg_state() {
	dpkg -l | grep closure
	dpkg-query -W -f='${Package} ${Version} ${Status}\n' "${packages[@]}" 2>&1
}
dpkg_state >dpkg-before.txt

make -C "$src" deb DEB_BUILD="$tmp/build-deb" DIST="$tmp/dist" JOBS=2 >make.log 2>&1 ||
	fail "make deb: $(tail -30 make.log)"
debs=("$tmp"/dist/*.deb)
[[ ${#debs[@]} == 3 ]] || fail "make deb made ${#debs[@]} packages: ${debs[*]}"
deb_of() { echo "$tmp/dist/${1}_"*_amd64.deb; }
for p in "${packages[@]}"; do
	[[ -s $(deb_of "$p") ]] || fail "no package $p in dist/"
done
echo "ok: make deb: $(cd dist && echo *.deb)"

# A lint that did not run is no lint: lintian is one of scripts/deps.sh's packages.
command -v lintian >/dev/null || fail "lintian is not installed (scripts/deps.sh installs it)"
lintian "${debs[@]}" >lintian.out 2>&1
rc=$?
grep -E '^E: ' lintian.out && fail "lintian errors: $(grep -E '^E: ' lintian.out)"
[ "$rc" = 0 ] || fail "lintian exited $rc: $(tail -5 lintian.out)"
echo "ok: lintian: no error ($(grep -c '^W: ' lintian.out) warnings)"

# What each package holds (files and links, paths from /), and who would own them.
for p in "${packages[@]}"; do
	dpkg-deb -c "$(deb_of "$p")" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | sort >"$p.files"
	[[ -s $p.files ]] || fail "$p holds no file"
done
sort ./*.files | uniq -d >shared.txt
[[ -s shared.txt ]] && fail "files in two packages (dpkg -i refuses them): $(cat shared.txt)"
# dpkg-query -S: "PACKAGE[:ARCH][, ...]: PATH" for each path an installed package owns.
sort -u ./*.files | xargs dpkg-query -S 2>/dev/null |
	awk -F ': ' -v ours=" ${packages[*]} " '{
		n = split($1, owners, ", ")
		for (i = 1; i <= n; i++) { sub(/:.*/, "", owners[i]); if (index(ours, " " owners[i] " ") == 0) print }
	}' >owned.txt
[[ -s owned.txt ]] && fail "files owned by installed packages (dpkg -i refuses them): $(cat owned.txt)"
want() { # PACKAGE PATH...: each PATH is in PACKAGE
	local p=$1 f
	shift
	for f; do grep -qxF "$f" "$p.files" || fail "$p does not hold $f: $(cat "$p.files")"; done
}
want libclosure0 $lib/libclosure.so.0 $lib/libclosure.so.0.1.0 /usr/share/doc/libclosure0/copyright
want libclosure-dev /usr/include/closure.h /usr/include/closure_config.h $lib/libclosure.so \
	$lib/libclosure.a $lib/pkgconfig/closure.pc $lib/cmake/closure/closureConfig.cmake \
	$lib/cmake/closure/closuretrace.cmake /usr/share/doc/libclosure-dev/copyright
want closuretrace /usr/bin/closuretrace /usr/share/man/man1/closuretrace.1.gz \
	/usr/share/man/man1/closuretrace-check.1.gz /usr/share/doc/closuretrace/copyright
# Installing the three adds none other: every dependency is met by what is installed. A
# simulation: apt-get locks nothing, and writes no cache here.
apt-get -s -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= install --reinstall "${debs[@]}" \
	>apt.out 2>&1 || fail "apt-get -s install: $(cat apt.out)"
[[ $(awk '/^Inst / { print $2 }' apt.out | sort | paste -sd ' ') == "closuretrace libclosure-dev libclosure0" ]] ||
	fail "installing the packages would install: $(grep '^Inst ' apt.out)"
echo "ok: the packages: no file in two, none owned by an installed package, dependencies met (apt-get -s)"

# The scratch roots: all three; libclosure0 and libclosure-dev alone.
root=$tmp/root devroot=$tmp/devroot
for p in "${packages[@]}"; do
	dpkg-deb -x "$(deb_of "$p")" "$root" || fail "dpkg-deb -x $p"
done
for p in libclosure0 libclosure-dev; do
	dpkg-deb -x "$(deb_of "$p")" "$devroot" || fail "dpkg-deb -x $p"
done
[[ $(realpath "$root$lib/libclosure.so") == "$(realpath "$root$lib/libclosure.so.0.1.0")" ]] ||
	fail "libclosure.so (libclosure-dev) does not lead to libclosure.so.0.1.0 (libclosure0)"
echo "ok: extracted into scratch roots: $(sort -u ./*.files | wc -l) files"

# pc [VAR=VALUE...] ARGS...: pkg-config reading the packaged closure.pc alone.
pc() {
	local vars=()
	while [[ $1 =~ ^[A-Z_]+= ]]; do
		vars+=("$1")
		shift
	done
	env -u PKG_CONFIG_PATH -u PKG_CONFIG_SYSROOT_DIR -u PKG_CONFIG_ALLOW_SYSTEM_CFLAGS \
		-u PKG_CONFIG_ALLOW_SYSTEM_LIBS PKG_CONFIG_LIBDIR="$root$lib/pkgconfig" "${vars[@]}" \
		pkg-config "$@" | sed 's/ *$//'
}
grep -nE '\.\.|pcfiledir' "$root$lib/pkgconfig/closure.pc" && fail "closure.pc has relative paths"
for check in "--variable=prefix closure|/usr" "--variable=includedir closure|/usr/include" \
	"--variable=libdir closure|$lib" "--cflags closure|" \
	"PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 --cflags closure|-I/usr/include" "--libs closure|-lclosure" \
	"PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 --libs closure|-L$lib -lclosure"; do
	# shellcheck disable=SC2086 # the arguments' words
	got=$(pc ${check%|*})
	[[ $got == "${check#*|}" ]] || fail "pkg-config ${check%|*}: '$got', not '${check#*|}'"
done
echo "ok: pkg-config --cflags closure: nothing (-I/usr/include, a system directory); --libs: -lclosure"

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
cflags=$(pc PKG_CONFIG_SYSROOT_DIR="$root" --cflags closure)
libs=$(pc PKG_CONFIG_SYSROOT_DIR="$root" --libs closure)
[[ $cflags == "-I$root/usr/include" && $libs == "-L$root$lib -lclosure" ]] ||
	fail "pkg-config in the scratch root: '$cflags' '$libs'"
# shellcheck disable=SC2086 # pkg-config's words
cc -g -std=c11 -pedantic -Wall -Wextra -Werror $cflags smoke.c -o smoke $libs -Wl,-rpath,"$root$lib" ||
	fail "the smoke program does not build"
[[ $(realpath "$(ldd ./smoke | sed -n 's/.*libclosure.so.0 => \(.*\) (.*/\1/p')") == "$(realpath "$root$lib/libclosure.so.0.1.0")" ]] ||
	fail "not linked with the packaged library: $(ldd ./smoke)"
closuretrace=$root/usr/bin/closuretrace
"$closuretrace" check -- ./smoke >check.out 2>check.err || fail "check of the clean run: exit $?: $(cat check.err)"
grep -q '^closuretrace: no leaks; ' check.err || fail "check of the clean run: $(cat check.err)"
"$closuretrace" check -- ./smoke leak >check.out 2>check.err
rc=$?
[[ $rc == 1 ]] || fail "check of the leak: exit $rc: $(cat check.err)"
grep -q "^$tmp/smoke.c:$leak_line: error: closure leaked" check.err ||
	grep -q "^smoke.c:$leak_line: error: closure leaked" check.err ||
	fail "check did not blame smoke.c:$leak_line: $(cat check.err)"
echo "ok: a pkg-config build checked by the packaged closuretrace: the leak at smoke.c:$leak_line, exit 1"

# Neither the machine's PATH nor CMake's system folders may lend a closuretrace to the example:
# only the packaged one (all three), or none (-dev alone).
clean_path=$(tr ':' '\n' <<<"$PATH" | while read -r d; do
	[[ -n $d && ! -e $d/closuretrace ]] && echo "$d"
done | paste -sd:)
PATH=$clean_path command -v cc cmake ctest >/dev/null ||
	fail "a closuretrace beside cc or cmake (in $PATH) cannot be left out of the -dev check"
example() { # BUILD_DIR PREFIX: configure and build examples/cmake-project against PREFIX
	PATH=$clean_path cmake -S "$src/examples/cmake-project" -B "$1" -DCMAKE_PREFIX_PATH="$2" \
		-DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF >"$1.log" 2>&1 &&
		PATH=$clean_path cmake --build "$1" >>"$1.log" 2>&1
}
example example "$root/usr" || fail "the example project against the packages: $(tail -20 example.log)"
[[ $(realpath "$(ldd example/queue_test | sed -n 's/.*libclosure.so.0 => \(.*\) (.*/\1/p')") == "$(realpath "$root$lib/libclosure.so.0.1.0")" ]] ||
	fail "the example is not linked with the packaged library: $(ldd example/queue_test)"
PATH=$clean_path ctest --test-dir example >ctest.out 2>&1 || fail "the example's tests: $(cat ctest.out)"
grep -qE 'queue_forgets_put.leakcheck \.+ +Passed' ctest.out && grep -q '100% tests passed, 0 tests failed out of 4' ctest.out ||
	fail "the example's tests: $(cat ctest.out)"
grep -qxF "set(_CLOSURETRACE_EXECUTABLE [==[$closuretrace]==])" example/closuretrace_leak_checks.cmake ||
	fail "the example did not use the packaged closuretrace: $(grep -i executable example/closuretrace_leak_checks.cmake)"
[[ $(MANPATH=$root/usr/share/man man -w closuretrace-check 2>&1) == "$root/usr/share/man/man1/closuretrace-check.1.gz" ]] ||
	fail "man closuretrace-check: not in the package: $(MANPATH=$root/usr/share/man man -w closuretrace-check 2>&1)"
echo "ok: examples/cmake-project against the packages: its .leakcheck test finds its leak"

# Every docs/NAME.md a man page cites is /usr/share/doc/closuretrace/NAME.md, as in the source.
cited=$(zcat "$root"/usr/share/man/man1/*.1.gz | sed 's/\\-/-/g' | grep -o 'docs/[a-z-]*\.md' | sort -u)
for d in design fleet probes trace-format; do
	grep -qx "docs/$d.md" <<<"$cited" || fail "the man pages no longer cite docs/$d.md: $cited"
done
for d in $cited; do
	want closuretrace "/usr/share/doc/closuretrace/${d#docs/}"
	cmp -s "$root/usr/share/doc/closuretrace/${d#docs/}" "$src/$d" || fail "/usr/share/doc/closuretrace/${d#docs/} is not $d"
done
echo "ok: the docs the man pages cite, in /usr/share/doc/closuretrace: $(paste -sd ' ' <<<"$cited")"

# libclosure-dev without closuretrace: include(closuretrace) is found, and the leak checks skip.
[[ -e $devroot/usr/bin/closuretrace ]] && fail "closuretrace in the -dev root"
example devonly "$devroot/usr" || fail "the example project with libclosure-dev alone: $(tail -20 devonly.log)"
grep -qxF -- '-- closuretrace not found: leak-checked tests (NAME.leakcheck) will be skipped; install closuretrace or set CLOSURETRACE_EXECUTABLE' devonly.log ||
	fail "configure with libclosure-dev alone did not say that the leak checks will be skipped: $(cat devonly.log)"
grep -qx 'CLOSURETRACE_EXECUTABLE:FILEPATH=CLOSURETRACE_EXECUTABLE-NOTFOUND' devonly/CMakeCache.txt ||
	fail "a closuretrace was found: $(grep CLOSURETRACE_EXECUTABLE devonly/CMakeCache.txt)"
PATH=$clean_path ctest --test-dir devonly -V >devonly-ctest.out 2>&1 ||
	fail "the example's tests with libclosure-dev alone: $(cat devonly-ctest.out)"
for t in queue_balanced queue_forgets_put; do
	grep -qE "Test +#[0-9]+: $t \.+ +Passed" devonly-ctest.out &&
		grep -qE "Test +#[0-9]+: $t\.leakcheck \.+\*\*\*Skipped" devonly-ctest.out ||
		fail "with libclosure-dev alone, not $t passed and $t.leakcheck skipped: $(cat devonly-ctest.out)"
done
[[ $(grep -cE '^[0-9]+: SKIP: closuretrace not found \(install it, or set CLOSURETRACE_EXECUTABLE\)$' devonly-ctest.out) == 2 ]] ||
	fail "the skipped leak checks did not say why: $(cat devonly-ctest.out)"
echo "ok: examples/cmake-project with libclosure-dev alone: configures, builds, its leak checks skipped and say why"

dpkg_state >dpkg-after.txt
cmp -s dpkg-before.txt dpkg-after.txt ||
	fail "dpkg's closure packages changed: $(diff dpkg-before.txt dpkg-after.txt)"
listed=$(dpkg -l | grep closure | awk '{ print $1, $2 }' | paste -sd ',' -)
echo "ok: nothing installed: dpkg -l | grep closure the same before and after (${listed:-nothing})"
