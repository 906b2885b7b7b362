#!/bin/bash
# hang_test.sh PROG SRCDIR CLOSURETRACE CLOSURE_DEBUG(0|1): uuid_write built with SKIP_PUT hangs (its bio
# completion's error path returns before closure_put). check --timeout 3 must end it (124) and
# name the line of the skipped put (the root of the hang), the closure_sync the writer hangs in a
# note under it; report, report --json, graph and timeline on the same trace must agree.
# Root and BPF (elsewhere SKIP, exit 77, unless CLOSURETRACE_NO_SKIP=1).
set -u
PROG=$1 SRC=$2 CT=$3 DEBUG=$4
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh" # skip_without_bpf
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

fail() {
	echo "FAIL [hang]: $*"
	[ -s err ] && { echo "--- err:"; cat err; }
	exit 1
}

line_of() {
	grep -n "/\* $1 \*/" "$SRC/uuid_write.c" | cut -d: -f1
}

skip_without_bpf
S=$(realpath "$SRC/uuid_write.c")
SH=$(shown_source "$S" "$(dirname "$PROG")") # as check, report and ps show it
PUT=$(line_of UUID_ENDIO_PUT) SYNC=$(line_of UUID_WRITE_SYNC) INIT=$(line_of UUID_IO_INIT)
[ -n "$PUT" ] && [ -n "$SYNC" ] && [ -n "$INIT" ] || fail "markers missing in uuid_write.c"

"$CT" check --timeout 3 --keep-trace t.json -- "$PROG" >out 2>err </dev/null
RC=$?
[ "$RC" = 124 ] || fail "exit status $RC, expected 124"
mapfile -t ERRORS < <(grep -E '^[^ ]+: error: ' err)
[ "${#ERRORS[@]}" = 1 ] || fail "${#ERRORS[@]} errors, expected 1"
[ "${ERRORS[0]}" = "$SH:$PUT: error: closure never finished, the root of a hang: put 1 reference back; the finished closures of its kind put 2 here" ] ||
	fail "the first error is not the skipped put: ${ERRORS[0]}"
grep -qx "$SH:$SYNC: note: 1 stuck closure waits here, inside closure_sync" err ||
	fail "the closure_sync is not a note under the root"
grep -qx "$SH:$INIT: note: the closure (uuid_io) was initialised here, in uuid_io" err ||
	fail "the root's init site is not noted"
grep -Eqx "closuretrace: note: 1 stuck closure waits behind it: quiet for [0-9.]+ (s|ms) before the process was ended" err ||
	fail "what waits behind the root is not noted"
grep -Eqx "closuretrace: 1 error: 1 closure leaked or stuck; [0-9]+ events, 0 lost" err ||
	fail "no summary"
grep -q "no leaks" err && fail "'no leaks' on a hang"

# The same verdict in report, report --json, graph and timeline.
"$CT" report -i t.json >report.txt 2>&1 || fail "report: $(cat report.txt)"
grep -Eqx "closures: 24 \(22 finished, 2 unfinished: 0 in flight, 0 suspects, 0 kept alive by them; 1 root of a hang; 1 stuck\)" report.txt ||
	fail "report's counts: $(cat report.txt)"
grep -qx "    blame: $SH:$PUT (uuid_endio): put 1 reference back; the finished closures of its kind put 2 here (sure: high, the only call site that differs from the finished closures of its kind, by exactly the references held)" report.txt ||
	fail "report does not blame the put: $(cat report.txt)"
# Ages count to the end of the recording (3 s), not to the last event.
grep -Eq "^  root 1: .* alive [0-9.]+ s at the end$" report.txt || fail "the root's age: $(cat report.txt)"
"$CT" report --json -i t.json >report.json || fail "report --json"
python3 - "$SH:$PUT" <<'EOF' || fail "report --json disagrees"
import json, sys
r = json.load(open("report.json"))
assert r["totals"]["hang_roots"] == 1, r["totals"]
(leak,) = r["hang_roots"]
assert leak["verdict"] == "root of a hang" and leak["waiting_behind"] == 1, leak
assert leak["blame"][0]["site"] == sys.argv[1], leak["blame"]
assert leak["age_ns"] >= 2_000_000_000, leak["age_ns"]
assert len(r["stuck"]) == 1
EOF
"$CT" graph -i t.json -T dot >g.dot 2>&1 || fail "graph: $(cat g.dot)"
# dot breaks long labels with a backslash and a newline.
sed -e ':a' -e '/\\$/{N;s/\\\n//;ba}' g.dot | grep -q "ROOT OF A HANG: holds 1 ref" ||
	fail "the graph does not mark the root"
"$CT" timeline -i t.json -o t.tl.json >tl.txt 2>&1 || fail "timeline: $(cat tl.txt)"
grep -q '"cat":"closure.hang_root"' t.tl.json || fail "the timeline does not mark the root"
echo "ok: hang traced to $SH:$PUT, stuck at $SH:$SYNC"

# ps of the hung process (a CLOSURE_DEBUG libclosure keeps the list): what each closure is (its
# init site), where it was last given a continuation, how long it has lived and waited.
[ "$DEBUG" = 1 ] || exit 0
"$PROG" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$WORK"' EXIT
AGE='[0-9.]+ (ns|µs|ms|s)' X='0x[0-9a-f]+'
# Until the hang has settled: the writer asleep, and the bio's completion past (it drops the
# reference the I/O held; a ps in between, 1.5 ms after the start, saw the child still at r 2).
for _ in $(seq 100); do
	"$CT" ps -p $pid >ps.txt 2>err || fail "ps: $(cat err)"
	grep -q "sleeps in closure_sync" ps.txt && grep -Eq "^  $X r 1 D " ps.txt && break
	sleep 0.05
done
want=("process $pid \\($(realpath "$PROG")\\): 2 live closures, listed by .*"
	"$X r 1 S stack last at $SH:$(line_of UUID_WRITE_STACK) \\(__uuid_write\\), init at $SH:$(line_of UUID_WRITE_STACK) \\(__uuid_write\\), alive $AGE"
	"  sleeps in closure_sync at $SH:$SYNC \\(__uuid_write\\), thread $pid, for 1 reference: 1 held by the child below; waiting $AGE"
	"  $X r 1 D -> uuid_io_unlock last at $SH:$(line_of UUID_IO_RETURN) \\(uuid_io\\), init at $SH:$INIT \\(uuid_io\\), alive $AGE")
[ "$(wc -l <ps.txt)" = ${#want[@]} ] || fail "ps: $(cat ps.txt)"
n=0
while IFS= read -r line; do
	[[ $line =~ ^${want[$n]}$ ]] || fail "ps line $((n + 1)): '$line' does not match '${want[$n]}'"
	n=$((n + 1))
done <ps.txt
echo "ok: ps shows init and last sites and ages of the hung closures"
