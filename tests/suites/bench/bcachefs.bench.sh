#!/usr/bin/env bash
# bcachefs-tools 1.4.1 stock against the same sources on libclosure, and on libclosure under
# closuretrace record: wall seconds of `format` and of `fsck -f -y` on a fresh 512 MiB file-backed
# image, median of 5, rounds interleaved so that the load of a shared machine falls on all alike.
# The builds are tests/suites/integration/bcachefs/build.sh's (in BUILD_DIR, against its
# libclosure).
# Usage: bcachefs.bench.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:-build-bench}" && pwd)
src=$(cd "$(dirname "$0")/../../.." && pwd)
runs=5
. "$src/tests/common.sh"
skip_or_fail() {
	echo "SKIP: $*"
	exit 0
}
[ -e /sys/bus/event_source/devices/uprobe ] || skip_or_fail "needs uprobes"
. "$src/tests/suites/integration/bcachefs/build.sh"
[ -x "$ct" ] || fail "$ct not built"
bench="$work/bench"
rm -rf "$bench" && mkdir -p "$bench" && cd "$bench" || exit 1

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# once CONFIG: format then fsck of a fresh image; each one's wall seconds to CONFIG.format and
# CONFIG.fsck.
once() {
	local config=$1 bin=$work/stock/bcachefs pre=() what
	[ "$config" = stock ] || bin=$work/libclosure/bcachefs
	rm -f img && truncate -s 512M img
	for what in format fsck; do
		local args=(format -q img)
		[ $what = fsck ] && args=(fsck -f -y img)
		[ "$config" = traced ] && pre=("$ct" record -o "$what.json" --)
		local start=$EPOCHREALTIME
		"${pre[@]}" "$bin" "${args[@]}" >out 2>err </dev/null || fail "$config $what: $(tail -3 err)"
		awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }' >>"$config.$what"
		[ "$config" = traced ] && ! grep -q ', 0 lost,' err && fail "$config $what lost events: $(grep lost err)"
	done
}
for _ in $(seq $runs); do
	for config in stock libclosure traced; do
		once $config
	done
done
declare -A t
for config in stock libclosure traced; do
	for what in format fsck; do
		t[$config.$what]=$(median <"$config.$what")
	done
done
events=$(grep -o '[0-9]* events' err | head -1)
echo "bcachefs 512 MiB image, wall seconds (median of $runs); traced: closuretrace record ($events in the last fsck):"
printf '  %-7s %10s %10s %10s\n' "" stock libclosure traced
for what in format fsck; do
	printf '  %-7s %10s %10s %10s\n' $what "${t[stock.$what]}" "${t[libclosure.$what]}" "${t[traced.$what]}"
done
echo "ratios:"
for what in format fsck; do
	echo "  $what: libclosure / stock = $(ratio "${t[libclosure.$what]}" "${t[stock.$what]}"), traced / stock = $(ratio "${t[traced.$what]}" "${t[stock.$what]}")"
done
