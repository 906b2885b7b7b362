#!/usr/bin/env bash
# The live list's cost (CLOSURE_DEBUG: closuretrace ps and record -p's snapshot read it): a
# closure's whole life (init, get, put, return) with the list (debug_list_on) against without
# (debug_list_off), 1, 2 and 8 threads, each program run ROUNDS times alternately; the medians of
# ns per life (wall, and the process's CPU time: on a loaded machine only the CPU time is
# steady) and their ratios. "own": each thread finishes what it made; "cross": each finishes the
# next thread's closures (unlinks from another thread's list: the list's worst case).
# Informational: exit 0 unless a program fails.
# Before live-list v3 the list was one list under one mutex; since, each thread has its own list
# and lock. Measured in one run on this loaded 2-core VM (the v2 library built from the commit
# before, the same program), CPU ratio on/off, v2 -> v3: own 1 thread 3.21x -> 3.34x, 2 threads
# 3.50x -> 3.54x, 8 threads 3.12x -> 3.10x; cross 2 threads 1.64x -> 1.88x, 8 threads 3.22x ->
# 3.55x. Two cores are too few to contend: what both pay is the fixed cost per life (a
# CLOCK_MONOTONIC stamp, two uncontended locks); the wall times of that run were not steady.
set -euo pipefail
build=${1:-build-bench}
dir=$build/tests/bench
rounds=${ROUNDS:-5}
lives=${LIVES:-400000}
cmake --build "$build" --target debug_list_on debug_list_off >/dev/null
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '%6s %8s %10s %10s %8s %10s %10s %8s\n' mode threads "off ns" "on ns" ratio \
	"off cpu" "on cpu" "cpu ratio"
for mode in own cross; do
	for t in 1 2 8; do
		[ "$mode" = cross ] && [ "$t" = 1 ] && continue # nothing to cross
		off=() on=() off_cpu=() on_cpu=()
		for ((r = 0; r < rounds; r++)); do
			read -r _ w c < <("$dir/debug_list_off" "$t" "$lives" "$mode")
			off+=("$w") off_cpu+=("$c")
			read -r _ w c < <("$dir/debug_list_on" "$t" "$lives" "$mode")
			on+=("$w") on_cpu+=("$c")
		done
		awk -v m="$mode" -v t="$t" -v off="$(printf '%s\n' "${off[@]}" | median)" \
			-v on="$(printf '%s\n' "${on[@]}" | median)" \
			-v offc="$(printf '%s\n' "${off_cpu[@]}" | median)" \
			-v onc="$(printf '%s\n' "${on_cpu[@]}" | median)" \
			'BEGIN { printf "%6s %8s %10s %10s %7.2fx %10s %10s %7.2fx\n", m, t, off, on, on / off, offc, onc, onc / offc }'
	done
done
