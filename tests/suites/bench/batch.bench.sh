#!/usr/bin/env bash
# Batched tracing (issue 13), each figure a ratio measured in this run:
#  1. per traced event in the traced thread (a tight get/put loop): closuretrace record batched
#     against the bpftrace-count floor (goal <= 0.10x) and against untraced; 0 lost and every
#     get and put in the trace;
#  2. a service (a request every 250 us, 3 children completed by device threads, continued on a
#     workqueue): CPU per request while record -p records it, against unrecorded (goal <= 1.10x);
#  3. the recorder's sustained events/s and its CPU per million events;
#  4. untraced get+put and the out-of-line operations with batching compiled in against the
#     library without it (CLOSURE_NO_BATCH; goal <= 1.02x).
# The machine may be shared: the load average is printed with the figures.
# Usage: batch.bench.sh BUILD_DIR [HITS]
set -uo pipefail
NAME=batch.bench.sh
. "$(dirname "$0")/record_setup.sh"
dir=$build/tests/suites/bench
ops_static=$(realpath "$dir/bench_record_ops_static")
probes_static="usdt:$ops_static:closure:get,usdt:$ops_static:closure:put"
ns_of() { sed -n 's/^ns_per_hit //p' "$1"; }
# The traced process's CPU per hit (user + system: a uprobe trap is system time of the process).
cpu_of() { awk -v h="$hits" '/^cpu_s / { printf "%.2f\n", $2 * 1e9 / h }' "$1"; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"

# 1 and 3: the traced thread's cost per event, the recorder's rate and CPU.
: >"$tmp/none" >"$tmp/floor" >"$tmp/batched" >"$tmp/rec" >"$tmp/cnone" >"$tmp/cfloor" >"$tmp/cbatched"
for _ in $(seq $runs); do
	"$ops_static" "$hits" >"$tmp/out" && ns_of "$tmp/out" >>"$tmp/none" && cpu_of "$tmp/out" >>"$tmp/cnone"
	bpftrace -q -e "$probes_static { @ = count(); }" -c "$ops_static $hits" >"$tmp/out" 2>/dev/null &&
		ns_of "$tmp/out" >>"$tmp/floor" && cpu_of "$tmp/out" >>"$tmp/cfloor"
	/usr/bin/time -f "time %U %S" "$ct" record -o "$tmp/t.json" -- "$ops_static" "$hits" >"$tmp/out" 2>"$tmp/err" ||
		{ echo "record failed: $(tail -3 "$tmp/err")"; exit 1; }
	ns_of "$tmp/out" >>"$tmp/batched"
	cpu_of "$tmp/out" >>"$tmp/cbatched"
	read -r _ user sys < <(grep '^time ' "$tmp/err")
	child=$(sed -n 's/^cpu_s //p' "$tmp/out")
	events=$(sed -n 's/^closuretrace: \([0-9]*\) events.*/\1/p' "$tmp/err")
	lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$tmp/err")
	gets=$(grep -c '"ev":"get"' "$tmp/t.json")
	puts=$(grep -c '"ev":"put"' "$tmp/t.json")
	echo "$user $sys $child $events $lost $gets $puts" >>"$tmp/rec"
done
none=$(median <"$tmp/none")
floor=$(median <"$tmp/floor")
batched=$(median <"$tmp/batched")
cnone=$(median <"$tmp/cnone")
cfloor=$(median <"$tmp/cfloor")
cbatched=$(median <"$tmp/cbatched")
echo "1. per traced event, $hits get/put hits in one thread (median of $runs):"
echo "   CPU of the traced process per hit (the cost to it), and wall time per hit (record is"
echo "   lossless when launched: the library waits for a recorder that falls behind)"
printf '  %-22s %9s ns cpu %9s ns wall\n' untraced "$cnone" "$none" "bpftrace count (floor)" "$cfloor" "$floor" \
	"record, batched" "$cbatched" "$batched"
echo "  batched / floor = $(ratio "$cbatched" "$cfloor") cpu, $(ratio "$batched" "$floor") wall   (goal <= 0.10)"
echo "  batched / none  = $(ratio "$cbatched" "$cnone") cpu, $(ratio "$batched" "$none") wall"
echo "3. the recorder, per run: events lost gets puts recorder_cpu_s cpu_s_per_million_events events_per_recorder_cpu_s"
awk '{ cpu = $1 + $2 - $3; printf "  %d %d %d %d %.3f %.3f %.0f\n", $4, $5, $6, $7, cpu, cpu / $4 * 1e6, $4 / (cpu > 0 ? cpu : 1) }' "$tmp/rec"
bad=$(awk -v h="$hits" '$5 != 0 || $6 != h / 2 + 1 || $7 != h / 2 + 1 { print }' "$tmp/rec")
[ -z "$bad" ] || { echo "  FAIL: lost events, or gets and puts missing from the trace: $bad"; status=1; }

# 2. the service under record -p against unrecorded, alternating.
svc=$dir/bench_service
: >"$tmp/svc_none" >"$tmp/svc_rec"
for _ in $(seq 3); do
	"$svc" 2 | sed -n 's/^cpu_us_per_request //p' >>"$tmp/svc_none"
	"$svc" 2 >"$tmp/svc.out" &
	spid=$!
	until grep -q '^ready' "$tmp/svc.out" 2>/dev/null; do sleep 0.01; done
	"$ct" record -p "$spid" -o "$tmp/svc.json" 2>"$tmp/svc.err" &
	rpid=$!
	wait "$spid"
	wait "$rpid"
	sed -n 's/^cpu_us_per_request //p' "$tmp/svc.out" >>"$tmp/svc_rec"
	sed -n 's/^closuretrace: \(.*\), written.*/    record -p: \1/p' "$tmp/svc.err"
done
sn=$(median <"$tmp/svc_none")
sr=$(median <"$tmp/svc_rec")
echo "2. service, CPU per request (median of 3): unrecorded $sn us, record -p $sr us"
echo "  recorded / unrecorded = $(ratio "$sr" "$sn")   (goal <= 1.10; the recording attaches 200 ms after start)"

# 4. untraced: batching compiled in against not.
: >"$tmp/in" >"$tmp/out4"
for _ in $(seq $runs); do
	"$ops_static" "$hits" | sed -n 's/^ns_per_hit /get+put(inline) /p' >>"$tmp/in"
	"$dir/bench_record_ops_nobatch" "$hits" | sed -n 's/^ns_per_hit /get+put(inline) /p' >>"$tmp/out4"
	"$dir/lib_ops_probes" >>"$tmp/in"
	"$dir/lib_ops_nobatch" >>"$tmp/out4"
done
echo "4. untraced, batching compiled in vs not (median of $runs alternating runs):"
awk '{ print "in", $0 }' "$tmp/in" >"$tmp/both"
awk '{ print "out", $0 }' "$tmp/out4" >>"$tmp/both"
sort -k2,2 -k3,3g "$tmp/both" | awk '
	{ v[$1, $2, ++n[$1, $2]] = $3; ops[$2] = 1 }
	function median(side, op,   c) { c = n[side, op]; return v[side, op, int((c + 1) / 2)] }
	END {
		for (op in ops) {
			a = median("in", op); b = median("out", op)
			printf "  %-34s %9.2f %9.2f ns %7.3fx  goal <= 1.02x\n", op, a, b, a / b
		}
	}'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit ${status:-0}
