#!/usr/bin/env bash
# check never calls a correct program leaky, however loaded the machine (issue 25 item 2): with
# stress-ng keeping both cores busy, `check` on a tree of 259 processes (ct_tree) and on blockio
# (no --leak) must exit 0 every time. One false leak fails the test.
#   load_test.sh CLOSURETRACE CT_TREE BLOCKIO TREE_RUNS BLOCKIO_RUNS BLOCKIO_REQUESTS
# make test runs it small (tests/suites/trust/CMakeLists.txt); make soak with the full counts.
set -uo pipefail
# Absolute: the test runs in a scratch folder (make soak passes build/...).
ct=$(realpath "$1") tree=$(realpath "$2") blockio=$(realpath "$3")
tree_runs=$4 blockio_runs=$5 requests=$6
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
scratch
skip_without_bpf
command -v stress-ng >/dev/null || fail "stress-ng is missing: bash scripts/deps.sh"

# The second load: one CPU hog per core, for as long as the test runs.
stress-ng --cpu "$(nproc)" --timeout 3600 >/dev/null 2>&1 &
pids+=("$!")
sleep 0.5

# checked NAME RUNS CMD...: check -- CMD, RUNS times; each must exit 0 with no event lost.
checked() {
	local name=$1 runs=$2 passed=0 rc
	shift 2
	for i in $(seq 1 "$runs"); do
		rc=0
		timeout -s KILL 600 "$ct" check -- "$@" >out.txt 2>err.txt </dev/null || rc=$?
		if [ "$rc" = 0 ] && grep -q "^closuretrace: no leaks; [0-9]* events, 0 lost$" err.txt; then
			passed=$((passed + 1))
		else
			echo "$name run $i: check exited $rc:"
			grep -v '^blockio:' err.txt | head -20
		fi
	done
	echo "$name: $passed of $runs checks passed under load"
	[ "$passed" = "$runs" ] || fail "$name: $((runs - passed)) false verdicts under load"
}

checked "ct_tree (259 processes)" "$tree_runs" "$tree" 6 3 10 10
checked "blockio --requests $requests" "$blockio_runs" "$blockio" --requests "$requests"
echo "ok: no false leak under load"
