#!/usr/bin/env bash
# usage: batch_test.sh CASE CLOSURETRACE BT_PROG BLOCKIO BLOCKIO_STATIC SRCDIR PYTHON BT_PROG_STATIC
# Batched tracing, for real: as root with BPF, and the in-process sink as user nobody.
# Never "producer | grep -q" under pipefail: grep leaves early, the producer may get SIGPIPE.
set -euo pipefail
case_name=$1 ct=$2 prog=$3 blockio=$4 blockio_static=$5 src=$6 py=$7 prog_static=$8
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh" # shown_source
check() { "$py" "$src/batch_check.py" "$@"; }
fail() {
	echo "FAIL: $case_name: $*" >&2
	exit 1
}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	! mountpoint -q "$tmp/tiny" || umount "$tmp/tiny"
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"

# Waits (bounded: not a measurement) until FILE has a line matching RE.
wait_for() {
	for _ in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "timed out waiting for '$2' in $1: $(cat "$1" 2>/dev/null)"
}

# Starts PROG ARGS (a mode that prints "ready" and waits for SIGUSR1): sets wpid.
start_waiting() {
	"$prog" "$@" >w.out 2>&1 &
	wpid=$!
	pids+=("$wpid")
	wait_for w.out "^ready"
}

# Records the waiting program (record -p with ARGS, writing t.json), lets it go once the recorder
# is attached, and waits for its "done". Sets rpid.
record_and_go() {
	"$ct" record -v -p "$wpid" -d 600 -o t.json "$@" 2>err &
	rpid=$!
	pids+=("$rpid")
	wait_for err "recording process" # attached; its stop signal is handled from then on
	kill -USR1 "$wpid"
	wait_for w.out "^done"
}

# bt_prog twice (or twicekill) 10 50 recorded twice with record -p (t1.json, then t2.json for 1 s),
# each time let go once the recorder is attached. Returns 1 when the buffers were not as the
# case needs them (a burst preempted past the age bound hands its buffer over: run it again).
two_recordings() {
	start_waiting "$1" 10 50
	"$ct" record -v -p "$wpid" -d 600 -o t1.json 2>err1 &
	rpid=$!
	pids+=("$rpid")
	wait_for err1 "recording process"
	kill -USR1 "$wpid"
	wait_for w.out "^done"
	kill -INT "$rpid"
	wait "$rpid" || fail "first record exited $?: $(cat err1)"
	if [ "$(sed -n 2p w.out)" != "buffered 21 21" ]; then
		kill -9 "$wpid"
		return 1
	fi
	"$ct" record -v -p "$wpid" -d 1 -o t2.json 2>err2 &
	rpid=$!
	pids+=("$rpid")
	wait_for err2 "batch registry of" # found, and its threads' buffers known to BPF
	kill -USR1 "$wpid"
	wait "$rpid" || fail "second record exited $?: $(cat err2)"
	[ "$(grep -c "^done" w.out)" = 2 ] || fail "the program did not finish its second burst: $(cat w.out)"
	[ "$(sed -n 5p w.out)" = "buffered 121 21" ] || { kill -9 "$wpid"; return 1; }
}

# "kind N" lines of a closure that does init, N gets, N puts and returns; times K closures.
pairs_counts() {
	local n=$1 k=$2
	printf '%s\n' "init $k" "get $((n * k))" "put $((n * k))" "sub 0" "continue_at $k" "run 0" \
		"finish $k" "destructor 0" "wait 0" "wake 0" "sync_begin 0" "sync_end 0"
}

# Records a command batched (b.json) and per operation (p.json); both must hold exactly the
# counts the program says it fires, and the same events at the same sites.
batched_equals_per_op() {
	"$ct" record -v -o b.json -- "$@" >/dev/null 2>b.err || fail "record: $(cat b.err)"
	grep -q "(batched)" b.err || fail "not batched: $(cat b.err)"
	"$ct" record --per-op -o p.json -- "$@" >/dev/null 2>p.err || fail "record --per-op: $(cat p.err)"
	check counts b.json >b.txt
	check counts p.json >p.txt
	diff -u want.txt b.txt || fail "batched counts"
	diff -u want.txt p.txt || fail "per-operation counts"
	check same b.json p.json || fail "batched and per-operation events differ"
	check end b.json | grep -x "lost=0" >/dev/null || fail "lost: $(check end b.json | paste -sd" ")"
	check ordered b.json || fail "batched events out of order"
}

case $case_name in
counts_blockio | counts_blockio_static)
	bin=$blockio
	[ "$case_name" = counts_blockio ] || bin=$blockio_static
	"$bin" --requests 40 --bios 3 --counts | grep -v "^blockio" >want.txt
	batched_equals_per_op "$bin" --requests 40 --bios 3
	echo "ok: $(paste -sd, b.txt)"
	;;
counts_threads)
	# 8 threads x 1000 pairs: full buffers handed over many times, from several threads.
	pairs_counts 1000 8 >want.txt
	batched_equals_per_op "$prog" threads 8 1000
	echo "ok: $(paste -sd, b.txt)"
	;;
order)
	# A gets, B puts, alternately; neither blocks in a closure call, so each thread's records
	# leave in batches of its own and the recorder must put them back in time order.
	"$ct" record -o t.json -- "$prog" pingpong 3000 >/dev/null 2>err || fail "record: $(cat err)"
	check alternate t.json 3000 || fail "order across threads"
	check ordered t.json || fail "events out of order"
	echo "ok: 3000 gets and puts alternate across two threads"
	;;
drain_at_stop)
	# The records are still in the process's buffer when the recording stops: drained.
	start_waiting held 100
	record_and_go
	kill -INT "$rpid"
	wait "$rpid" || fail "record exited $?: $(cat err)"
	check counts t.json >got.txt
	printf '%s\n' "init 1" "get 100" "put 100" "sub 0" "continue_at 0" "run 0" "finish 0" \
		"destructor 0" "wait 0" "wake 0" "sync_begin 0" "sync_end 0" >want.txt
	diff -u want.txt got.txt || fail "events before the stop missing"
	check end t.json | grep -x "reason=signal" >/dev/null || fail "end: $(check end t.json | paste -sd" ")"
	echo "ok: 201 buffered events drained at stop"
	;;
polled)
	# record -p of a process whose operations are spread over time, as a service's are: the
	# recorder reads the buffers in place every 20 ms and says so in the registry, so the library
	# hands nothing over for its age, nor before closure_sync blocks (no batch probe trap), and
	# every event is still in the trace, in order. Handed over: only the one record of a thread
	# that exits. At stop the recorder withdraws the promise (polled_until 0).
	for attempt in 1 2 3; do
		start_waiting polled 40
		"$ct" record -v -p "$wpid" -d 600 -o t.json 2>err &
		rpid=$!
		pids+=("$rpid")
		wait_for err "batch registry of" # found, and polled_until written
		kill -USR1 "$wpid"
		wait_for w.out "^done"
		kill -INT "$rpid"
		wait "$rpid" || fail "record exited $?: $(cat err)"
		[ "$(sed -n 2p w.out)" != "handed 1" ] || break
		# A recorder held up for 80 ms (a loaded machine) lets the library hand over by age.
		echo "attempt $attempt: $(paste -sd' ' w.out)"
		kill -9 "$wpid"
		[ "$attempt" != 3 ] || fail "3 attempts, each handing over by age: $(paste -sd' ' w.out)"
	done
	kill -USR1 "$wpid"
	wait_for w.out "^polled_until"
	[ "$(sed -n 4p w.out)" = "polled_until 0" ] || fail "not withdrawn at stop: $(sed -n 4p w.out)"
	check counts t.json >got.txt
	printf '%s\n' "init 2" "get 41" "put 41" "sub 0" "continue_at 1" "run 0" "finish 1" \
		"destructor 0" "wait 0" "wake 0" "sync_begin 1" "sync_end 1" >want.txt
	diff -u want.txt got.txt || fail "events of the recording"
	check end t.json >end.txt
	grep -qx "lost=0" end.txt || fail "trailer: $(paste -sd' ' end.txt)"
	check ordered t.json || fail "events out of order"
	echo "ok: 168 events, 1 handed over (a thread's exit), none for age or blocking"
	;;
behind_order)
	# record -p of a process that writes faster than the recorder decodes (blockio at full
	# speed: about three times faster): each read of the ring buffer stops after its time, with
	# batches left unread, older than the reorder window counted from now. The window then
	# counts from the newest record read: the trace stays in time order (what did not fit is
	# lost, counted: -p never slows the process).
	"$blockio" --requests 400000 >/dev/null &
	bpid=$!
	pids+=("$bpid")
	"$ct" record -p "$bpid" -d 1.5 -b 32M -o t.json 2>err || fail "record: $(cat err)"
	kill "$bpid"
	# Millions of events: a stream check (batch_check.py would load them all, for minutes).
	grep '^{"type":"event"' t.json | cut -d, -f2 | cut -d: -f2 >ts.txt
	awk 'NR > 1 && $1 < prev { print "event " NR " is earlier than the one before it"; exit 1 }
		{ prev = $1 }' ts.txt || fail "events out of order"
	lost=$(tail -1 t.json | grep -o '"lost":[0-9]*' | cut -d: -f2)
	[ -n "$lost" ] || fail "no trailer: $(tail -c 300 t.json)"
	echo "ok: $(wc -l <ts.txt) events in time order, $lost lost"
	;;
thread_exit)
	# Each thread exits with 101 records buffered (less than a buffer): handed over at exit.
	pairs_counts 50 16 >want.txt
	"$ct" record -o t.json -- "$prog" threads 16 50 >/dev/null 2>err || fail "record: $(cat err)"
	check counts t.json >got.txt
	diff -u want.txt got.txt || fail "records of exited threads"
	echo "ok: 16 threads' partial buffers"
	;;
killed)
	# SIGKILL with 100 pairs and the sync's end still buffered: BPF drains the thread's buffer
	# at its exit, so every record before the kill is kept; the trace says SIGKILL ended it.
	"$ct" record -o t.json -- "$prog" killed 100 >/dev/null 2>err || fail "record: $(cat err)"
	check counts t.json >got.txt
	printf '%s\n' "init 1" "get 201" "put 201" "sub 0" "continue_at 0" "run 0" "finish 0" \
		"destructor 0" "wait 0" "wake 0" "sync_begin 1" "sync_end 1" >want.txt
	diff -u want.txt got.txt || fail "records before the kill"
	check end t.json >end.txt
	grep -qx "signal=9" end.txt || fail "the trailer does not say SIGKILL: $(cat end.txt)"
	grep -qx "lost=0" end.txt || fail "lost: $(cat end.txt)"
	check ordered t.json || fail "events out of order"
	echo "ok: $(paste -sd' ' end.txt)"
	;;
exec_buffered | exec_buffered_syscalls)
	# 100 pairs still buffered when the process execs: drained by BPF as the exec starts (at
	# sched_prepare_exec; _syscalls: at the exec syscalls' entry, as before Linux 6.10). Address
	# randomisation off, so the new image's buffer sits where the old one did and its sequence
	# numbers start again at 0: the old image's records must not hide the new image's.
	drain=on_prepare_exec
	if [ "$case_name" = exec_buffered_syscalls ]; then
		export CLOSURETRACE_ATTACH=exec-syscalls
		drain=on_execve
	fi
	pairs_counts 100 1 | sed -e 's/^init 1$/init 2/' -e 's/^get 100$/get 200/' \
		-e 's/^put 100$/put 200/' >want.txt
	"$ct" record -v -o t.json -- setarch -R "$prog" exec 100 >/dev/null 2>err ||
		fail "record: $(cat err)"
	grep -qx "closuretrace: $drain attached" err || fail "$drain not attached: $(cat err)"
	check counts t.json >got.txt
	diff -u want.txt got.txt ||
		fail "records buffered at exec ($(check end t.json | paste -sd" "); $(cat err))"
	check end t.json | grep -x "lost=0" >/dev/null || fail "lost: $(check end t.json | paste -sd" ")"
	# An exec that fails: the drained records are handed over again later, and written once.
	pairs_counts 200 1 >want.txt
	"$ct" record -o f.json -- "$prog" execfail 100 >/dev/null 2>err || fail "record: $(cat err)"
	check counts f.json >got.txt
	diff -u want.txt got.txt || fail "a failed exec: records twice or missing"
	echo "ok: 200 pairs across an exec, 200 across a failed exec"
	;;
idle_order)
	# Thread A takes a reference, then blocks in read() for 400+ ms with its records buffered
	# while the main thread works (1 pair a ms): the recorder reads A's buffer while it idles, so
	# A's get is written in time order, before the main thread's later events.
	pairs_counts 401 2 | sed -e 's/^get 802$/get 401/' -e 's/^put 802$/put 401/' >want.txt
	"$ct" record -o t.json -- "$prog" idle 400 >/dev/null 2>err || fail "record: $(cat err)"
	check counts t.json >got.txt
	diff -u want.txt got.txt || fail "counts"
	check ordered t.json || fail "an idle thread's records out of order"
	echo "ok: $(grep -c '"event"' t.json) events in time order"
	;;
lost_exact)
	# A 64 KiB ring buffer under -p (which drops, never stalls): 8 threads' batches overflow it.
	# Every record is in the trace (synthetic inits aside), counted as lost, or in a tree the library left out while
	# the recorder was behind (each thread's closure is a root: 2 * 20000 + 3 operations),
	# once: events + lost + left-out trees' operations = all operations.
	start_waiting burst 8 20000
	record_and_go -b 64K
	kill -INT "$rpid"
	wait "$rpid" || fail "record exited $?: $(cat err)"
	# A closure whose init was lost is read from the process and begun by a synthetic init
	# ("snapshot":true), not an operation of the program; one gone when read is left out, its
	# events counted in lost.
	events=$(grep '"type":"event"' t.json | grep -vc '"snapshot":true')
	lost=$(check end t.json | sed -n 's/^lost=//p')
	left=$(tail -1 t.json | sed -n 's/.*"trees_left_out":\([0-9]*\).*/\1/p')
	[ -n "$left" ] || fail "no trees_left_out: $(tail -1 t.json)"
	[ "$lost" -gt 0 ] || fail "nothing lost: the test needs the ring buffer to overflow"
	[ $((events + lost + left * (2 * 20000 + 3))) = $((8 * (2 * 20000 + 3))) ] ||
		fail "$events events + $lost lost + $left trees left out, not $((8 * (2 * 20000 + 3)))"
	echo "ok: $events events + $lost lost + $left trees left out = every operation"
	;;
fork_exec)
	# check follows fork and exec: a child's closure, an exec'ed child's, the parent's.
	pairs_counts 100 3 >want.txt
	"$ct" check --keep-trace t.json -- "$prog" fork 100 >/dev/null 2>err || fail "check: $(cat err)"
	check counts t.json >got.txt
	diff -u want.txt got.txt || fail "fork and exec"
	[ "$("$py" -c 'import json,sys; print(len({r["pid"] for r in map(json.loads, open(sys.argv[1])) if r["type"] == "event"}))' t.json)" = 3 ] ||
		fail "not three processes"
	echo "ok: 3 closures in 3 processes"
	;;
registry_at_attach | registry_at_attach_static | registry_killed)
	# record -p after an earlier recording: threads W and S claimed their buffers then and left
	# 21 records of it in each (that recorder polled: nothing left by age). In the second
	# recording W does 50 pairs and sleeps outside libclosure, S does nothing: no batch is
	# handed over, so the recorder finds the registry through libclosure's exported symbol,
	# reads W's new records, and leaves out the 42 of the first recording (older than this one). Linked with libclosure.so, the registry is
	# the library's exported symbol; with libclosure.a, in the program's own symbol table.
	# registry_killed: the process SIGKILLs itself right after W's 50 pairs, before any poll:
	# BPF drains W's buffer at its exit, having learnt it from the recorder (no batch told it).
	# A grep pattern; prog is BUILD/tests/suites/batch/bt_prog.
	object="$(realpath "$(dirname "$prog")/../../../lib")/libclosure\.so[.0-9]*"
	if [ "$case_name" = registry_at_attach_static ]; then
		prog=$prog_static
		object=$(realpath "$prog")
	fi
	mode=twice
	[ "$case_name" != registry_killed ] || mode=twicekill
	for attempt in 1 2 3; do
		! two_recordings $mode || break
		echo "attempt $attempt: a burst was preempted past the age bound: $(paste -sd' ' w.out)"
		[ "$attempt" != 3 ] || fail "3 attempts, never the buffers the case needs"
	done
	reason=duration
	[ "$case_name" != registry_killed ] || reason="exit"
	line() { grep -n "SITE twice-$1" "$src/bt_prog.c" | cut -d: -f1; }
	file=$(realpath "$src/bt_prog.c")
	# The two closures alive at attach (W's and S's) first, as the snapshot's inits (issue 26
	# item 5), then W's 50 pairs.
	# W's init is the last before its get, S's the first after it.
	inits=$(awk -v g="$(line get)" '/SITE init/ { if (NR < g) w = NR; else if (!s) s = NR }
		END { print w, s }' "$src/bt_prog.c")
	{
		for l in $inits; do
			echo "init $file:$l 1"
		done
		echo "get $file:$(line get) 50"
		echo "put $file:$(line put) 50"
	} | sort >want.txt
	check sites t2.json >got.txt
	diff -u want.txt got.txt || fail "the second recording's events"
	check end t2.json >end.txt
	grep -qx "lost=0" end.txt && grep -qx "reason=$reason" end.txt ||
		fail "trailer: $(paste -sd' ' end.txt)"
	check ordered t2.json || fail "events out of order"
	grep -q "^closuretrace: batch registry of $object at 0x[0-9a-f]*$" err2 ||
		fail "registry not found at attach: $(cat err2)"
	grep -qx "closuretrace: 42 buffered records older than the recording left out" err2 ||
		fail "the first recording's records not read and left out: $(cat err2)"
	echo "ok: the 100 operations of a thread idle since, and none of the earlier recording's"
	;;
bpftrace_alongside)
	# bpftrace counts the inline get and put probes of the program while closuretrace records the
	# same process batched: both see every operation.
	command -v bpftrace >/dev/null || fail "bpftrace not installed (scripts/deps.sh)"
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exe=$(readlink -f "$prog")
	sites=$(readelf -n "$exe" | grep -c "Provider: closure")
	# Only this process (other tests may run the program meanwhile; bpftrace 0.17's -p fails
	# to resolve the library's probes in the program).
	start_waiting held 500
	bpftrace -e "usdt:$exe:closure:* /pid == $wpid/ { @[probe] = count(); }" >bt.out 2>bt.err &
	bpid=$!
	pids+=("$bpid")
	for _ in $(seq 600); do # bounded: not a measurement
		n=$(bpftool -j perf list | "$py" -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin) if e.get("pid") == int(sys.argv[1]) and e.get("fd_type") == "uprobe"))' "$bpid")
		[ "$n" -ge "$sites" ] && break
		sleep 0.1
	done
	[ "$n" -ge "$sites" ] || fail "bpftrace attached $n of $sites sites: $(cat bt.err)"
	record_and_go
	kill -INT "$rpid"
	wait "$rpid" || fail "record exited $?: $(cat err)"
	kill -INT "$bpid"
	wait "$bpid" || true
	grep -q "(batched)" err || fail "not batched: $(cat err)"
	check counts t.json | grep -E "^(init|get|put) " >got.txt
	printf '%s\n' "init 1" "get 500" "put 500" >want.txt
	diff -u want.txt got.txt || fail "closuretrace's counts"
	grep -q "closure:get\]: 500$" bt.out || fail "bpftrace's get: $(cat bt.out)"
	grep -q "closure:put\]: 500$" bt.out || fail "bpftrace's put: $(cat bt.out)"
	echo "ok: bpftrace and closuretrace both counted 500 gets and 500 puts"
	;;
sink_counts)
	# The in-process sink (--no-bpf): the same counts, every process of the command.
	"$blockio" --requests 40 --bios 3 --counts | grep -v "^blockio" >want.txt
	"$ct" check --no-bpf --keep-trace t.json -- "$blockio" --requests 40 --bios 3 >/dev/null 2>err ||
		fail "check: $(cat err)"
	check counts t.json >got.txt
	diff -u want.txt got.txt || fail "blockio through the sink"
	pairs_counts 100 3 >want.txt
	"$ct" check --no-bpf --keep-trace f.json -- "$prog" fork 100 >/dev/null 2>err || fail "check: $(cat err)"
	check counts f.json >got.txt
	diff -u want.txt got.txt || fail "fork and exec through the sink"
	pairs_counts 300 4 >want.txt
	"$ct" record --no-bpf -o r.json -- "$prog" threads 4 300 >/dev/null 2>err || fail "record: $(cat err)"
	check counts r.json >got.txt
	diff -u want.txt got.txt || fail "record --no-bpf"
	check ordered r.json || fail "record --no-bpf: out of order"
	echo "ok: blockio, fork and exec, threads"
	;;
sink_nobody_leak | sink_nobody_clean)
	# check as an unprivileged user: no BPF, so the sink; copies readable by nobody.
	command -v setpriv >/dev/null || fail "setpriv missing (util-linux)"
	mkdir bin
	cp "$ct" "$blockio_static" bin/
	chmod 755 . bin bin/*
	leak=()
	[ "$case_name" = sink_nobody_clean ] || leak=(--leak)
	rc=0
	(cd bin && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		./closuretrace check -- ./blockio-static --requests 20 "${leak[@]}") >out 2>err </dev/null || rc=$?
	if [ "$case_name" = sink_nobody_leak ]; then
		[ "$rc" = 1 ] || fail "exit $rc, not 1: $(cat err)"
		grep -q "^$(shown_source "$(realpath "$src/../../..")/examples/blockio.c" "$(dirname "$blockio_static")"):217: error: closure leaked: took 1 reference" err ||
			fail "the leak at examples/blockio.c:217 not found: $(cat err)"
	else
		[ "$rc" = 0 ] || fail "exit $rc, not 0: $(cat err)"
		grep -qE "^closuretrace: no leaks; [1-9][0-9]* events, 0 lost$" err || fail "verdict: $(cat err)"
	fi
	echo "ok: as nobody, exit $rc"
	;;
sink_killed)
	# The sink keeps what a SIGKILLed process still had buffered: its buffers are files.
	# killed 1000: 1000 pairs (buffers handed over when full), a get and closure_sync (handed
	# over), 1000 more pairs still buffered, then SIGKILL.
	rc=0
	"$ct" check --no-bpf --keep-trace t.json -- "$prog" killed 1000 >/dev/null 2>err || rc=$?
	[ "$rc" = 137 ] || fail "check exit $rc, not 137: $(cat err)"
	grep -qx "closuretrace: $prog was killed by signal 9 (Killed); its closures were not checked" err ||
		fail "message: $(cat err)"
	check counts t.json >got.txt
	printf '%s\n' "init 1" "get 2001" "put 2001" "sub 0" "continue_at 0" "run 0" "finish 0" \
		"destructor 0" "wait 0" "wake 0" "sync_begin 1" "sync_end 1" >want.txt
	diff -u want.txt got.txt || fail "records of the killed process"
	check end t.json >end.txt
	grep -qx "lost=0" end.txt && grep -qx "signal=9" end.txt && grep -qx "abrupt=1" end.txt ||
		fail "trailer: $(paste -sd' ' end.txt)"
	# 4 threads and the main one, each a closure of 1000 pairs, all alive when killed.
	"$ct" record --no-bpf -o a.json -- "$prog" abrupt 4 1000 >/dev/null 2>err || fail "record: $(cat err)"
	pairs_counts 1000 5 >want.txt
	check counts a.json >got.txt
	diff -u want.txt got.txt || fail "threads alive at the kill"
	check end a.json >end.txt
	grep -qx "lost=0" end.txt && grep -qx "abrupt=1" end.txt || fail "trailer: $(paste -sd' ' end.txt)"
	echo "ok: 4005 and 10015 events of killed processes, 0 lost"
	;;
sink_killed_nobody)
	# The same without privileges (check picks the sink by itself), as user nobody.
	command -v setpriv >/dev/null || fail "setpriv missing (util-linux)"
	mkdir out
	chmod 755 .
	chmod 777 out
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$ct" check --keep-trace out/t.json -- "$prog" killself 1000 >/dev/null 2>err </dev/null || rc=$?
	[ "$rc" = 137 ] || fail "exit $rc, not 137: $(cat err)"
	pairs_counts 1000 1 >want.txt
	check counts out/t.json >got.txt
	diff -u want.txt got.txt || fail "records of the killed process, as nobody"
	check end out/t.json >end.txt
	grep -qx "lost=0" end.txt && grep -qx "signal=9" end.txt && grep -qx "abrupt=1" end.txt ||
		fail "trailer: $(paste -sd' ' end.txt)"
	echo "ok: as nobody, 2003 events of a killed process"
	;;
sink_fork_exec_killed)
	# A closure still buffered when the parent forks (the child must not write that buffer: it
	# is a shared mapping), a child that is killed, a child whose records are buffered when it
	# execs an image that is killed, the parent killed: every process and image apart, complete.
	"$ct" record --no-bpf -o t.json -- "$prog" forkkill 100 >/dev/null 2>err || fail "record: $(cat err)"
	pairs_counts 100 5 >want.txt
	check counts t.json >got.txt
	diff -u want.txt got.txt || fail "fork and exec, killed"
	printf '%s\n' "1 100 100" "2 200 200" "2 200 200" >want.txt
	check perpid t.json >got.txt
	diff -u want.txt got.txt || fail "per process"
	check end t.json >end.txt
	grep -qx "lost=0" end.txt && grep -qx "signal=9" end.txt && grep -qx "abrupt=3" end.txt ||
		fail "trailer: $(paste -sd' ' end.txt)"
	echo "ok: 5 closures in 3 processes, 4 images, 3 killed"
	;;
sink_full)
	# A sink folder that fills up: what cannot be kept is counted exactly, nothing crashes.
	mkdir tiny
	mount -t tmpfs -o size=128k,mode=1777 tmpfs tiny
	# killed 20000: 4 x 20000 + 5 records; threads 4 5000: 4 closures of 2 x 5000 + 3.
	for run in "killed 20000:80005" "threads 4 5000:40012"; do
		rc=0
		TMPDIR=$tmp/tiny "$ct" record --no-bpf -o t.json -- "$prog" ${run%:*} >/dev/null 2>err || rc=$?
		[ "$rc" = 0 ] || fail "${run%:*}: record exit $rc: $(cat err)"
		lines=$(check lines t.json)
		check end t.json >end.txt
		lost=$(sed -n 's/^lost=//p' end.txt)
		grep -qx "events=$lines" end.txt || fail "${run%:*}: $lines lines: $(paste -sd' ' end.txt)"
		[ "$lost" -gt 0 ] && [ $((lines + lost)) = "${run#*:}" ] ||
			fail "${run%:*}: $lines events + $lost lost, not ${run#*:}"
		grep -q "^closuretrace: warning: $lost events could not be kept in $tmp/tiny/closuretrace-sink\.[^ ]* (a full file system?): free space there, or name another folder with TMPDIR$" err ||
			fail "${run%:*}: warning: $(cat err)"
		[ -z "$(ls tiny)" ] || fail "left in the sink folder: $(ls -R tiny)"
		echo "${run%:*}: $lines events + $lost lost"
	done
	grep -q "^exit_code=0$" end.txt && ! grep -q "^abrupt=" end.txt || fail "threads: $(paste -sd' ' end.txt)"
	rc=0
	TMPDIR=$tmp/tiny "$ct" check --no-bpf --keep-trace c.json -- "$prog" threads 4 5000 >/dev/null 2>err || rc=$?
	[ "$rc" = 1 ] || fail "check exit $rc, not 1: $(cat err)"
	grep -qE "^closuretrace: [1-9][0-9]* events were lost: the verdict is incomplete; free space in \\\$TMPDIR \(the sink's folder\), or accept it with --allow-lost$" err ||
		fail "check: $(cat err)"
	echo "ok: full sink folder counted exactly"
	;;
sink_vanished)
	# The command removes the sink folder before the traced program starts: nothing to read,
	# said plainly (then as for a command without probes: exit 3), no crash; it runs untraced.
	rc=0
	"$ct" record --no-bpf -o t.json -- sh -c 'rm -r "$CLOSURETRACE_SINK" && exec "$0" threads 2 1000' \
		"$prog" >/dev/null 2>err || rc=$?
	[ "$rc" = 3 ] || fail "record exit $rc: $(cat err)"
	grep -qE "^closuretrace: warning: the sink folder [^ ]*/closuretrace-sink\.[^ ]*: No such file or directory: no events$" err ||
		fail "message: $(cat err)"
	grep -qx "closuretrace: no closure probes in sh or the programs it ran; .*" err || fail "message: $(cat err)"
	# A buffer file removed behind the tool's back: its records cannot be counted, said so.
	"$ct" record --no-bpf -o t.json -- sh -c '"$0" killself 1000; rm "$CLOSURETRACE_SINK"/*.*.1' \
		"$prog" >/dev/null 2>err2 || fail "record: $(cat err2)"
	grep -qE "^closuretrace: warning: [^ ]*/closuretrace-sink\.[^ /]*/[0-9]+\.[0-9]+: 1 of its 1 buffer files missing$" err2 ||
		fail "message: $(cat err2)"
	echo "ok: $(head -1 err); $(head -1 err2)"
	;;
sink_pid_refused)
	# A running process was not started with the sink: -p keeps needing BPF, and says so.
	rc=0
	"$ct" record --no-bpf -p $$ -o t.json 2>err || rc=$?
	[ "$rc" = 2 ] || fail "--no-bpf -p: exit $rc"
	grep -q "cannot record a running process (-p)" err || fail "message: $(cat err)"
	mkdir bin
	cp "$ct" bin/
	chmod 755 . bin bin/*
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all bin/closuretrace record -p $$ \
		-o /dev/null 2>err </dev/null || rc=$?
	[ "$rc" = 3 ] || fail "as nobody, -p: exit $rc"
	[ "$(cat err)" = "closuretrace: not permitted to use BPF and uprobes: recording a running process (-p) needs root, or CAP_BPF and CAP_PERFMON (record -- COMMAND and check run without)" ] ||
		fail "message: $(cat err)"
	echo "ok: -p refused without BPF, with the reason"
	;;
*)
	fail "unknown case"
	;;
esac
