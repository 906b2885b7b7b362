#!/usr/bin/env bash
# The trailer of a sampled recording (issue 26 item 4): report says what share of the trees it saw
# and scales nothing, in text and JSON; so for the closures record -p's snapshot missed; a
# trailer whose counts make no sense is FILE:LINE: error: and exit 2.
#   sample_trailer_test.sh CLOSURETRACE
set -uo pipefail
ct=$1
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1
header='{"type":"header","format":"closuretrace","version":1,"pid":1,"exe":"/x","start_ns":0}'
trace() { # trace FILE END_FIELDS: a header, one finished root, the end record with the fields
	printf '%s\n%s\n%s\n%s\n{"type":"end","events":3,"lost":0,"duration_ns":10,"reason":"exit"%s}\n' "$header" \
		'{"type":"event","ts":1,"tid":1,"ev":"init","cl":"0x10","remaining":1,"flags":"R","ip":"0x1","parent":"0x0","stack":false}' \
		'{"type":"event","ts":2,"tid":1,"ev":"continue_at","cl":"0x10","remaining":0,"flags":"","ip":"0x2","fn":"0x0","wq":"0x0","how":"return"}' \
		'{"type":"event","ts":3,"tid":1,"ev":"finish","cl":"0x10","remaining":0,"flags":"","ip":"0x2","parent":"0x0"}' \
		"$2" >"$1"
}

# noted NAME FIELDS NOTE: report of a trace whose trailer has FIELDS says "# note: NOTE".
noted() {
	trace "$1.json" "$2"
	"$ct" report -i "$1.json" >"$1.txt" 2>&1 || fail "report of $1.json: $(cat "$1.txt")"
	grep -qxF "# note: $3" "$1.txt" || fail "$1: $(head -3 "$1.txt")"
}
# json_holds NAME PYTHON: report --json of NAME.json, d its document, makes PYTHON true.
json_holds() {
	"$ct" report --json -i "$1.json" >"$1.out.json" || fail "report --json of $1.json"
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$1.out.json" ||
		fail "report --json of $1.json: $2"
}

noted sampled ',"sample":4,"trees":8,"trees_left_out":6' 'sampled, 2 of 8 trees recorded (25.0%), 6 left out whole: every closure here has its whole life; the counts are of the recorded trees, not scaled (one root in 4 asked)'
json_holds sampled 'd["trees"] == {"sample": 4, "trees": 8, "trees_left_out": 6}'
# A recorder that fell behind (no sample asked): said so.
noted behind ',"trees":10,"trees_left_out":3' '7 of 10 trees recorded (70.0%), 3 left out whole (the recorder fell behind: no new tree was recorded): every closure here has its whole life; the counts are of the recorded trees, not scaled'
# Every tree recorded (record -p without --sample counts them): no note.
trace all.json ',"trees":10,"trees_left_out":0'
"$ct" report -i all.json >a.txt 2>&1 || fail "report: $(cat a.txt)"
grep -q "trees recorded" a.txt && fail "a note for a trace with every tree: $(head -3 a.txt)"
# record -p's snapshot missed closures that ended while it was read (issue 26 item 5): a note,
# in text and in JSON's warnings; none when it missed none.
noted missed ',"snapshot_missed":3' '3 closures from before the recording ended while the closures alive at attach were being read: left out (their init is not known)'
json_holds missed 'any(x.startswith("3 closures from before the recording") for x in d["warnings"])'
grep -q "from before the recording ended" a.txt && fail "a missed note for a trace without: $(head -3 a.txt)"
# record -p's closures met mid-life and not read (issue 35 item 3): counted in a note.
noted midlife ',"midlife_read":7,"midlife_unread":2,"midlife_limited":3' '5 closures from before the recording not read when met mid-life: 2 had ended (left out), 3 were past the recorder'"'"'s bound of reads a second (left out until read)'
json_holds midlife 'any(x.startswith("5 closures from before the recording not read") for x in d["warnings"])'
# A library whose closures cannot be read (older than the registry): said once, at the top of the
# report and in the graph's label; what the trace says is shown visibly.
unread='the closures made before the recording could not be read (%s): one that the trace does not begin is shown from its first event, without its init site, its parent or the references it held then'
# shellcheck disable=SC2059
noted unread ',"unread_why":"its libclosure keeps no live list"' "$(printf "$unread" 'its libclosure keeps no live list')"
[ "$(grep -c 'could not be read' unread.txt)" = 1 ] || fail "not said once: $(cat unread.txt)"
# shellcheck disable=SC2059
noted unread_esc ',"unread_why":"\u001b]2;PWNED\u0007"' "$(printf "$unread" '\u001b]2;PWNED\u0007')"
"$ct" graph -T dot -i unread.json -o unread.dot || fail "graph of unread.json"
grep -q 'closures from before the recording not read (its libclosure keeps no live list)' unread.dot ||
	fail "the graph's label does not say it: $(grep -m2 label unread.dot)"
"$ct" graph -T dot -i midlife.json -o midlife.dot || fail "graph of midlife.json"
grep -q 'not read' midlife.dot && fail "the graph says so of a library that was read: $(grep -m2 label midlife.dot)"

# Hostile trailers.
n=0
while IFS='|' read -r fields message; do
	n=$((n + 1))
	trace "bad$n.json" "$fields"
	expect 2 "bad$n.json:5: error: $message" "$ct" report -i "bad$n.json"
done <<'EOF2'
,"sample":1|"sample" must be 2 or more (one tree in N)
,"trees":5|"trees" without "trees_left_out"
,"trees":5,"trees_left_out":6|"trees_left_out" (6) must be from 0 to "trees" (5)
,"trees":-1,"trees_left_out":0|"trees_left_out" (0) must be from 0 to "trees" (-1)
,"trees":5,"trees_left_out":"x"|"trees_left_out" must be an integer
,"snapshot_missed":-1|"snapshot_missed" (-1) must be 0 or more
,"snapshot_missed":"x"|"snapshot_missed" must be an integer
,"midlife_read":-1|"midlife_read" (-1) must be 0 or more
,"midlife_limited":"x"|"midlife_limited" must be an integer
,"unread_why":3|"unread_why" must be a string
EOF2
exit $status
