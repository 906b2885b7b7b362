#!/usr/bin/env bash
# Memory follows what is alive (issue 37 item 1): every reader's peak RSS and time on generated
# traces of 2,000,000 closures (all but one request in 1,000 finish) and of a 1,000,000-deep chain
# (none finishes), and check's on blockio --requests 200000, each beside its goal. A reader that
# kept every closure took about 860 bytes each (2.8 GB for the 2M trace).
#   memory.bench.sh BUILD_DIR      (MEMORY_BENCH_CLOSURES, _CHAIN and _REQUESTS scale it down)
set -euo pipefail
build=${1:-build-bench}
gen=$build/tests/suites/bench/viz_tracegen
tool=$build/cli/closuretrace
closures=${MEMORY_BENCH_CLOSURES:-2000000}
chain=${MEMORY_BENCH_CHAIN:-1000000}
requests=${MEMORY_BENCH_REQUESTS:-200000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure NAME GOAL_MB GOAL_S CMD...: peak RSS and wall time, beside the goals.
measure() {
	local name=$1 goal_mb=$2 goal_s=$3 sec kb
	shift 3
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
		echo "$name: exit $? ($(tail -1 "$tmp/err"))"
	read -r sec kb <"$tmp/time"
	awk -v n="$name" -v s="$sec" -v kb="$kb" -v gm="$goal_mb" -v gs="$goal_s" 'BEGIN {
		printf "%-34s %7.1f MB (goal <= %d MB) %6.2f s", n, kb / 1024, gm, s
		if (gs > 0) printf " (goal <= %d s)", gs
		printf "%s\n", (kb / 1024 <= gm && (gs <= 0 || s <= gs)) ? "" : "   over the goal"
	}'
}

"$gen" --closures "$closures" >"$tmp/many.json"
"$gen" --chain "$chain" >"$tmp/chain.json"
echo "traces: $closures closures ($(du -m "$tmp/many.json" | cut -f1) MB), a $chain-deep chain"
for t in many chain; do
	measure "report ($t)" 500 10 "$tool" report -i "$tmp/$t.json"
	measure "report --json ($t)" 500 10 "$tool" report --json -i "$tmp/$t.json"
	measure "graph -T dot ($t)" 500 10 "$tool" graph -T dot -i "$tmp/$t.json"
	measure "timeline ($t)" 500 10 "$tool" timeline -i "$tmp/$t.json"
	measure "explain ($t)" 500 10 "$tool" explain -i "$tmp/$t.json" 0x7f0000100100
done
# check judges as the command runs: its peak is the recorder's queue and the model of what is
# alive (blockio queues every request before the first completes: about a million at once).
measure "check (blockio $requests)" 300 0 "$tool" check -- "$build/examples/blockio" --requests "$requests"
