#!/usr/bin/env bash
# Thread and workqueue names reach the trace (issue 21 item 6), the same through both transports:
# examples/blockio recorded with BPF and with the in-process sink (--no-bpf) gives a "workqueue"
# record named blockio-wq for the wq its continuations run on, a "thread" record named blockio-wq
# for each of its workers that ran one, and none for the main thread (it has the program's name,
# which the header says); the timeline
# names those tracks "blockio-wq TID FN (wq blockio-wq)", and report names the wq of a leaked
# closure's continuation. A hostile trace's names (control characters, quotes, invalid UTF-8, a
# name of 300 bytes) come out escaped and cut; a bad thread record is FILE:LINE and exit 2.
# record -p, twice on the same running service, gives the names in both recordings.
#   names_recorded.sh CLOSURETRACE BLOCKIO CHECKER FIXTURES SERVICE
# Without root, the BPF half fails under CLOSURETRACE_NO_SKIP=1 and is left out otherwise.
set -u
tool=$1 blockio=$2 checker=$3 fixtures=$4 service=$5
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1

names() { # TRACE: the names as "kind id name" lines, sorted
	python3 - "$1" <<'PY'
import json, sys
runs_wq, tids_ran, out = set(), set(), []
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
for r in recs:
    if r.get("type") == "event" and r["ev"] == "run" and r.get("wq", "0x0") != "0x0":
        runs_wq.add(r["wq"]); tids_ran.add(r["tid"])
pid = recs[0]["pid"]
wq = {r["wq"]: r["name"] for r in recs if r.get("type") == "workqueue"}
th = {r["tid"]: r["name"] for r in recs if r.get("type") == "thread"}
print("wqs ran on: %d, named: %s" % (len(runs_wq), sorted(wq.get(w, "-") for w in runs_wq)))
print("main: %s" % th.get(pid, "-"))
print("workers: named %s" % sorted(set(th.get(t, "-") for t in tids_ran)))
open(sys.argv[1] + ".workers", "w").write("%d\n" % len(tids_ran))
PY
}
want="wqs ran on: 1, named: ['blockio-wq']
main: -
workers: named ['blockio-wq']"

if [ "$(id -u)" = 0 ]; then
	"$tool" record -o "$tmp/bpf.json" -- "$blockio" --requests 20 --bios 3 --leak >"$tmp/out" 2>&1 ||
		fail "record: exit $?: $(cat "$tmp/out")"
	got=$(names "$tmp/bpf.json")
	[ "$got" = "$want" ] || fail "BPF: names: $got"
	# record -p twice on a running service: each recording learns the names anew (the threads
	# claimed their buffers in the first), at the first record of each thread after it attached.
	"$service" --rate 2000 --threads 2 >/dev/null 2>&1 &
	svc=$!
	pids+=("$svc")
	sleep 0.3
	for k in 1 2; do
		"$tool" record -p $svc -d 0.5 -o "$tmp/p$k.json" >"$tmp/out" 2>&1 ||
			fail "record -p ($k): exit $?: $(cat "$tmp/out")"
		got=$(names "$tmp/p$k.json")
		[ "$got" = "wqs ran on: 1, named: ['service']
main: -
workers: named ['service']" ] || fail "record -p ($k): names: $got"
	done
	kill $svc
	wait $svc 2>/dev/null
elif [ "${CLOSURETRACE_NO_SKIP:-}" = 1 ]; then
	fail "would skip the BPF half: needs root"
fi
"$tool" record --no-bpf -o "$tmp/sink.json" -- "$blockio" --requests 20 --bios 3 --leak \
	>"$tmp/out" 2>&1 || fail "record --no-bpf: exit $?: $(cat "$tmp/out")"
got=$(names "$tmp/sink.json")
[ "$got" = "$want" ] || fail "sink: names: $got"

for t in "$tmp"/bpf.json "$tmp"/sink.json; do
	[ -f "$t" ] || continue
	"$tool" timeline -i "$t" -o "$tmp/tl.json" 2>/dev/null || fail "$t: timeline: exit $?"
	python3 "$checker" "$tmp/tl.json" "$t" >"$tmp/check" || fail "$t: $(cat "$tmp/check")"
	n=$(grep -c '"thread_name".*"name":"blockio-wq [0-9]* [a-z_]* (wq blockio-wq)"' "$tmp/tl.json")
	w=$(cat "$t.workers")
	[ "$n" = "$w" ] && [ "$n" -ge 1 ] ||
		fail "$t: $n worker tracks named 'blockio-wq TID FN (wq blockio-wq)', expected $w"
	"$tool" report -i "$t" >"$tmp/report" 2>&1
	grep -q ': continuing at bio_endio on wq blockio-wq, alive ' "$tmp/report" ||
		fail "$t: report does not name the wq: $(grep 'leak 1' "$tmp/report")"
done

# Hostile names.
"$tool" timeline -i "$fixtures/names.json" -o "$tmp/tl.json" 2>"$tmp/err" ||
	fail "names.json: timeline: exit $?: $(cat "$tmp/err")"
python3 "$checker" "$tmp/tl.json" "$fixtures/names.json" >"$tmp/check" || fail "names.json: $(cat "$tmp/check")"
python3 - "$tmp/tl.json" >"$tmp/tracks" <<'PY' || fail "names.json: tracks: $(cat "$tmp/tracks")"
import json, sys
got = [e["args"]["name"] for e in json.load(open(sys.argv[1], encoding="utf-8"))["traceEvents"]
       if e["name"] == "thread_name"]
want = ["main\\u001b[31m\\u000a 101", 'io "x" \\ \\udcff 102 bio_done (wq %s)' % ("w" * 64)]
if got != want:
    print("got %r, expected %r" % (got, want))
    sys.exit(1)
PY
"$tool" report -i "$fixtures/names.json" >"$tmp/report" 2>&1
grep -q "on wq $(printf 'w%.0s' $(seq 64)), alive" "$tmp/report" ||
	fail "names.json: report: the wq's name is not cut at 64 bytes: $(grep 'leak 1' "$tmp/report")"
"$tool" report -i "$fixtures/bad_name.json" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 2 ] || fail "bad_name.json: exit $rc, expected 2"
grep -qx "$fixtures/bad_name.json:3: error: \"tid\" must be a thread id (0 to 2147483647)" "$tmp/err" ||
	fail "bad_name.json: $(cat "$tmp/err")"
exit $status
