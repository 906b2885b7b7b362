#!/usr/bin/env bash
# One name per closure (issue 21 item 4): the leaked bio of `blockio --leak` is named by its
# kind, "init function -> first continuation", with the same words in check, report,
# report --json, graph, timeline, explain and top (top on a live blockio, the same kind).
#   kind_names.sh CLOSURETRACE BLOCKIO
# Root and BPF (elsewhere SKIP, exit 77, unless CLOSURETRACE_NO_SKIP=1).
set -u
ct=$1 blockio=$2
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
skip_without_bpf
NAME='request_dispatch -> bio_submit'

"$ct" check --keep-trace t.json -- "$blockio" --leak >out.txt 2>err.txt
[ $? = 1 ] || fail "check: $(cat err.txt)"
grep -qE "^[^ ]+blockio\.c:[0-9]+: note: the leaked closure \($NAME\) was initialised here, in request_dispatch$" err.txt ||
	fail "check names it otherwise: $(cat err.txt)"

"$ct" report -i t.json >report.txt || fail "report"
grep -qE "^  leak 1: [0-9]+:0x[0-9a-f]+#[0-9]+ $NAME, init at " report.txt || fail "report's leak: $(cat report.txt)"
grep -qE " $NAME \([^ ]+blockio\.c:[0-9]+\)$" report.txt || fail "report's kinds table: $(cat report.txt)"
"$ct" report --json -i t.json >report.json || fail "report --json"
addr=$(python3 - "$NAME" <<'EOF'
import json, sys
r = json.load(open("report.json"))
(leak,) = r["leaks"]
assert leak["function"] == sys.argv[1], leak["function"]
assert any(k["kind"].startswith(sys.argv[1] + " (") for k in r["kinds"]), [k["kind"] for k in r["kinds"]]
print(leak["closure"])
EOF
) || fail "report --json names it otherwise"

"$ct" graph -T dot -i t.json >g.dot || fail "graph"
python3 -c 'import sys; print(open(sys.argv[1]).read().replace("\\\n", ""))' g.dot |
	grep -qE "label=\"$NAME\\\\ninit ([^ \"]*/)?blockio\.c:" || fail "graph names it otherwise"

"$ct" timeline -i t.json -o tl.json 2>/dev/null || fail "timeline"
grep -qF "\"cat\":\"closure.leaked\",\"name\":\"LEAKED $NAME\"" tl.json || fail "timeline names it otherwise"

"$ct" explain -i t.json "$addr" >explain.txt || fail "explain $addr"
head -1 explain.txt | grep -qE "^$addr $NAME, init at " ||
	fail "explain names it otherwise: $(head -1 explain.txt)"

# top on a live blockio: the row of the bio's init site, once top has read events past its
# snapshot (a snapshot's init names no continuation yet; blockio at full speed writes faster than
# top reads, so the first frames after the snapshot may wait for the ring buffer's backlog; " +N"
# counts other kinds of that init site, those of closures alive at attach among them).
"$blockio" --requests 1000000 >/dev/null &
bpid=$!
pids+=("$bpid")
"$ct" top -b -n 8 -d 0.5 -p $bpid >top.txt 2>&1
grep -qE "  $NAME( \+[0-9]+)? \(blockio\.c:[0-9]+\)$" top.txt || fail "top names it otherwise: $(cat top.txt)"
echo "ok: '$NAME' in check, report, report --json, graph, timeline, explain and top"
exit $status
