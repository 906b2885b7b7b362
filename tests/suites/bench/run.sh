#!/usr/bin/env bash
# make bench: every benchmark, each printing its own ratios against a baseline measured in the same
# run. Benchmarks are the build's tests/suites/bench/bench_* programs and
# tests/suites/bench/*.bench.sh.
set -uo pipefail
build=${1:-build-bench}
here=$(cd "$(dirname "$0")" && pwd)
status=0
for b in "$build"/tests/suites/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b" || status=1
done
for s in "$here"/*.bench.sh; do
	[ -f "$s" ] || continue
	echo "== $(basename "$s")"
	bash "$s" "$build" || status=1
done
exit $status
