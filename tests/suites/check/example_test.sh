#!/bin/bash
# examples/cmake-project built against an installed closuretrace, as a user would:
# example_test.sh BUILD_DIR SOURCE_DIR [SANITIZERS]
# Installs BUILD_DIR into a fresh prefix, builds the example (C11, no GNU extensions) with
# find_package(closure) and include(closuretrace), runs its ctest: the plain tests pass, the
# clean test's .leakcheck passes, the leaking one's fails (WILL_FAIL) with the diagnostic on the
# planted line, each with its own SARIF file. Then REPLACE, and a closuretrace that is not there.
set -u
build=$(realpath "$1") src=$(realpath "$2") sanitize=${3:-}
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
scratch
# fail: as common.sh's, then the example's ctest output when there is one.
fail() {
	echo "FAIL: $*"
	[ -f "$tmp/ctest.out" ] && cat "$tmp/ctest.out"
	exit 1
}
skip_without_bpf

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || fail "install"
flags=${sanitize:+-fsanitize=$sanitize}
example=$src/examples/cmake-project
cmake -S "$example" -B "$tmp/example" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
	-DCMAKE_C_FLAGS="$flags -Werror" -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$tmp/configure.out" 2>&1 ||
	fail "configure: $(cat "$tmp/configure.out")"
cmake --build "$tmp/example" -v >"$tmp/build.out" 2>&1 || fail "build: $(cat "$tmp/build.out")"
grep -q -- '-std=c11 ' "$tmp/build.out" || fail "not built as ISO C11: $(grep queue_test.c "$tmp/build.out")"

# Plain tests as written, and beside each a .leakcheck variant run by the installed closuretrace.
ctest --test-dir "$tmp/example" --show-only=json-v1 >"$tmp/tests.json" || fail "ctest --show-only"
python3 - "$tmp/tests.json" "$tmp/prefix/bin/closuretrace" "$tmp/example/leakcheck" <<'PY' || fail "tests not as expected"
import json, sys
tests = {t["name"]: t for t in json.load(open(sys.argv[1]))["tests"]}
assert sorted(tests) == ["queue_balanced", "queue_balanced.leakcheck", "queue_forgets_put",
                         "queue_forgets_put.leakcheck"], sorted(tests)
for plain in ("queue_balanced", "queue_forgets_put"):
    arg = "balanced" if plain == "queue_balanced" else "forgets-put"
    assert tests[plain]["command"][1:] == [arg], tests[plain]["command"]
    cmd = tests[plain + ".leakcheck"]["command"]
    want = [sys.argv[2], "check", "--sarif", "%s/%s.sarif" % (sys.argv[3], plain), "--"]
    assert cmd[:5] == want and cmd[6:] == [arg], cmd
    props = {p["name"]: p["value"] for p in tests[plain + ".leakcheck"]["properties"]}
    assert props["LABELS"] == ["leakcheck"], props
    assert props.get("WILL_FAIL", False) == (plain == "queue_forgets_put"), props
PY

ctest --test-dir "$tmp/example" -V >"$tmp/ctest.out" 2>&1 || fail "ctest failed"
for t in queue_balanced queue_balanced.leakcheck queue_forgets_put queue_forgets_put.leakcheck; do
	grep -qE "^[0-9]/4 Test #[0-9]: $t \.+ +Passed" "$tmp/ctest.out" || fail "$t did not pass"
done
grep -q '^2: closuretrace: no leaks; [0-9]* events, 0 lost$' "$tmp/ctest.out" ||
	fail "the clean test's check summary"
source=$example/queue_test.c
line=$(grep -n '/\* LEAK:' "$source" | cut -d: -f1)
grep -qx "4: $source:$line: error: closure leaked: put 0 references back; the finished closures of its kind put 1 here" \
	"$tmp/ctest.out" || fail "no diagnostic on $source:$line"
for t in queue_balanced queue_forgets_put; do
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"]=="2.1.0"; print(len(d["runs"][0]["results"]))' \
		"$tmp/example/leakcheck/$t.sarif" >"$tmp/$t.results" || fail "no SARIF file for $t"
done
[[ $(cat "$tmp/queue_balanced.results") == 0 && $(cat "$tmp/queue_forgets_put.results") -ge 1 ]] ||
	fail "SARIF results: balanced $(cat "$tmp/queue_balanced.results"), forgets_put $(cat "$tmp/queue_forgets_put.results")"
echo "ok: plain tests and their .leakcheck variants; the leak found at $source:$line; one SARIF file per test"

# WILL_FAIL passes on any failure: the check itself must have failed with the leak status.
"$tmp/prefix/bin/closuretrace" check -- "$tmp/example/queue_test" forgets-put >/dev/null 2>&1
rc=$?
[ "$rc" = 1 ] || fail "the leaking test's check exited $rc, not 1"

# A project of its own for the other cases: REPLACE, a test that is not there (yet), no tool.
mkdir -p "$tmp/other"
write_project() {
	cat >"$tmp/other/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(other LANGUAGES C)
enable_testing()
find_package(closure REQUIRED)
include(closuretrace)
$1
CMAKE
	rm -rf "$tmp/other/build"
	local IFS=';'
	# shellcheck disable=SC2086 # $2: the options, one per ;-separated word
	cmake -S "$tmp/other" -B "$tmp/other/build" ${2:--DCMAKE_PREFIX_PATH=$tmp/prefix} >"$tmp/other.out" 2>&1
}
write_project "add_test(NAME q COMMAND $tmp/example/queue_test balanced)
closuretrace_add_leak_check(TEST q REPLACE)" || fail "REPLACE: configure: $(cat "$tmp/other.out")"
ctest --test-dir "$tmp/other/build" --show-only=json-v1 >"$tmp/other.json"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tests"]; assert [x["name"] for x in t]==["q"] and t[0]["command"][1]=="check", t' \
	"$tmp/other.json" || fail "REPLACE: not the plain test wrapped: $(cat "$tmp/other.json")"
write_project "closuretrace_add_leak_check(TEST later)
add_test(NAME later COMMAND true)" && fail "closuretrace_add_leak_check accepted a test that is not there"
tr -s ' \n' ' ' <"$tmp/other.out" | grep -q "closuretrace_add_leak_check: no test 'later' in this folder; call it after add_test(NAME later ...)" ||
	fail "no message for an unknown test: $(cat "$tmp/other.out")"
cp -a "$tmp/prefix" "$tmp/notool" && rm "$tmp/notool/bin/closuretrace"
# Named where there is none: PATH may hold another (the .deb test installs one).
write_project "add_test(NAME q COMMAND true)
closuretrace_add_leak_check(TEST q)" "-DCMAKE_PREFIX_PATH=$tmp/notool;-DCLOSURETRACE_EXECUTABLE=$tmp/notool/bin/closuretrace" ||
	fail "configure without closuretrace: $(cat "$tmp/other.out")"
grep -q 'closuretrace not found: leak-checked tests (NAME.leakcheck) will be skipped' "$tmp/other.out" ||
	fail "no configure message without closuretrace: $(cat "$tmp/other.out")"
ctest --test-dir "$tmp/other/build" -V >"$tmp/other.ctest" 2>&1
grep -qE 'q.leakcheck \.+\*+Skipped' "$tmp/other.ctest" &&
	grep -q 'SKIP: closuretrace not found (install it, or set CLOSURETRACE_EXECUTABLE)' "$tmp/other.ctest" ||
	fail "without closuretrace, q.leakcheck not skipped with its message: $(cat "$tmp/other.ctest")"
echo "PASS: example_project (REPLACE, unknown test, no closuretrace)"
