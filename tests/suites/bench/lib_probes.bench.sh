#!/usr/bin/env bash
# libclosure's out-of-line operations with the probes compiled in (lib_ops_probes, the library
# as configured) against the same operations built with CLOSURE_PROBES=0 (lib_ops_noprobes).
# The two programs run alternately, ROUNDS times each; the table shows the median of each
# operation's figures and their ratio (goal <= 1.05x; informational, exit 0 unless a program fails).
#
# With --ir (not run by make bench): instructions executed per operation instead, counted by
# valgrind's callgrind in a short run of each program, lib_ops_nobatch (CLOSURE_NO_BATCH) too:
# exact and independent of the machine's load, but blind to what costs time without costing
# instructions (a locked instruction waiting for a load before it).
#
# What remains above 1.00x untraced, instruction by instruction (lib/probes.h says how each
# operation tests once at its entry whether it is traced): get and put have no semaphore (they
# fire from closure.h's inline fast paths too, see lib/probes_unguarded.c), so their USDT nop
# fires untraced with its count and flags computed (two ands and a move, in the user's loop for
# closure_get, in probe_get/probe_put for init with a parent and the finish that puts it); and
# the batch word is tested beside each operation's semaphores (an or from memory) and after each
# inline get and put (a load, a test, a branch), where the library without probes has neither.
set -euo pipefail
build=${1:-build-bench}
mode=${2:-}
dir=$build/tests/suites/bench
rounds=${ROUNDS:-5}
for p in lib_ops_probes lib_ops_noprobes; do
	if [ ! -x "$dir/$p" ]; then
		echo "lib_probes.bench.sh: $dir/$p is missing: build $build first" >&2
		exit 2
	fi
done
out=$(mktemp)
trap 'rm -f "$out" "$out".cg' EXIT
if [ "$mode" = --ir ]; then
	command -v valgrind >/dev/null || { echo "lib_probes.bench.sh: --ir needs valgrind" >&2; exit 3; }
	n=10000 # iterations per run; bench_lib_ops.c makes 7 runs and a warm-up of n/10
	for p in lib_ops_probes lib_ops_noprobes lib_ops_nobatch; do
		[ -x "$dir/$p" ] || continue
		valgrind --tool=callgrind --callgrind-out-file="$out.cg" "$dir/$p" $n >/dev/null 2>&1
		callgrind_annotate --inclusive=yes "$out.cg" | awk -v p="${p#lib_ops_}" -v n=$n '
			match($0, /(init_return|continue_at_inline|wait_wake|get_get_sub|sync_nothing_outstanding) /) {
				c = $1; gsub(",", "", c); print p, substr($0, RSTART, RLENGTH - 1), c / (n * 7.1)
			}' >>"$out"
	done
	echo "instructions per operation (callgrind, Ir), probes compiled in vs out, and vs no batching"
	awk '{ v[$1, $2] = $3; ops[$2] = 1 }
		END {
			printf "%-26s %8s %8s %8s %9s %9s\n", "loop", "in", "out", "nobatch", "in/out", "in/nobatch"
			for (op in ops)
				printf "%-26s %8.1f %8.1f %8.1f %8.3fx %8.3fx\n", op, v["probes", op],
					v["noprobes", op], v["nobatch", op], v["probes", op] / v["noprobes", op],
					v["nobatch", op] ? v["probes", op] / v["nobatch", op] : 0
		}' "$out"
	exit 0
fi
for ((i = 0; i < rounds; i++)); do
	"$dir/lib_ops_probes" | sed 's/^/in /' >>"$out"
	"$dir/lib_ops_noprobes" | sed 's/^/out /' >>"$out"
done
echo "probes compiled in vs compiled out, out-of-line operations: median of $rounds alternating runs"
sort -k2,2 -k3,3g "$out" | awk -v goal=1.05 '
	{ v[$1, $2, ++n[$1, $2]] = $3; ops[$2] = 1 }
	function median(side, op,   k, c) {
		c = n[side, op]
		k = int((c + 1) / 2)
		return c % 2 ? v[side, op, k] : (v[side, op, k] + v[side, op, k + 1]) / 2
	}
	END {
		printf "%-34s %12s %12s %8s\n", "operation", "in ns/op", "out ns/op", "ratio"
		for (op in ops) {
			a = median("in", op); b = median("out", op)
			printf "%-34s %12.2f %12.2f %7.3fx  goal <= %.2fx: %s\n", op, a, b, a / b, goal,
				a / b <= goal ? "PASS" : "ABOVE GOAL"
		}
	}'
