# The set-up record.bench.sh and check.bench.sh share (sourced, with NAME set to the script's
# name): the build's workload and closuretrace, root and uprobes, a temporary folder, median.
# Usage of a sourcing script: NAME.bench.sh BUILD_DIR [HITS]
build=${1:-build-bench}
hits=${2:-1000000}
runs=5
ops=$build/tests/suites/bench/bench_record_ops
ct=$build/cli/closuretrace
if [ "$(id -u)" != 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	echo "SKIP: needs root and uprobes"
	exit 0
fi
for f in "$ops" "$ct"; do
	[ -x "$f" ] || { echo "$NAME: $f not built" >&2; exit 1; }
done
ops=$(realpath "$ops")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
probes="usdt:$ops:closure:get,usdt:$ops:closure:put"

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
