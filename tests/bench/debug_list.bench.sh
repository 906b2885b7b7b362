#!/usr/bin/env bash
# The live list's cost (CLOSURE_DEBUG: closuretrace ps reads it): a closure's whole life (init,
# get, put, return) with the list (debug_list_on) against without (debug_list_off), 1, 2 and 8
# threads, each program run ROUNDS times alternately; the medians of ns per life and their ratio.
# Informational: exit 0 unless a program fails. The list is one doubly linked list under one
# mutex (a seqlock for readers in other processes), so threads contend on it: the ratio grows
# with the threads, which is why the installed library leaves it off (README).
set -euo pipefail
build=${1:-build-bench}
dir=$build/tests/bench
rounds=${ROUNDS:-5}
lives=${LIVES:-400000}
cmake --build "$build" --target debug_list_on debug_list_off >/dev/null
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '%8s %14s %14s %8s\n' threads "off ns/life" "on ns/life" ratio
for t in 1 2 8; do
	off=() on=()
	for ((r = 0; r < rounds; r++)); do
		off+=("$("$dir/debug_list_off" "$t" "$lives" | cut -d' ' -f2)")
		on+=("$("$dir/debug_list_on" "$t" "$lives" | cut -d' ' -f2)")
	done
	m_off=$(printf '%s\n' "${off[@]}" | median)
	m_on=$(printf '%s\n' "${on[@]}" | median)
	awk -v t="$t" -v off="$m_off" -v on="$m_on" 'BEGIN { printf "%8s %14s %14s %7.2fx\n", t, off, on, on / off }'
done
