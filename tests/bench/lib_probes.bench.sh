#!/usr/bin/env bash
# libclosure's out-of-line operations with the probes compiled in (lib_ops_probes, the library
# as configured) against the same operations built with CLOSURE_PROBES=0 (lib_ops_noprobes).
# The two programs run alternately, ROUNDS times each; the table shows the median of each
# operation's figures and their ratio (goal <= 1.05x; informational, exit 0 unless a program fails).
set -euo pipefail
build=${1:-build-bench}
dir=$build/tests/bench
rounds=${ROUNDS:-5}
for p in lib_ops_probes lib_ops_noprobes; do
	if [ ! -x "$dir/$p" ]; then
		echo "lib_probes.bench.sh: $dir/$p is missing: build $build first" >&2
		exit 2
	fi
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
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
