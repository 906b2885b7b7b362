#!/bin/bash
# --stacks, for real:  stacks_test.sh CASE CLOSURETRACE ST_PROG SRCDIR
# Each case asserts exact exit statuses and exact lines. Needs root and BPF for all but usage and
# damaged; elsewhere those print SKIP and exit 77 (a failure when CLOSURETRACE_NO_SKIP=1).
set -u
CASE=$1 CT=$2 PROG=$3 SRC=$4
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh" # skip_without_bpf, shown_source
SOURCE=$SRC/st_prog.c
SHOWN=$(shown_source "$SOURCE" "$(dirname "$PROG")") # as the diagnostics show it
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

fail() {
	echo "FAIL [$CASE]: $*"
	[ -f err ] && { echo "--- stderr:"; cat err; }
	exit 1
}

# The line of SOURCE that carries a marker comment.
line_of() {
	grep -n "/\* $1 \*/" "$SOURCE" | cut -d: -f1
}
GET=$(line_of GET)
HELPER=$(line_of HELPER)
MAIN=$(line_of MAIN)
INIT=$(line_of INIT)

expect_rc() {
	[ "$RC" = "$1" ] || fail "exit status $RC, expected $1"
}

# The error, its first three frames (take_ref, helper, main: the frames below main are libc's)
# and the init note: exactly.
expect_stack_lines() {
	local got want
	got=$(grep -E "^$SHOWN:|^    #[0-2] " err)
	want="$SHOWN:$GET: error: closure leaked: took 1 reference, 1 not put back
    #0 $SHOWN:$GET (take_ref)
    #1 $SHOWN:$HELPER (helper)
    #2 $SHOWN:$MAIN (main)
$SHOWN:$INIT: note: the leaked closure (main) was initialised here, in main"
	[ "$got" = "$want" ] || fail "lines differ:
$got
--- expected:
$want"
}

case_check_frames() {
	skip_without_bpf
	"$CT" check --stacks 8 -- "$PROG" >out 2>err
	RC=$?
	expect_rc 1
	expect_stack_lines
	# LSan's shape: at least 3 frames with FILE:LINE, one of them in main, at most 8.
	[ "$(grep -cE '^    #[0-9]+ [^ ]+:[0-9]+ \(' err)" -ge 3 ] || fail "fewer than 3 frames"
	grep -qE '^    #[0-9]+ .* \(main\)$' err || fail "no frame in main"
	[ "$(grep -cE '^    #' err)" -le 8 ] || fail "more than 8 frames"
}

# The frames in SARIF: a code flow whose thread flow goes main, helper, take_ref (outermost first).
case_sarif() {
	skip_without_bpf
	"$CT" check --stacks 8 --sarif out.sarif -- "$PROG" >out 2>err
	RC=$?
	expect_rc 1
	python3 - "$SHOWN" "$GET" "$HELPER" "$MAIN" <<'PY' || fail "SARIF"
import json, sys, urllib.parse
source, get, helper, main = sys.argv[1], *map(int, sys.argv[2:])
uri = "file://" + urllib.parse.quote(source) if source.startswith("/") else urllib.parse.quote(source)
result, = json.load(open("out.sarif"))["runs"][0]["results"]
flow, = result["codeFlows"]
assert flow["message"]["text"] == "the stack of the blamed call site", flow["message"]
thread, = flow["threadFlows"]
ours = [(l["location"]["physicalLocation"]["region"]["startLine"], l["location"]["message"]["text"])
        for l in thread["locations"]
        if l["location"].get("physicalLocation", {}).get("artifactLocation", {}).get("uri") == uri]
assert ours == [(main, "main"), (helper, "helper"), (get, "take_ref")], ours
assert thread["locations"][-1]["location"]["physicalLocation"]["region"]["startLine"] == get
PY
}

# record --stacks 4: "frames" on the init and the get only, at most 4, each with its sym record;
# explain shows the get's under its blame.
case_record_frames() {
	skip_without_bpf
	"$CT" record --stacks 4 -o t.json -- "$PROG" >out 2>err
	RC=$?
	expect_rc 0
	python3 - <<'PY' || fail "trace"
import json
recs = [json.loads(l) for l in open("t.json")]
syms = {r["addr"] for r in recs if r["type"] == "sym"}
evs = [r for r in recs if r["type"] == "event"]
with_frames = [r["ev"] for r in evs if "frames" in r]
assert with_frames == ["init", "get"], with_frames
for r in evs:
    for a in r.get("frames", []):
        assert a in syms, ("no sym record", a)
    assert len(r.get("frames", [])) <= 4, r
get, = [r for r in evs if r["ev"] == "get"]
assert get["frames"][0] == get["ip"], get
PY
	cl=$(grep -o '"ev":"get","cl":"[^"]*"' t.json | cut -d'"' -f8)
	"$CT" explain -i t.json "$cl" >out 2>err
	RC=$?
	expect_rc 0
	got=$(grep -A3 '^  blame: ' out)
	want="  blame: $SHOWN:$GET: took 1 reference, 1 not put back
      #0 $SHOWN:$GET (take_ref)
      #1 $SHOWN:$HELPER (helper)
      #2 $SHOWN:$MAIN (main)"
	[ "$got" = "$want" ] || fail "explain differs:
$got
--- expected:
$want"
}

# Without --stacks nothing changes: no "frames", no stack lines.
case_off_unchanged() {
	skip_without_bpf
	"$CT" record --per-op -o t.json -- "$PROG" >out 2>err
	RC=$?
	expect_rc 0
	! grep -q '"frames"' t.json || fail "frames without --stacks"
	"$CT" check -- "$PROG" >out 2>err
	RC=$?
	expect_rc 1
	! grep -q '^    #' err || fail "stack lines without --stacks"
}

# --stacks without a number, 0, beyond 64, and with --no-bpf: refused with 2 and why.
case_usage() {
	local cmd args want
	for cmd in check record; do
		while IFS='|' read -r args want; do
			# shellcheck disable=SC2086 # args are words
			"$CT" $cmd $args >out 2>err
			RC=$?
			expect_rc 2
			grep -qF "closuretrace $cmd: $want" err || fail "$cmd $args: '$(cat err)'"
		done <<EOF2
--stacks|an option is missing its argument: --stacks
--stacks -- $PROG|--stacks needs a number from 1 to 64: --
--stacks 0 -- $PROG|--stacks needs a number from 1 to 64: 0
--stacks 65 -- $PROG|--stacks needs a number from 1 to 64: 65
--stacks 4 --no-bpf -- $PROG|--stacks needs the BPF probes: not with --no-bpf
EOF2
	done
	"$CT" record --stacks 4 --sample 2 -- "$PROG" >out 2>err
	RC=$?
	expect_rc 2
	grep -qF -- "--sample needs the batched transport: not with --stacks" err ||
		fail "--sample: '$(cat err)'"
}

# A damaged "frames": FILE:LINE: error: and 2, never a crash, by both of the reader's paths (a
# nested array goes to jansson); a good one is read.
case_damaged() {
	local hdr ev frames want="must be an array of at most 64 address strings"
	hdr='{"type":"header","format":"closuretrace","version":1,"pid":1,"exe":"x","start_ns":0}'
	ev='{"type":"event","ts":1,"tid":1,"ev":"get","cl":"0x10","remaining":2,"ip":"0x20"'
	for frames in '["zz"]' '5' '["0x1",7]' '[["0x1"]]' '["0x"]' '{"a":1}' \
		"[$(printf '"0x1",%.0s' $(seq 64))\"0x1\"]" '["0x12345678901234567"]'; do
		printf '%s\n%s,"frames":%s}\n' "$hdr" "$ev" "$frames" >t.json
		"$CT" report -i t.json >out 2>err
		RC=$?
		expect_rc 2
		grep -qF "t.json:2: error: \"frames\" $want" err || fail "frames $frames: '$(cat err)'"
	done
	printf '%s\n%s,"frames":["0x20","0x30"]}\n' "$hdr" "$ev" >t.json
	"$CT" report -i t.json >out 2>err
	RC=$?
	expect_rc 0
}

"case_$CASE"
echo "PASS [$CASE]"
