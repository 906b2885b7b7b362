#!/usr/bin/env bash
# Watching one program costs the others nothing (issue 37 item 5): an untraced process on the same
# libclosure.so (bench_record_ops: one thread doing get/put pairs, the inlined fast paths) alone,
# and while `check` of another program (hold_live, idle once its closures are made) runs beside
# it, as CPU ns per get/put pair (its user and system time over the pairs, a trap's included: on
# a shared machine a run's wall time also counts the others' turns); rounds interleaved, median
# of 5. Also beside check with its links
# for every process that maps the library (CLOSURETRACE_ATTACH=every-process: the fallback of
# kernels before 6.13, and what every check did before), where the untraced process's batches
# switch on and each batch traps.
#   beside / alone                      goal <= 1.3
# Informational: exit 0 unless a run fails.
# Usage: others.bench.sh BUILD_DIR [HITS]
set -uo pipefail
NAME=others.bench.sh
. "$(dirname "$0")/record_setup.sh"
hits=${2:-20000000}
holder=$build/tests/suites/bench/hold_live
[ -x "$holder" ] || { echo "$NAME: $holder not built" >&2; exit 1; }

# pair NAME: one untraced run, its CPU ns per get/put pair to $tmp/NAME.
pair() {
	"$ops" "$hits" >"$tmp/out" 2>&1 || { echo "$NAME: $ops failed: $(tail -3 "$tmp/out")" >&2; exit 1; }
	sed -n 's/^cpu_s //p' "$tmp/out" | awk -v h="$hits" '{ printf "%.2f\n", $1 * 2e9 / h }' >>"$tmp/$1"
}

# beside NAME [ENV...]: the same while check runs hold_live, attached (hold_live says ready).
beside() {
	local name=$1 check
	shift
	rm -f "$tmp/ready"
	env "$@" "$ct" check -- "$holder" 10 >"$tmp/ready" 2>"$tmp/err" &
	check=$!
	for ((i = 0; i < 100; i++)); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
	[ -s "$tmp/ready" ] || { echo "$NAME: check never ran hold_live: $(cat "$tmp/err")" >&2; exit 1; }
	pair "$name"
	kill -TERM "$check"
	wait "$check"
}

for _ in $(seq $runs); do
	pair alone
	beside per_process
	beside every_process CLOSURETRACE_ATTACH=every-process
done
alone=$(median <"$tmp/alone")
per=$(median <"$tmp/per_process")
every=$(median <"$tmp/every_process")
echo "an untraced process on the same libclosure.so, CPU ns per get/put pair ($hits hits, median of $runs):"
printf '  alone                                  %8s ns\n' "$alone"
printf '  beside check (links per process)       %8s ns\n' "$per"
printf '  beside check (links for every process) %8s ns\n' "$every"
echo "ratios:"
echo "  beside / alone (per process)     = $(ratio "$per" "$alone")   (goal <= 1.3)"
echo "  beside / alone (every process)   = $(ratio "$every" "$alone")"
