#!/usr/bin/env bash
# Compressed traces (issue 26 item 3): one recording of blockio --requests N (launched: exact)
# written as .json and as .json.zst, median of 3 each, interleaved: bytes per event, the record's
# wall time (ratio .zst/.json), then report over each file (events/s, ratio).
#   zstd.bench.sh BUILD_DIR [REQUESTS]   (default 20000)
set -uo pipefail
build=${1:-build-bench}
requests=${2:-20000}
ct=$build/cli/closuretrace
demo=$build/examples/blockio
if [ "$(id -u)" != 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	echo "SKIP: needs root and uprobes"
	exit 0
fi
for f in "$ct" "$demo"; do
	[ -x "$f" ] || { echo "zstd.bench: $f not built" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
elapsed() { /usr/bin/time -f %e -o "$tmp/time" "$@" >/dev/null 2>&1 && cat "$tmp/time"; }

for _ in 1 2 3; do
	for ext in json json.zst; do
		elapsed "$ct" record -o "$tmp/t.$ext" -- "$demo" --requests "$requests" >>"$tmp/record.$ext"
		elapsed "$ct" report -i "$tmp/t.$ext" >>"$tmp/report.$ext"
	done
done
for ext in json json.zst; do
	events=$("$ct" report -i "$tmp/t.$ext" | sed -n 's/^# pid [0-9]* .*, \([0-9]*\) events,.*/\1/p')
	bytes=$(stat -c %s "$tmp/t.$ext")
	rec=$(median <"$tmp/record.$ext") rep=$(median <"$tmp/report.$ext")
	awk -v x="$ext" -v e="$events" -v b="$bytes" -v r="$rec" -v p="$rep" 'BEGIN {
		printf "%-9s %9d events, %6.1f bytes/event, record %.2f s, report %.2f s (%.2f M events/s)\n",
			x, e, b / e, r, p, e / p / 1e6 }' | tee -a "$tmp/lines"
	echo "$ext $rec $rep $bytes $events" >>"$tmp/fig"
done
awk '{ r[NR] = $2; p[NR] = $3; b[NR] = $4 / $5 } END {
	printf "ratio .json.zst/.json: size %.3f, record time %.2f, report time %.2f\n", b[2] / b[1], r[2] / r[1], p[2] / p[1] }' "$tmp/fig"
