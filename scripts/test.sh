#!/usr/bin/env bash
# make test's phases: plain, ASan+UBSan, TSan (the library). Every phase runs even when one before
# it failed (a failed build or test hides no other result), and one summary at the end names
# every failure, then exits 1 if anything failed.
#   test.sh [PHASE...]   (default: plain asan tsan)
# Each phase is the Makefile target test-PHASE, whose ctest leaves the failed tests' names in
# BUILD/Testing/Temporary/LastTestsFailed.log. MAKE_TEST_ROOT names another folder with such a
# Makefile (tests/suites/scripts/make_test_test.sh).
set -uo pipefail
cd "${MAKE_TEST_ROOT:-$(dirname "$0")/..}" || exit 2
phases=("$@")
[ ${#phases[@]} -gt 0 ] || phases=(plain asan tsan)
declare -A build_dir=([plain]=build [asan]=build-asan [tsan]=build-tsan)
summary=()
failed=0

for phase in "${phases[@]}"; do
	dir=${build_dir[$phase]:?unknown phase $phase}
	log=$dir/make-test-$phase.log
	start=$(date +%s)
	rm -f "$dir/Testing/Temporary/LastTestsFailed.log"
	mkdir -p "$dir"
	echo "=== make test: phase $phase (log: $log)"
	make --no-print-directory "test-$phase" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	took=$(($(date +%s) - start))
	counts=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
	if [ "$rc" = 0 ]; then
		summary+=("$phase: passed ($counts) in ${took} s")
		continue
	fi
	failed=1
	if [ -z "$counts" ]; then
		summary+=("$phase: FAILED before its tests ran (exit $rc, ${took} s): see $log")
		continue
	fi
	summary+=("$phase: FAILED ($counts) in ${took} s:")
	if [ -f "$dir/Testing/Temporary/LastTestsFailed.log" ]; then
		while IFS=: read -r _ name || [ -n "${name:-}" ]; do
			summary+=("    $name")
		done <"$dir/Testing/Temporary/LastTestsFailed.log"
	fi
done

echo "=== make test: summary"
printf '%s\n' "${summary[@]}"
exit $failed
