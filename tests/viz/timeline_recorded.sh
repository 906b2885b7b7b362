#!/usr/bin/env bash
# The timeline of a real recording (root, BPF, uprobes): examples/blockio with its planted leak,
# recorded, converted (82 slices: main, its run, 20 requests of 3 bios) and checked against the format (timeline_check.py, one instant per trace
# event); its leaked bio is one LEAKED slice, its workqueue threads are named by what they ran,
# and the hops between threads are arrows of every kind, as many of each as the trace has hops
# (timeline_check.py --hops counts them from the events).
#   timeline_recorded.sh CLOSURETRACE BLOCKIO CHECKER
# Exits 0 (pass), 1 (fail) or 77 (skip: common.sh's skip_without_bpf; CLOSURETRACE_NO_SKIP=1 fails instead).
set -u
tool=$1 blockio=$2 checker=$3
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
keep_going=1
scratch
skip_without_bpf

"$tool" record -o "$tmp/t.json" -- "$blockio" --requests 20 --bios 3 --leak >"$tmp/out" 2>&1 ||
	fail "record: exit $?: $(cat "$tmp/out")"
"$tool" timeline -i "$tmp/t.json" -o "$tmp/tl.json" 2>"$tmp/err" || fail "timeline: exit $?"
grep -q "^closuretrace timeline: wrote [0-9]* events (82 closure slices, [0-9]* operations" \
	"$tmp/err" || fail "timeline: $(cat "$tmp/err")"
python3 "$checker" "$tmp/tl.json" "$tmp/t.json" --hops >"$tmp/check" || fail "$(cat "$tmp/check")"
n=$(grep -c '"ph":"b","cat":"closure.leaked","name":"LEAKED ' "$tmp/tl.json")
[ "$n" = 1 ] || fail "$n LEAKED slices, expected 1"
n=$(grep -c '"ph":"b","cat":"closure.kept_alive","name":"KEPT ALIVE ' "$tmp/tl.json")
[ "$n" = 3 ] || fail "$n KEPT ALIVE slices, expected 3 (request, run, main)"
grep -q '"ph":"M","name":"thread_name".*"name":"blockio-wq [0-9]* [a-z_]* (wq blockio-wq)"' "$tmp/tl.json" ||
	fail "no workqueue thread named by its name, its continuation and its workqueue's name"
for kind in released "child finished" "first run" continued reference; do
	grep -q "\"ph\":\"f\",\"cat\":\"closure.op\",\"name\":\"$kind\"" "$tmp/tl.json" ||
		fail "no '$kind' arrow"
done
exit $status
