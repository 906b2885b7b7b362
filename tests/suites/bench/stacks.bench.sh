#!/usr/bin/env bash
# --stacks' cost to the traced process (issue 40 item 7), as ratios measured in one run: record of
# one thread's get/put pairs (stacks_ops: bench_record_ops with frame pointers) with the
# per-operation probes and no stacks, against --stacks 8 and --stacks 64 (each get takes a stack,
# each put none). Per stack: the extra ns per get (twice the extra per hit: half the hits are
# gets). The stacks are shallow (main and libc's start, 4 frames): a deeper one walks further.
# Usage: stacks.bench.sh BUILD_DIR [HITS]
set -uo pipefail
NAME=stacks.bench.sh
. "$(dirname "$0")/record_setup.sh"
ops=$(realpath "$build/tests/suites/bench/stacks_ops")
ns_of() { sed -n 's/^ns_per_hit //p' "$1"; }

# once NAME ARGS...: one record of stacks_ops, its ns per hit appended to $tmp/NAME.
once() {
	local name=$1
	shift
	"$ct" record "$@" -o "$tmp/t.json" -- "$ops" "$hits" >"$tmp/out" 2>"$tmp/err" ||
		{ echo "$name failed: $(tail -3 "$tmp/err")" >&2; exit 1; }
	grep -q ' 0 lost' "$tmp/err" || echo "  ($name lost events: $(grep '^closuretrace: ' "$tmp/err"))"
	ns_of "$tmp/out" >>"$tmp/$name"
}

# Rounds interleave the configurations, so that the load of a shared machine falls on all alike.
for _ in $(seq $runs); do
	once off --per-op
	once s8 --stacks 8
	once s64 --stacks 64
done
declare -A ns
for name in off s8 s64; do
	ns[$name]=$(median <"$tmp/$name")
done
echo "per probe hit, $hits hits (get/put pairs), one thread, median of $runs:"
printf '  %-24s %9s ns\n' "record --per-op" "${ns[off]}" "record --stacks 8" "${ns[s8]}" \
	"record --stacks 64" "${ns[s64]}"
echo "ratios against --stacks off (--per-op), per hit:"
echo "  --stacks 8  / off = $(ratio "${ns[s8]}" "${ns[off]}")"
echo "  --stacks 64 / off = $(ratio "${ns[s64]}" "${ns[off]}")"
echo "per stack taken (a get): +$(awk -v a="${ns[s8]}" -v b="${ns[off]}" 'BEGIN { printf "%.0f", 2 * (a - b) }') ns" \
	"(--stacks 8), +$(awk -v a="${ns[s64]}" -v b="${ns[off]}" 'BEGIN { printf "%.0f", 2 * (a - b) }') ns (--stacks 64)"
