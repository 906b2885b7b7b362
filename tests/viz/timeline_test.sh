#!/usr/bin/env bash
# closuretrace timeline beyond the goldens:
# - every fixture's timeline is valid trace-event JSON, one instant per trace event, one arrow per
#   hop between threads (timeline_check.py --hops);
# - -o writes the whole file or nothing: bad input leaves an older file as it was, with no temporary
#   file beside it; the file gets the umask's mode; /dev/null stays a device;
# - leaks at scale: each of 20 requests that leak a bio shows one LEAKED and one KEPT ALIVE slice;
# - lost events are said (the command prints the warning the timeline returns), then what was
#   written;
# - --closure needs a file (it reads the trace twice).
#   timeline_test.sh CLOSURETRACE VIZ_TRACEGEN FIXTURES CHECKER
set -u
tool=$1 gen=$2 fixtures=$3 checker=$4
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
keep_going=1
scratch

for f in hops leak_under_children stuck_sync lives two_processes truncated sync_timeout \
	late_event fold hostile_names live_service kernel_patterns cut_short cycle2 cycle3 handoff; do
	"$tool" timeline -i "$fixtures/$f.json" -o "$tmp/$f.tl.json" 2>"$tmp/err" ||
		fail "$f: exit $?: $(cat "$tmp/err")"
	python3 "$checker" "$tmp/$f.tl.json" "$fixtures/$f.json" --hops >"$tmp/check" ||
		fail "$f: $(cat "$tmp/check")"
done

# Every hop between threads is an arrow (issue 21 item 3). handoff.json: a request whose
# continue_at on 101 runs on 102 after the device thread 103 put the reference 101 took, and a
# closure_wait on 101 that 103 wakes, whose continuation runs on 102. Exactly: 2 continue_at ->
# run, 2 releases -> run, 2 init -> first run, 1 get -> put, 1 wait -> wake.
"$tool" timeline -i "$fixtures/handoff.json" -o "$tmp/handoff.tl.json" 2>/dev/null || fail "handoff: exit $?"
python3 "$checker" "$tmp/handoff.tl.json" "$fixtures/handoff.json" \
	--flows 'continued=2,released=2,first run=2,reference=1,woken=1' >"$tmp/check" ||
	fail "handoff: $(cat "$tmp/check")"

# Whole or nothing.
echo old >"$tmp/out.json"
"$tool" timeline -i "$fixtures/malformed.json" -o "$tmp/out.json" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] || fail "malformed: exit $rc, expected 2"
grep -q '^malformed.json:4: error: invalid JSON' <(sed "s|$fixtures/||" "$tmp/err") ||
	fail "malformed: no FILE:LINE error: $(cat "$tmp/err")"
[ "$(cat "$tmp/out.json")" = old ] || fail "malformed: the older output was overwritten"
leftover=$(find "$tmp" -name '*out.json.?*')
[ -z "$leftover" ] || fail "a temporary file was left behind: $leftover"
"$tool" timeline -i "$fixtures/hops.json" -o "$tmp/out.json" 2>"$tmp/err" || fail "hops -o: exit $?"
grep -qx "closuretrace timeline: wrote 80 events (5 closure slices, 33 operations, 1 closure_sync slice, 16 arrows) to $tmp/out.json" \
	"$tmp/err" || fail "hops -o: stderr: $(cat "$tmp/err")"
python3 "$checker" "$tmp/out.json" "$fixtures/hops.json" >/dev/null || fail "hops -o: invalid"
mode=$(umask 022 && rm -f "$tmp/out.json" && "$tool" timeline -i "$fixtures/hops.json" \
	-o "$tmp/out.json" 2>/dev/null && stat -c %a "$tmp/out.json")
[ "$mode" = 644 ] || fail "-o under umask 022: mode $mode, expected 644 (as a plain create)"
if [ -w /dev/null ]; then
	"$tool" timeline -i "$fixtures/hops.json" -o /dev/null 2>/dev/null || fail "-o /dev/null: exit $?"
	[ -c /dev/null ] || fail "/dev/null is no longer a device"
fi

# Leaks at scale.
"$gen" --closures 60 --fanout 2 --leak-every 1 >"$tmp/leaky.json"
"$tool" timeline -i "$tmp/leaky.json" -o "$tmp/leaky.tl.json" 2>/dev/null || fail "leaky: exit $?"
python3 "$checker" "$tmp/leaky.tl.json" "$tmp/leaky.json" >"$tmp/check" || fail "leaky: $(cat "$tmp/check")"
n=$(grep -c '"ph":"b","cat":"closure.leaked","name":"LEAKED submit_bio"' "$tmp/leaky.tl.json")
[ "$n" = 20 ] || fail "leaky: $n LEAKED submit_bio slices, expected 20"
n=$(grep -c '"ph":"b","cat":"closure.kept_alive","name":"KEPT ALIVE submit_request -> request_done"' "$tmp/leaky.tl.json")
[ "$n" = 20 ] || fail "leaky: $n KEPT ALIVE request_done slices, expected 20"
n=$(grep -c '"ph":"b","cat":"closure","name":"submit_bio"' "$tmp/leaky.tl.json")
[ "$n" = 20 ] || fail "leaky: $n finished submit_bio slices, expected 20"

# Lost events: the warning, then the summary, and nothing else.
"$tool" timeline -i "$fixtures/hostile_names.json" -o "$tmp/lost.json" 2>"$tmp/err" ||
	fail "lost events: exit $?"
printf '%s\n' "$fixtures/hostile_names.json: warning: 2 events were lost: the timeline has holes" \
	"closuretrace timeline: wrote 7 events (1 closure slice, 3 operations, 0 closure_sync slices, 0 arrows) to $tmp/lost.json" |
	cmp -s - "$tmp/err" || fail "lost events: stderr: $(cat "$tmp/err")"

# --closure reads the trace twice.
"$tool" timeline --closure 0x7f0000020000 -i - <"$fixtures/hops.json" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 2 ] || fail "--closure on stdin: exit $rc, expected 2"
grep -qx "closuretrace timeline: --closure reads the trace twice: give it a file, not standard input" \
	"$tmp/err" || fail "--closure on stdin: $(cat "$tmp/err")"
exit $status
