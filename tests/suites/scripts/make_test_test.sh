#!/usr/bin/env bash
# scripts/test.sh, make test's phases, against a stand-in Makefile whose plain phase has one
# failing test of three, whose asan phase fails to build and whose tsan phase passes: all three
# run, the summary names the failed test and the failed build, and the exit status is 1. With
# every phase passing, the summary says so and the status is 0.
#   make_test_test.sh SCRIPTS_TEST_SH
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
runner=$1
scratch

mkdir -p proj/ok
cat >proj/CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(standin NONE)
enable_testing()
add_test(NAME fine COMMAND true)
add_test(NAME made_to_fail COMMAND false)
add_test(NAME also_fine COMMAND true)
if(ALL_PASS)
	set_tests_properties(made_to_fail PROPERTIES WILL_FAIL TRUE)
endif()
CMAKE
cat >proj/ok/CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(standin_ok NONE)
enable_testing()
add_test(NAME fine COMMAND true)
CMAKE
cat >Makefile <<'MAKE'
ALL_PASS ?= OFF
test-plain:
	cmake -S proj -B build -DALL_PASS=$(ALL_PASS) >/dev/null
	ctest --test-dir build
test-asan:
	@if [ $(ALL_PASS) = OFF ]; then echo "cc: error: made to fail"; exit 1; fi
	cmake -S proj/ok -B build-asan >/dev/null
	ctest --test-dir build-asan
test-tsan:
	cmake -S proj/ok -B build-tsan >/dev/null
	ctest --test-dir build-tsan
MAKE

MAKE_TEST_ROOT=$tmp bash "$runner" >out.txt 2>&1
rc=$?
[ "$rc" = 1 ] || fail "one failure: exit $rc, not 1: $(cat out.txt)"
summary=$(sed -n '/^=== make test: summary$/,$p' out.txt)
expected="=== make test: summary
plain: FAILED (67% tests passed, 1 tests failed out of 3) in * s:
    made_to_fail
asan: FAILED before its tests ran (exit 2, * s): see build-asan/make-test-asan.log
tsan: passed (100% tests passed, 0 tests failed out of 1) in * s"
# shellcheck disable=SC2053 # the expected text is a pattern (the times)
[[ $summary == $expected ]] || fail "the summary: $summary"
for phase in plain:build asan:build-asan tsan:build-tsan; do
	grep -qxF "=== make test: phase ${phase%:*} (log: ${phase#*:}/make-test-${phase%:*}.log)" out.txt ||
		fail "phase ${phase%:*} did not run: $(cat out.txt)"
done
echo "ok: all three phases ran after failures; the summary names made_to_fail and asan's build"

rm -rf build build-asan build-tsan
ALL_PASS=ON MAKE_TEST_ROOT=$tmp bash "$runner" >out.txt 2>&1
rc=$?
[ "$rc" = 0 ] || fail "all passing: exit $rc: $(cat out.txt)"
[ "$(grep -c ': passed (100% tests passed' out.txt)" = 3 ] || fail "all passing: $(cat out.txt)"
echo "ok: every phase passing: exit 0, three phases passed"
