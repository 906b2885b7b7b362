#!/usr/bin/env bash
# closuretrace ps against hung programs, for real. One case per invocation:
#   ps_test.sh CASE CLOSURETRACE BIN_DIR SOURCE_DIR CLOSURE_DEBUG(0|1) BLOCKIO
# Each case prints what it checks and exits 0 (pass) or 1 (fail).
set -uo pipefail
case_name=$1 ct=$2 bindir=$3 src=$4 debug=$5 blockio=$6
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
scratch
# The line number of the marker in ps_hang.c.
line_of() {
	grep -n "/\* $1 \*/" "$src/ps_hang.c" | cut -d: -f1
}
# start PROGRAM ARGS...: runs it in the background until it prints "ready"; sets $pid.
start() {
	"$@" >ready.txt 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 1 500); do
		grep -qx ready ready.txt && return 0
		sleep 0.02
	done
	fail "$* never got ready: $(cat ready.txt)"
}
# The process is still there and not stopped (ps must never stop it).
running() {
	local state
	kill -0 "$1" 2>/dev/null || fail "process $1 is gone"
	state=$(sed 's/^.*) //' "/proc/$1/stat" | cut -d' ' -f1)
	case $state in
	T | t) fail "process $1 is stopped (state $state)" ;;
	esac
	echo "ok: process $1 still running, state $state"
}
# match FILE REGEX...: the file's lines, one regex each (whole line), in order.
match() {
	local file=$1 n=0
	shift
	[ "$(wc -l <"$file")" = "$#" ] || fail "$file has $(wc -l <"$file") lines, not $#: $(cat "$file")"
	while IFS= read -r line; do
		n=$((n + 1))
		[[ $line =~ ^${!n}$ ]] || fail "line $n of $file: '$line' does not match '${!n}'"
	done <"$file"
	echo "ok: $file matches ($# lines)"
}

X='0x[0-9a-f]+'
# An age as ps prints it (the library's CLOCK_MONOTONIC stamps to the read).
AGE='[0-9.]+ (ns|µs|ms|s)'
# ps_hang.c as every command shows a source file: relative to its source root (common.sh).
S=$(shown_source "$(realpath "$src/ps_hang.c")" "$(realpath "$bindir")")

# ps of BIN hung with its tree (ps_hang.c tree); WAITED: what follows the closure_wait line.
tree_case() {
	local bin=$1 waited=$2
	start "$bin" tree
	expect 0 "" "$ct" ps -p "$pid"
	match out.txt "process $pid \\($(realpath "$bin")\\): 5 live closures" \
		"$X r 4 - -> parent_done last at $S:$(line_of L_CONTINUE) \\(hang_with_tree\\), init at $S:$(line_of L_PARENT) \\(hang_with_tree\\), alive $AGE" \
		"  $X r 2 RW last at $S:$(line_of L_WAITER) \\(hang_with_tree\\), init at $S:$(line_of L_WAITER) \\(hang_with_tree\\), alive $AGE" \
		"    waits on waitlist $X, closure_wait at $S:$(line_of L_WAIT) \\(hang_with_tree\\)$waited" \
		"  \\[3 closures, first $X\\] r 1 R last at $S:$(line_of L_KIDS) \\(hang_with_tree\\), init at $S:$(line_of L_KIDS) \\(hang_with_tree\\), oldest alive $AGE"
}

sync_case() {
	local bin=$1 header
	start "$bin" sync
	expect 0 "" "$ct" ps -p "$pid"
	header="process $pid \\($(realpath "$bin")\\): 2 live closures"
	[ "$bin" = "$bindir/ps_hang_shared" ] && header+=", listed by .*/libclosure\\.so[.0-9]*"
	match out.txt "$header" \
		"$X r 1 S stack last at $S:$(line_of L_STACK) \\(hang_in_sync\\), init at $S:$(line_of L_STACK) \\(hang_in_sync\\), alive $AGE" \
		"  sleeps in closure_sync at $S:$(line_of L_SYNC) \\(hang_in_sync\\), thread $pid, for 1 reference: 1 held by the child below; waiting $AGE" \
		"  $X r 1 R last at $S:$(line_of L_CHILD) \\(start_child\\), init at $S:$(line_of L_CHILD) \\(start_child\\), alive $AGE"
	running "$pid"
	# Read again: nothing changed, and reading did not disturb it.
	cp out.txt first.txt
	expect 0 "" "$ct" ps -p "$pid"
	# The same but for the ages, which grow.
	strip_ages() { sed -E "s/(alive|waiting) $AGE/\1 AGE/" "$1"; }
	diff -u <(strip_ages first.txt) <(strip_ages out.txt) || fail "a second ps differs"
	running "$pid"
}

case $case_name in
help)
	expect 0 "" "$ct" ps --help
	head -1 out.txt | grep -qx 'usage: closuretrace ps \[--json\] -p PID' || fail "usage: $(cat out.txt)"
	expect 0 "" "$ct" --help
	grep -qE '^  ps +the live closures of a running or hung process' out.txt || fail "not in the command list"
	echo "ok: help"
	;;
usage)
	expect 2 "closuretrace ps: give -p PID; see 'closuretrace ps --help'" "$ct" ps
	expect 2 "closuretrace ps: not a process id: abc; see 'closuretrace ps --help'" "$ct" ps -p abc
	expect 2 "closuretrace ps: not a process id: 0; see 'closuretrace ps --help'" "$ct" ps -p 0
	expect 2 "closuretrace ps: unknown option: --bogus; see 'closuretrace ps --help'" "$ct" ps --bogus -p 1
	expect 2 "closuretrace ps: unexpected argument: extra; see 'closuretrace ps --help'" "$ct" ps -p 1 extra
	echo "ok: usage errors exit 2 with one line"
	;;
no_process)
	true &
	gone=$!
	wait "$gone"
	expect 3 "closuretrace: no process with pid $gone; check the pid (ps -p $gone)" "$ct" ps -p "$gone"
	echo "ok: no process"
	;;
nodebug_tree)
	# The live registry is kept in every build: a library without CLOSURE_DEBUG is read as
	# the debug one is (issue 35), the same tree, init sites and ages (no wait's age: only a
	# CLOSURE_DEBUG build stamps closure_wait).
	tree_case "$bindir/ps_hang_nodebug" ""
	running "$pid"
	sleep 60 &
	pids+=($!)
	expect 3 "closuretrace: process $! has no libclosure that describes its live closures; link it with libclosure" \
		"$ct" ps -p $!
	echo "ok: the registry without CLOSURE_DEBUG; no libclosure: exit 3 with the remedy"
	;;
sync)
	sync_case "$bindir/ps_hang_debug"
	;;
sync_shared)
	sync_case "$bindir/ps_hang_shared"
	;;
json)
	start "$bindir/ps_hang_debug" sync
	# ps(1) EXIT STATUS: an output that cannot be written is 2, as report's.
	for form in --json ""; do
		"$ct" ps $form -p "$pid" >/dev/full 2>err.txt
		rc=$?
		[ $rc = 2 ] || fail "ps $form >/dev/full: exit $rc, expected 2"
		[ "$(cat err.txt)" = "closuretrace ps: cannot write standard output: No space left on device" ] ||
			fail "ps $form >/dev/full: $(cat err.txt)"
	done
	expect 0 "" "$ct" ps --json -p "$pid"
	python3 - out.txt "$pid" "$(realpath "$bindir/ps_hang_debug")" "$S" \
		"$(line_of L_STACK)" "$(line_of L_SYNC)" "$(line_of L_CHILD)" <<'PY' || fail "JSON"
import json, re, sys
doc = json.load(open(sys.argv[1]))
pid, exe, src = int(sys.argv[2]), sys.argv[3], sys.argv[4]
l_stack, l_sync, l_child = map(int, sys.argv[5:8])
def eq(a, b, what):
    if a != b:
        sys.exit(f"{what}: {a!r} != {b!r}")
eq(sorted(doc), ["closures", "complete", "consistent", "count", "exe", "library", "pid"], "keys")
eq((doc["pid"], doc["exe"], doc["library"], doc["count"], doc["consistent"], doc["complete"]),
   (pid, exe, exe, 2, True, True), "header")
eq(len(doc["closures"]), 1, "roots")
root = doc["closures"][0]
keys = ["addr", "age_ns", "children", "count", "fn", "flags", "init", "last_ns", "parent", "site",
        "stack", "sync", "waitlist"]
keys = sorted(keys)
eq(sorted(root), keys, "closure keys")
hexre = re.compile(r"0x[0-9a-f]+$")
assert hexre.match(root["addr"]), root["addr"]
def site(s, func, line):
    eq(sorted(s), ["addr", "file", "func", "line"], "site keys")
    assert hexre.match(s["addr"]), s
    eq((s["func"], s["file"], s["line"]), (func, src, line), "site")
eq((root["count"], root["flags"], root["stack"], root["parent"], root["fn"], root["waitlist"]),
   (1, ["sleeping"], True, None, None, None), "root")
site(root["site"], "hang_in_sync", l_stack)
site(root["init"], "hang_in_sync", l_stack)
# Ages: positive, the closure older than (or as old as) its sleep in closure_sync.
assert 0 < root["sync"]["waiting_ns"] <= root["age_ns"], root
assert 0 < root["last_ns"] <= root["age_ns"], root
eq(sorted(root["sync"]), ["site", "tid", "waiting_ns"], "sync keys")
eq(root["sync"]["tid"], pid, "sync tid")
site(root["sync"]["site"], "hang_in_sync", l_sync)
eq(len(root["children"]), 1, "children")
child = root["children"][0]
eq(sorted(child), keys, "child keys")
eq((child["count"], child["flags"], child["stack"], child["parent"], child["fn"], child["sync"],
    child["waitlist"], child["children"]),
   (1, ["running"], False, root["addr"], None, None, None, []), "child")
site(child["site"], "start_child", l_child)
site(child["init"], "start_child", l_child)
assert child["age_ns"] > 0, child
print("ok: JSON fields exact")
PY
	running "$pid"
	;;
tree)
	tree_case "$bindir/ps_hang_debug" "; waiting $AGE"
	expect 0 "" "$ct" ps --json -p "$pid"
	python3 -c '
import json, sys
d = json.load(open("out.txt"))
r = d["closures"]
assert len(r) == 1 and r[0]["fn"]["func"] == "parent_done" and len(r[0]["children"]) == 4, r
w = [c for c in r[0]["children"] if c["waitlist"]]
assert len(w) == 1 and w[0]["flags"] == ["running", "waiting"] and w[0]["count"] == 2, w
print("ok: JSON lists the 3 folded closures one by one")' || fail "tree JSON"
	running "$pid"
	;;
chain)
	# A 40,000-deep chain (issue 38 item 4): --json's size grows with the closures, not with
	# their depth squared (indentation by depth wrote 1.69 GB); every closure is in it once.
	start "$bindir/ps_hang_debug" chain 40000
	expect 0 "" "$ct" ps --json -p "$pid"
	size=$(stat -c %s out.txt)
	[ "$size" -lt $((20 << 20)) ] || fail "ps --json of a 40,000 chain wrote $size bytes"
	python3 -c '
import json, sys
sys.setrecursionlimit(20000) # ps nests 1,000 levels, then starts again at the top
d = json.load(open("out.txt"))
seen, todo = 0, list(d["closures"])
while todo:
    c = todo.pop()
    seen += 1
    todo.extend(c["children"])
assert d["count"] == 40000 and seen == 40000, (d["count"], seen)
print("ok: JSON of a 40,000 chain: every closure once")' || fail "chain JSON"
	echo "ok: ps --json of a 40,000 chain: $size bytes"
	running "$pid"
	;;
queue)
	# The kernel's Q: a closure on a workqueue whose one worker is busy forever.
	start "$bindir/ps_hang_debug" queue
	expect 0 "" "$ct" ps -p "$pid"
	[ "$(wc -l <out.txt)" = 3 ] || fail "not 3 lines: $(cat out.txt)"
	grep -qE "^$X r 1 R -> block_forever last at $S:$(line_of L_BUSY) \\(hang_with_queue\\), init at $S:$(line_of L_BUSY) \\(hang_with_queue\\), alive $AGE\$" out.txt ||
		fail "no running closure: $(cat out.txt)"
	grep -qE "^$X r 1 QR -> never_runs last at $S:$(line_of L_QUEUED) \\(hang_with_queue\\), init at $S:$(line_of L_QUEUED) \\(hang_with_queue\\), alive $AGE\$" out.txt ||
		fail "no queued closure: $(cat out.txt)"
	expect 0 "" "$ct" ps --json -p "$pid"
	python3 -c '
import json
d = json.load(open("out.txt"))
flags = sorted(tuple(c["flags"]) for c in d["closures"])
assert flags == [("queued", "running"), ("running",)], flags
print("ok: JSON flags queued, running")' || fail "queue JSON"
	running "$pid"
	;;
busy)
	# A list that changes all the time: every read must account for every closure it shows.
	"$blockio" --requests 100000 >/dev/null &
	pid=$!
	pids+=("$pid")
	sleep 0.3
	reads=0
	for i in 1 2 3; do
		"$ct" ps -p "$pid" >out.txt 2>err.txt
		status=$?
		if [ "$status" = 3 ] && ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		[ "$status" = 0 ] || fail "ps exited $status: $(cat err.txt)"
		python3 - out.txt <<'PY' || fail "read $i: $(head -5 out.txt)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
m = re.match(r"process \d+ \(.*\): (\d+) live closures?(, listed by .*)?$", lines[0])
assert m, lines[0]
shown = 0
for l in lines[1:]:
    if l.startswith("note: "):
        continue
    m2 = re.match(r" *(0x[0-9a-f]+|\[(\d+) closures, first 0x[0-9a-f]+\]) r \d+ [-QRSWD]+( -> \S+)?( stack)? last at \S+", l)
    if m2:
        shown += int(m2.group(2) or 1)
        continue
    assert re.match(r" *(sleeps in closure_sync|waits on waitlist) ", l), l
assert shown == int(m.group(1)), (shown, m.group(1))
print(f"ok: read shows {shown} closures, each once")
PY
		reads=$((reads + 1))
		state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
		case $state in
		T | t) fail "blockio is stopped" ;;
		"")
			wait "$pid" || fail "blockio exited $?"
			echo "ok: blockio ended normally"
			break
			;;
		esac
		echo "ok: blockio still running, state $state"
	done
	[ "$reads" -ge 1 ] || fail "no read before blockio ended"
	;;
hostile_cycle)
	# Another process's memory may say anything: a list that never leads back to its sentinel
	# is followed a bounded number of steps, then shown as far as it was read, with a note.
	start "$bindir/ps_hostile" cycle
	timeout 30 "$ct" ps -p "$pid" >out.txt 2>err.txt
	status=$?
	[ "$status" = 0 ] || fail "ps exited $status: $(cat err.txt)"
	grep -Eq "^process $pid \(.*\): 2 live closures$" out.txt || fail "first line: $(head -1 out.txt)"
	grep -qx "note: the list changed faster than it could be followed: only the closures shown were read" out.txt ||
		fail "no note: $(cat out.txt)"
	running "$pid"
	echo "ok: a cycle in the list: 2 closures shown, the walk cut short, in bounded time"
	;;
hostile_lists | hostile_stride)
	# A descriptor whose lists cannot be (a million of them; lists overlapping): refused.
	start "$bindir/ps_hostile" "${case_name#hostile_}"
	timeout 30 "$ct" ps -p "$pid" >out.txt 2>err.txt
	status=$?
	[ "$status" = 3 ] || fail "ps exited $status, not 3: $(cat out.txt err.txt)"
	grep -q "live-list descriptor of libclosure in process $pid .* cannot be read as one" err.txt ||
		fail "message: $(cat err.txt)"
	[ -s out.txt ] && fail "output: $(cat out.txt)"
	echo "ok: ${case_name#hostile_}: refused, exit 3: $(cat err.txt)"
	;;
*)
	fail "no case $case_name"
	;;
esac
