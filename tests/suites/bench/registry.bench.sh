#!/usr/bin/env bash
# The live registry's cost (lib/debug.h: closuretrace ps, record -p's snapshot and top read it
# in every build): a closure's whole life (init, get, put, return) with the registry
# (registry_on, the library as built) against without (registry_off), 1, 2 and 8 threads, each
# program run ROUNDS times alternately; the medians of ns per life (wall, and the process's CPU
# time: on a loaded machine only the CPU time is steady) and their ratios. "own": each thread
# finishes what it made; "cross": each finishes the next thread's closures (clears slots in
# another thread's chunks: the registry's worst case). Goal (issue 35): CPU ratio at most 1.20x.
# Informational: exit 0 unless a program fails.
# The live list it replaced (CLOSURE_DEBUG only: a list per thread under a mutex, a precise
# clock read) cost 3.1x-3.5x here.
set -euo pipefail
build=${1:-build-bench}
dir=$build/tests/suites/bench
rounds=${ROUNDS:-5}
lives=${LIVES:-400000}
cmake --build "$build" --target registry_on registry_off >/dev/null
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '%6s %8s %10s %10s %8s %10s %10s %8s\n' mode threads "off ns" "on ns" ratio \
	"off cpu" "on cpu" "cpu ratio"
for mode in own cross; do
	for t in 1 2 8; do
		[ "$mode" = cross ] && [ "$t" = 1 ] && continue # nothing to cross
		off=() on=() off_cpu=() on_cpu=()
		for ((r = 0; r < rounds; r++)); do
			read -r _ w c < <("$dir/registry_off" "$t" "$lives" "$mode")
			off+=("$w") off_cpu+=("$c")
			read -r _ w c < <("$dir/registry_on" "$t" "$lives" "$mode")
			on+=("$w") on_cpu+=("$c")
		done
		awk -v m="$mode" -v t="$t" -v off="$(printf '%s\n' "${off[@]}" | median)" \
			-v on="$(printf '%s\n' "${on[@]}" | median)" \
			-v offc="$(printf '%s\n' "${off_cpu[@]}" | median)" \
			-v onc="$(printf '%s\n' "${on_cpu[@]}" | median)" \
			'BEGIN { printf "%6s %8s %10s %10s %7.2fx %10s %10s %7.2fx (goal <= 1.20x)\n", m, t, off, on, on / off, offc, onc, onc / offc }'
	done
done
