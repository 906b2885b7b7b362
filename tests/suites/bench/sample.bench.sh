#!/usr/bin/env bash
# Whole trees or nothing (issue 26 item 4): what record --sample 100 costs a program against the
# same program untraced, and against recording every tree. sample_trees_ops makes 1,000,000 small
# trees (9 operations each) as fast as it can and times itself; median of 3, interleaved.
#   sample.bench.sh BUILD_DIR [TREES]
set -uo pipefail
build=${1:-build-bench}
trees=${2:-1000000}
ct=$build/cli/closuretrace
ops=$build/tests/suites/bench/sample_trees_ops
if [ "$(id -u)" != 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	echo "SKIP: needs root and uprobes"
	exit 0
fi
for f in "$ct" "$ops"; do
	[ -x "$f" ] || { echo "sample.bench: $f not built" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
per_tree() { awk '/ns per tree/ {print $1}'; }

for _ in 1 2 3; do
	"$ops" "$trees" | per_tree >>"$tmp/untraced"
	"$ct" record --sample 100 -o "$tmp/s.json" -- "$ops" "$trees" 2>/dev/null | per_tree >>"$tmp/sample100"
	"$ct" record -o "$tmp/a.json" -- "$ops" "$trees" 2>/dev/null | per_tree >>"$tmp/all"
done
u=$(median <"$tmp/untraced") s=$(median <"$tmp/sample100") a=$(median <"$tmp/all")
echo "untraced: $u ns per tree; record --sample 100: $s ns; record (every tree): $a ns"
awk -v u="$u" -v s="$s" -v a="$a" 'BEGIN {
	printf "ratio --sample 100/untraced: %.2fx; every tree/untraced: %.2fx\n", s / u, a / u }'
tail -1 "$tmp/s.json"
