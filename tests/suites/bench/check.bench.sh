#!/usr/bin/env bash
# closuretrace check against closuretrace record on the same workload, as ratios measured in one
# run (rounds interleaved, so that the load of a shared machine falls on all alike):
#   per probe hit in the traced program: none, floor (bpftrace counting the same probes), record
#     (attached to the one process), check (attached for every process, filtered in BPF by the
#     set of the command's processes)
#   end to end, wall time: record (trace written) against check (events straight into the model,
#     judged, diagnostics printed; no trace written)
#   check against the plain run of examples/blockio at 2,000 and 20,000 requests (issue 26: goals
#     <= 1.25 and <= 1.10), median of 3, plain and check interleaved
# The per-hit workload is record.bench.sh's: one thread doing get/put pairs (inlined probes).
# Usage: check.bench.sh BUILD_DIR [HITS]
set -uo pipefail
NAME=check.bench.sh
. "$(dirname "$0")/record_setup.sh"

# once NAME CMD...: one run; its ns per hit to $tmp/NAME, its wall seconds to $tmp/NAME.wall.
once() {
	local name=$1
	shift
	/usr/bin/time -f "wall %e" "$@" >"$tmp/out" 2>"$tmp/err" ||
		{ echo "$name failed: $(tail -3 "$tmp/err")" >&2; exit 1; }
	sed -n 's/^ns_per_hit //p' "$tmp/out" >>"$tmp/$name"
	sed -n 's/^wall //p' "$tmp/err" >>"$tmp/$name.wall"
	if grep -q ' [1-9][0-9]* lost' "$tmp/err"; then
		echo "$name lost events: $(grep lost "$tmp/err")" >&2
		exit 1
	fi
}

for _ in $(seq $runs); do
	once none "$ops" "$hits"
	once floor bpftrace -q -e "$probes { @ = count(); }" -c "$ops $hits"
	once record "$ct" record -b 16M -o "$tmp/r.json" -- "$ops" "$hits"
	once check "$ct" check -b 16M -- "$ops" "$hits"
done
grep -q '^closuretrace: no leaks; ' "$tmp/err" || { echo "check did not judge the run clean" >&2; exit 1; }
declare -A ns wall
for name in none floor record check; do
	ns[$name]=$(median <"$tmp/$name")
	wall[$name]=$(median <"$tmp/$name.wall")
done

echo "per probe hit, $hits hits, one thread (median of $runs):"
printf '  %-8s %9s ns\n' none "${ns[none]}" floor "${ns[floor]}" record "${ns[record]}" \
	check "${ns[check]}"
echo "end to end (median wall seconds): record ${wall[record]}, check ${wall[check]}"
echo "ratios:"
echo "  check / record (per hit)   = $(ratio "${ns[check]}" "${ns[record]}")"
echo "  check / floor  (per hit)   = $(ratio "${ns[check]}" "${ns[floor]}")   (goal <= 1.5)"
echo "  check / record (wall)      = $(ratio "${wall[check]}" "${wall[record]}")"

# check / plain on examples/blockio: wall seconds of each run to $tmp/blockio.NAME.N.
blockio=$build/examples/blockio
[ -x "$blockio" ] || { echo "$NAME: $blockio not built" >&2; exit 1; }
wall_of() {
	local out=$1 start end
	shift
	start=$EPOCHREALTIME
	"$@" >/dev/null 2>"$tmp/err" </dev/null || { echo "$* failed: $(tail -3 "$tmp/err")" >&2; exit 1; }
	end=$EPOCHREALTIME
	awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f\n", b - a }' >>"$out"
}
for _ in 1 2 3; do
	for n in 2000 20000; do
		wall_of "$tmp/blockio.plain.$n" "$blockio" --requests "$n"
		wall_of "$tmp/blockio.check.$n" "$ct" check -- "$blockio" --requests "$n"
		grep -q '^closuretrace: no leaks; [0-9]* events, 0 lost$' "$tmp/err" ||
			{ echo "check of blockio --requests $n: $(tail -1 "$tmp/err")" >&2; exit 1; }
	done
done
echo "check on examples/blockio, end to end (median wall seconds of 3, interleaved):"
for n in 2000 20000; do
	plain=$(median <"$tmp/blockio.plain.$n")
	check=$(median <"$tmp/blockio.check.$n")
	goal=1.25
	[ "$n" = 2000 ] || goal=1.10
	printf '  --requests %-6s plain %s s, check %s s: check / plain = %s   (goal <= %s)\n' "$n" \
		"$plain" "$check" "$(ratio "$check" "$plain")" "$goal"
done
