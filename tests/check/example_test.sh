#!/bin/bash
# examples/leakcheck built against an installed closuretrace, as a user would:
# example_test.sh BUILD_DIR SOURCE_DIR [SANITIZERS]
# Installs BUILD_DIR into a fresh prefix, builds the example with find_package(closure) and
# include(closuretrace), runs its ctest: the clean test passes the leak check, the leaking one
# fails it (WILL_FAIL) with the diagnostic on the planted line.
set -u
build=$(realpath "$1") src=$(realpath "$2") sanitize=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	[ -f "$tmp/ctest.out" ] && cat "$tmp/ctest.out"
	exit 1
}
if [ "$(id -u)" != 0 ] || [ ! -e /sys/kernel/btf/vmlinux ]; then
	[ "${CLOSURETRACE_NO_SKIP:-0}" = 1 ] && fail "BPF unavailable and CLOSURETRACE_NO_SKIP=1"
	echo "SKIP: the leak check needs root and BPF"
	exit 77
fi

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || fail "install"
flags=${sanitize:+-fsanitize=$sanitize}
cmake -S "$src/examples/leakcheck" -B "$tmp/example" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
	-DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$tmp/configure.out" 2>&1 ||
	fail "configure: $(cat "$tmp/configure.out")"
cmake --build "$tmp/example" >/dev/null || fail "build"

# Both tests are wrapped by the installed closuretrace.
ctest --test-dir "$tmp/example" --show-only=json-v1 >"$tmp/tests.json" || fail "ctest --show-only"
python3 - "$tmp/tests.json" "$tmp/prefix/bin/closuretrace" <<'PY' || fail "tests not wrapped"
import json, sys
tests = {t["name"]: t["command"] for t in json.load(open(sys.argv[1]))["tests"]}
assert sorted(tests) == ["queue_balanced", "queue_forgets_put"], tests
for name, cmd in tests.items():
    arg = "balanced" if name == "queue_balanced" else "forgets-put"
    assert cmd[:3] == [sys.argv[2], "check", "--"] and cmd[4:] == [arg], cmd
PY

ctest --test-dir "$tmp/example" -V >"$tmp/ctest.out" 2>&1 || fail "ctest failed"
grep -qE '^1/2 Test #1: queue_balanced \.+ +Passed' "$tmp/ctest.out" || fail "queue_balanced"
grep -qE '^2/2 Test #2: queue_forgets_put \.+ +Passed' "$tmp/ctest.out" || fail "queue_forgets_put"
grep -q '^1: closuretrace: no leaks; [0-9]* events, 0 lost$' "$tmp/ctest.out" ||
	fail "the clean test's check summary"
source=$src/examples/leakcheck/queue_test.c
line=$(grep -n '/\* LEAK:' "$source" | cut -d: -f1)
grep -qx "2: $source:$line: error: closure leaked: put 0 references back; the finished closures of its kind put 1 here" \
	"$tmp/ctest.out" || fail "no diagnostic on $source:$line"

# WILL_FAIL passes on any failure: the check itself must have failed with the leak status.
"$tmp/prefix/bin/closuretrace" check -- "$tmp/example/queue_test" forgets-put >/dev/null 2>&1
rc=$?
[ "$rc" = 1 ] || fail "the leaking test's check exited $rc, not 1"
# A test that does not exist (yet) is a configure error that says what to do.
mkdir -p "$tmp/wrong"
cat >"$tmp/wrong/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(wrong LANGUAGES C)
enable_testing()
find_package(closure REQUIRED)
include(closuretrace)
closuretrace_add_leak_check(TEST later)
add_test(NAME later COMMAND true)
CMAKE
if cmake -S "$tmp/wrong" -B "$tmp/wrong/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/wrong.out" 2>&1; then
	fail "closuretrace_add_leak_check accepted a test that is not there"
fi
tr -s ' \n' ' ' <"$tmp/wrong.out" | grep -q "closuretrace_add_leak_check: no test 'later' in this folder; call it after add_test(NAME later ...)" ||
	fail "no message for an unknown test: $(cat "$tmp/wrong.out")"
echo "PASS: example_project"
