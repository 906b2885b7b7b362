#!/usr/bin/env bash
# The recorder's cost to the traced process, per probe hit, as ratios measured in one run:
#   none      no tracer
#   floor     bpftrace counting the same probes (@ = count()): the cheapest a uprobe tracer is
#   printf    bpftrace printing one line per event: what a user would write by hand
#   record    closuretrace record (the trace written to a file)
# plus the recorder's own CPU time and its output rate. The traced program is one thread doing
# get/put pairs (inlined probes), the highest rate one thread can produce. Then (issue 26 item 2):
#   launched pair   record -- of that thread against untraced, per get+put (goal <= 20x; the
#                   traced thread waits only for the drain thread's copy, not for the JSON)
#   record -p       two threads churning closures as fast as they can (tests/cli/ct_churn),
#                   440,000 to 10 M operations: the highest event rate recorded with 0 lost
# Usage: record.bench.sh BUILD_DIR [HITS]
set -uo pipefail
NAME=record.bench.sh
. "$(dirname "$0")/record_setup.sh"
ns_of() { sed -n 's/^ns_per_hit //p' "$1"; }

# once NAME CMD...: one run, its ns per hit appended to $tmp/NAME.
once() {
	local name=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || { echo "$name failed: $(tail -3 "$tmp/err")" >&2; exit 1; }
	ns_of "$tmp/out" >>"$tmp/$name"
}

# record, with its CPU time: /usr/bin/time's CPU counts the traced child too, which prints its own.
record_once() {
	once record /usr/bin/time -f "time %U %S %e" "$ct" record -o "$tmp/t.json" -- "$ops" "$hits"
	read -r _ user sys wall < <(grep '^time ' "$tmp/err")
	child=$(sed -n 's/^cpu_s //p' "$tmp/out")
	summary=$(grep '^closuretrace: ' "$tmp/err")
	events=$(echo "$summary" | sed -n 's/^closuretrace: \([0-9]*\) events.*/\1/p')
	lost=$(echo "$summary" | sed -n 's/.* \([0-9]*\) lost.*/\1/p')
	secs=$(echo "$summary" | sed -n 's/.* lost, \([0-9.]*\) s,.*/\1/p')
	echo "$user $sys $child $wall $events $lost $secs" |
		awk '{printf "  %.3f %.3f %d %d %.0f %.1f\n", $1 + $2 - $3, $4, $5, $6, $5 / $7, ($1 + $2 - $3) / $7 * 100}' >>"$tmp/record_cpu"
}

# Rounds interleave the configurations, so that the load of a shared machine falls on all alike.
for _ in $(seq $runs); do
	once none "$ops" "$hits"
	once floor bpftrace -q -e "$probes { @ = count(); }" -c "$ops $hits"
	record_once
done
# 10 us per event: one run is enough.
once printf bpftrace -q -o "$tmp/printf.txt" -e "$probes { printf(\"%s %lx %d\\n\", probe, arg0, arg1); }" -c "$ops $hits"
declare -A ns
for name in none floor printf record; do
	ns[$name]=$(median <"$tmp/$name")
done
bytes=$(stat -c %s "$tmp/t.json")

echo "per probe hit, $hits hits, one thread (median of $runs; printf: 1 run):"
printf '  %-8s %9s ns\n' none "${ns[none]}" floor "${ns[floor]}" printf "${ns[printf]}" record "${ns[record]}"
echo "ratios:"
echo "  record / floor  = $(ratio "${ns[record]}" "${ns[floor]}")   (goal <= 1.3)"
echo "  record / printf = $(ratio "${ns[record]}" "${ns[printf]}")"
echo "  record / none   = $(ratio "${ns[record]}" "${ns[none]}")"
echo "  floor / none    = $(ratio "${ns[floor]}" "${ns[none]}")"
echo "recorder, per run: cpu_s wall_s events lost events_per_s cpu_percent_of_recording"
cat "$tmp/record_cpu"
echo "launched pair (record -- / untraced, per get+put): $(ratio "${ns[record]}" "${ns[none]}")x   (goal <= 20; was 90-136x)"

# record -p of ct_churn: each run's rate (operations over the program's own seconds) and lost.
churn=$build/tests/cli/ct_churn
best=0
echo "record -p of two churning threads (ct_churn N per thread): operations, program's ops/s, lost, MiB queued, MiB spooled"
for n in 44000 200000 1000000; do
	rm -f "$tmp/in.fifo" "$tmp/w.out" "$tmp/rp.err"
	mkfifo "$tmp/in.fifo"
	"$churn" "$n" <"$tmp/in.fifo" >"$tmp/w.out" 2>&1 &
	wpid=$!
	exec 3>"$tmp/in.fifo"
	until grep -q '^ready' "$tmp/w.out" 2>/dev/null; do sleep 0.01; done
	"$ct" record -v -p "$wpid" -o "$tmp/p.json" 2>"$tmp/rp.err" &
	rpid=$!
	until grep -q 'recording process' "$tmp/rp.err" 2>/dev/null; do sleep 0.01; done
	echo go >&3
	exec 3>&-
	wait "$wpid"
	wait "$rpid"
	ops=$(sed -n 's/^ops //p' "$tmp/w.out")
	secs=$(sed -n 's/^secs //p' "$tmp/w.out")
	plost=$(sed -n 's/.* \([0-9]*\) lost, .*/\1/p' "$tmp/rp.err")
	queued=$(sed -n 's/^closuretrace: \([0-9.]*\) MiB of records queued.*/\1/p' "$tmp/rp.err")
	spooled=$(sed -n 's/.*queued at most behind the ring buffer, \([0-9.]*\) MiB.*/\1/p' "$tmp/rp.err")
	rate=$(awk -v o="$ops" -v s="$secs" 'BEGIN { printf "%.0f", o / s }')
	echo "  $ops $rate ${plost:-?} ${queued:-?} ${spooled:-?}"
	[ "${plost:-1}" = 0 ] && [ "$rate" -gt "$best" ] && best=$rate
done
echo "record -p: highest event rate with 0 lost: $best events/s (the program's full speed on this machine)"
echo "trace size: $bytes bytes ($(awk -v b="$bytes" -v h="$hits" 'BEGIN { printf "%.0f", b / h }') bytes per event)"
if awk '$4 != 0 { bad = 1 } END { exit !bad }' "$tmp/record_cpu"; then
	echo "record lost events"
	exit 1
fi
