#!/usr/bin/env bash
# The viz benchmark: closuretrace report over a generated 10-million-event trace (events/s and
# peak memory, against jansson alone on the same file in the same run), and closuretrace graph on
# traces of 10,000 and 100,000 closures, and report --json of a 100,000-deep chain of leaks.
#   viz.bench.sh BUILD_DIR        (VIZ_BENCH_EVENTS overrides the 10,000,000)
set -euo pipefail
build=${1:-build-bench}
gen=$build/tests/suites/bench/viz_tracegen
base=$build/tests/suites/bench/viz_jansson_baseline
tool=$build/cli/closuretrace
events=${VIZ_BENCH_EVENTS:-10000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gen" --events "$events" >"$tmp/big.json"
lines=$(wc -l <"$tmp/big.json")
size=$(du -m "$tmp/big.json" | cut -f1)
echo "trace: $lines lines, $size MB"

read -r _ jsec < <("$base" "$tmp/big.json")
/usr/bin/time -f "%e %M" -o "$tmp/time" "$tool" report -i "$tmp/big.json" >"$tmp/report.txt"
read -r sec kb <"$tmp/time"
awk -v n="$lines" -v s="$sec" -v j="$jsec" -v kb="$kb" 'BEGIN {
	printf "report: %.2f s, %.2f M events/s, peak RSS %.1f MB\n", s, n / s / 1e6, kb / 1024
	printf "jansson alone (baseline): %.2f s, %.2f M lines/s\n", j, n / j / 1e6
	printf "ratio report / jansson: %.2fx the speed\n", j / s
}'
grep -E '^closures:' "$tmp/report.txt"

# Memory is bounded by what is alive, not by the events: half the trace, the same peak.
half=$((events / 2))
"$gen" --events "$half" >"$tmp/half.json"
/usr/bin/time -f "%e %M" -o "$tmp/time2" "$tool" report -i "$tmp/half.json" >/dev/null
read -r _ kb2 <"$tmp/time2"
awk -v a="$kb2" -v b="$kb" -v n="$half" 'BEGIN {
	printf "peak RSS at %d events: %.1f MB (ratio full/half %.2f)\n", n, a / 1024, b / a }'

# report --json streams: a 100,000-deep chain (100,000 leaks, 150 MB of JSON; it took 67 s and
# 985 MB when the document was built whole), against the text report of the same trace.
"$gen" --chain 100000 >"$tmp/chain.json"
/usr/bin/time -f "%e %M" -o "$tmp/ct" "$tool" report -i "$tmp/chain.json" >/dev/null
read -r cs ckb <"$tmp/ct"
/usr/bin/time -f "%e %M" -o "$tmp/jt" "$tool" report --json -i "$tmp/chain.json" >"$tmp/chain.out"
read -r js jkb <"$tmp/jt"
awk -v cs="$cs" -v ckb="$ckb" -v js="$js" -v jkb="$jkb" -v mb="$(du -m "$tmp/chain.out" | cut -f1)" 'BEGIN {
	printf "report --json of a 100000-deep chain: %.2f s, peak RSS %.1f MB, %d MB written\n", js, jkb / 1024, mb
	printf "report (text) of it (baseline): %.2f s, peak RSS %.1f MB; ratio --json/text %.2fx the time, %.2fx the memory\n", cs, ckb / 1024, js / cs, jkb / ckb
}'

for n in 10000 100000; do
	"$gen" --closures "$n" >"$tmp/g$n.json"
	/usr/bin/time -f "%e %M" -o "$tmp/gt" "$tool" graph -i "$tmp/g$n.json" -o "$tmp/g$n.svg"
	read -r gs gkb <"$tmp/gt"
	nodes=$(grep -c 'class="node"' "$tmp/g$n.svg" || true)
	echo "graph of $n closures: ${gs} s, $nodes nodes drawn, peak RSS $((gkb / 1024)) MB"
done
"$gen" --closures 100000 --leak-every 10 >"$tmp/leaky.json"
/usr/bin/time -f "%e %M" -o "$tmp/lt" "$tool" graph -i "$tmp/leaky.json" -o "$tmp/leaky.svg"
read -r ls lkb <"$tmp/lt"
echo "graph of 100000 closures, 1 request in 10 leaking: ${ls} s, $(grep -c 'class="node"' "$tmp/leaky.svg") nodes drawn"
"$gen" --closures 2000 --fanout 4 >"$tmp/nf.json"
/usr/bin/time -f "%e" -o "$tmp/nt" "$tool" graph --no-fold -i "$tmp/nf.json" -o "$tmp/nf.svg"
echo "graph --no-fold of 2000 closures (every one a node): $(cat "$tmp/nt") s"
