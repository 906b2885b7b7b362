#!/bin/bash
# closuretrace check, for real:
#   check_test.sh CASE CLOSURETRACE CK_PROG SRCDIR CT_WORKLOAD CT_PLUGIN CHECK_JUDGE
# Each case asserts exact exit statuses and exact diagnostics. Needs root and BPF; elsewhere the
# BPF cases print SKIP and exit 77 (a failure when CLOSURETRACE_NO_SKIP=1).
set -u
CASE=$1 CT=$2 PROG=$3 SRC=$4 WORKLOAD=${5:-} PLUGIN=${6:-} JUDGE=${7:-}
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh" # skip_without_bpf
SOURCE=$SRC/ck_prog.c
SHOWN=$(shown_source "$SOURCE" "$(dirname "$PROG")") # as the diagnostics show it
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
# A NULL write must end in SIGSEGV, not in AddressSanitizer's report, in the ASan build.
export ASAN_OPTIONS=handle_segv=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}

fail() {
	echo "FAIL [$CASE]: $*"
	[ -f err ] && { echo "--- stderr:"; cat err; }
	exit 1
}

# The line of SOURCE that carries a marker comment.
line_of() {
	grep -n "/\* $1 \*/" "$SOURCE" | cut -d: -f1
}

# Runs closuretrace check with the given arguments; stdout to out, stderr to err, status in RC.
run() {
	"$CT" check "$@" >out 2>err </dev/null
	RC=$?
}

expect_rc() {
	[ "$RC" = "$1" ] || fail "exit status $RC, expected $1"
}

# The error lines and notes, summary (and its notes) excluded.
diagnostics() {
	grep -E '^[^ ]+: (error|note): ' err | grep -v '^closuretrace: note: '
}

expect_diagnostics() {
	local want
	want=$(printf '%s\n' "$@")
	[ "$(diagnostics)" = "$want" ] || fail "diagnostics differ; expected:
$want"
}

expect_summary() {
	local last
	last=$(grep '^closuretrace: ' err | grep -v ': error: ' | head -1)
	[[ "$last" =~ ^"$1"\;\ [0-9]+\ events,\ 0\ lost$ ]] || fail "summary '$last', expected '$1; N events, 0 lost'"
}

LEAK_A=$(line_of LEAK_A)
LEAK_B=$(line_of LEAK_B)
INIT_A=$(line_of INIT_A)
INIT_B=$(line_of INIT_B)
INIT_PARENT=$(line_of INIT_PARENT)
DIAG_A=(
	"$SHOWN:$LEAK_A: error: closure leaked: took 1 reference; the finished closures of its kind take 0 here"
	"$SHOWN:$INIT_A: note: the leaked closure (request_a) was initialised here, in request_a"
	"$SHOWN:$INIT_PARENT: note: it keeps alive its parent (batch), initialised here")
DIAG_B=(
	"$SHOWN:$LEAK_B: error: closure leaked: put 0 references back; the finished closures of its kind put 1 here"
	"$SHOWN:$INIT_B: note: the leaked closure (request_b) was initialised here, in request_b"
	"$SHOWN:$INIT_PARENT: note: it keeps alive its parent (batch), initialised here")

case_help() {
	"$CT" check --help >out 2>err
	RC=$?
	expect_rc 0
	grep -q '^usage: closuretrace check \[OPTIONS\] -- COMMAND \[ARGS...\]$' out || fail "no usage line"
	grep -q -- '--suppressions FILE' out || fail "--suppressions not in --help"
	"$CT" --help | grep -q '^  check ' || fail "check not in closuretrace --help"
}

case_usage_errors() {
	run
	expect_rc 2
	[ "$(cat err)" = "closuretrace check: give the command to check: closuretrace check -- COMMAND; see 'closuretrace check --help'" ] || fail "no command"
	run --error-exitcode 300 -- true
	expect_rc 2
	grep -q -- "--error-exitcode needs a number from 0 to 255: 300" err || fail "bad --error-exitcode"
	run --frobnicate -- true
	expect_rc 2
	grep -q "unknown option: --frobnicate" err || fail "unknown option"
	run --keep-trace - -- true
	expect_rc 2
	grep -q -- "--keep-trace needs a file: -" err || fail "--keep-trace -"
	run -- ./no-such-program
	expect_rc 2
	[ "$(cat err)" = "closuretrace: cannot run ./no-such-program: No such file or directory" ] || fail "no such program"
	# --log-file: a file; %p and %% only; one that cannot be written is said before anything runs.
	run --log-file - -- true
	expect_rc 2
	[ "$(cat err)" = "closuretrace check: --log-file needs a file: -; see 'closuretrace check --help'" ] || fail "--log-file -"
	run --log-file 'x.%q' -- true
	expect_rc 2
	[ "$(cat err)" = "closuretrace check: --log-file takes %p (check's pid) and %% (a %), no other %: x.%q; see 'closuretrace check --help'" ] ||
		fail "--log-file x.%q"
	run --log-file no-such-folder/log -- touch ran
	expect_rc 2
	[ "$(cat err)" = "closuretrace check: cannot write no-such-folder/log: No such file or directory" ] || fail "--log-file in no folder"
	[ ! -e ran ] || fail "the command ran though its --log-file cannot be written"
	# A log that cannot be written at the end (a full disk) is said where check was told to
	# speak, exit 2.
	run --log-file /dev/full -- ./no-such-program
	expect_rc 2
	[ "$(cat err)" = "closuretrace check: cannot write /dev/full: No space left on device" ] || fail "--log-file /dev/full"
	# From the moment the log is open, check's own lines go there, its errors too.
	run --log-file 'a%%b' -- ./no-such-program
	expect_rc 2
	[ ! -s err ] || fail "--log-file: check wrote to stderr"
	[ "$(cat 'a%b')" = "closuretrace: cannot run ./no-such-program: No such file or directory" ] || fail "--log-file a%%b: $(ls)"
}

case_clean() {
	skip_without_bpf
	run -- "$PROG" clean
	expect_rc 0
	[ -z "$(diagnostics)" ] || fail "diagnostics on a clean run"
	expect_summary "closuretrace: no leaks"
}

case_leak_a() {
	skip_without_bpf
	run -- "$PROG" leak_a
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}"
	expect_summary "closuretrace: 1 error: 1 closure leaked or stuck"
}

case_leak_b() {
	skip_without_bpf
	run -- "$PROG" leak_b
	expect_rc 1
	expect_diagnostics "${DIAG_B[@]}"
	expect_summary "closuretrace: 1 error: 1 closure leaked or stuck"
}

# Identical leaks (same site, same kind) are one diagnostic with a count.
case_fold() {
	skip_without_bpf
	run -- "$PROG" leak_a 3
	expect_rc 1
	expect_diagnostics "${DIAG_A[0]} [3 closures]" "${DIAG_A[@]:1}"
	expect_summary "closuretrace: 1 error: 3 closures leaked or stuck"
	run -- "$PROG" both
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}" "${DIAG_B[@]}"
	expect_summary "closuretrace: 2 errors: 2 closures leaked or stuck"
}

# The command's failure comes first; then --error-exitcode.
case_exit_status() {
	skip_without_bpf
	run -- "$PROG" exit 5
	expect_rc 5
	expect_diagnostics "${DIAG_A[@]}"
	grep -qx "closuretrace: $PROG exited with status 5" err || fail "exit status not said"
	run --error-exitcode 42 -- "$PROG" leak_a
	expect_rc 42
	run --error-exitcode 0 -- "$PROG" leak_a
	expect_rc 0
	expect_diagnostics "${DIAG_A[@]}"
	run --error-exitcode 42 -- "$PROG" clean
	expect_rc 0
}

case_segv() {
	skip_without_bpf
	run -- "$PROG" segv
	expect_rc 139
	[ "$(cat err)" = "closuretrace: $PROG was killed by signal 11 (Segmentation fault); its closures were not checked" ] || fail "crash not reported"
}

case_killed() {
	skip_without_bpf
	"$CT" check -- "$PROG" wait "$WORK/pid" >out 2>err </dev/null &
	local check=$!
	for _ in $(seq 1 200); do
		[ -s pid ] && break
		sleep 0.05
	done
	[ -s pid ] || fail "ck_prog never started"
	kill -KILL "$(cat pid)"
	wait $check
	RC=$?
	expect_rc 137
	[ "$(cat err)" = "closuretrace: $PROG was killed by signal 9 (Killed); its closures were not checked" ] || fail "kill not reported"
}

case_stuck() {
	skip_without_bpf
	run -- "$PROG" stuck
	expect_rc 1
	# The error where the fix goes (issue 40 item 1): the reference never given back; the
	# wait is a note.
	expect_diagnostics \
		"$SHOWN:$(line_of TAKE_STUCK): error: closure stuck: inside closure_sync at exit, waiting for 1 reference: took 1 reference, 1 not put back" \
		"$SHOWN:$(line_of SYNC_STUCK): note: it waits here, inside closure_sync" \
		"$SHOWN:$(line_of INIT_STUCK): note: the stuck closure (stuck) was initialised here, in stuck"
	expect_summary "closuretrace: 1 error: 1 closure leaked or stuck"
}

# --timeout ends a hung command (and what it started) and says what it was stuck on: the error
# where the fix goes (issue 40 item 1), the child's reference never given back: the child, the
# first and only closure of its kind, quiet, holding a get no put matched, is the root of the
# hang; the closure in closure_sync behind it is a note, where it waits.
HANG_DIAG=(
	"$SHOWN:$(line_of TAKE_HANG): error: closure never finished, the root of a hang: took 1 reference, 1 not put back"
	"$SHOWN:$(line_of CHILD_HANG): note: the closure (hang ($SHOWN:$(line_of CHILD_HANG))) was initialised here, in hang"
	"$SHOWN:$(line_of SYNC_HANG): note: 1 stuck closure waits here, inside closure_sync"
	"$SHOWN:$(line_of INIT_HANG): note: it keeps alive its parent (hang ($SHOWN:$(line_of INIT_HANG))), initialised here"
)
case_timeout() {
	skip_without_bpf
	local start=$SECONDS
	run --timeout 2.5s --keep-trace t.json -- "$PROG" hang
	expect_rc 124
	tail -1 t.json | grep -q '"reason":"timeout","signal":15,"cut_short":true}$' ||
		fail "the trace's end does not say it was cut short: $(tail -1 t.json)"
	[ $((SECONDS - start)) -lt 20 ] || fail "check took $((SECONDS - start)) s to end a 2.5 s timeout"
	grep -qx "closuretrace: $PROG did not finish within 2.5 s: ended it; what it hangs on follows (closures still at work are not judged)" err ||
		fail "the timeout is not said"
	expect_diagnostics "${HANG_DIAG[@]}"
	grep -Eqx "closuretrace: 1 error: 1 closure leaked or stuck; [0-9]+ events, 0 lost" err ||
		fail "no summary"
	grep -Eqx "closuretrace: note: 1 stuck closure waits behind it: quiet for [0-9.]+ s before the process was ended" err ||
		fail "how many wait behind the root is not said"
	# Nothing else was in flight: the child is the root (viz_end: cut short).
	grep -q "in flight then" err && fail "a closure in flight besides the root: $(cat err)"
	# report on the same trace agrees: the child the root of the hang, its parent stuck.
	"$CT" report -i t.json >report.txt 2>&1 || fail "report: $(cat report.txt)"
	grep -qx "closures: 2 (0 finished, 2 unfinished: 0 in flight, 0 suspects, 0 kept alive by them; 1 root of a hang; 1 stuck)" report.txt ||
		fail "report's verdicts differ from check's: $(cat report.txt)"
	grep -qx "    blame: $SHOWN:$(line_of TAKE_HANG) (hang): took 1 reference, 1 not put back (sure: medium, no finished closure of its kind to compare with; the only call site that took references not put back)" report.txt ||
		fail "report does not name the missing put as check does: $(cat report.txt)"
	# The picture agrees (issue 40): one red node, the child, the root blamed on its get.
	"$CT" graph -T dot -i t.json >hang.dot 2>&1 || fail "graph: $(cat hang.dot)"
	[ "$(grep -c 'fillcolor="#ffd8d8"' hang.dot)" = 1 ] || fail "graph: not one red node: $(cat hang.dot)"
	tr -d '\\\n' <hang.dot | grep -q "fillcolor=\"#ffd8d8\"[^]]*ROOT OF A HANG: holds 1 ref[^]]*blame: $SHOWN:$(line_of TAKE_HANG) hang" ||
		fail "graph: the red node is not the root blamed at line $(line_of TAKE_HANG): $(cat hang.dot)"
	# Through a shell that ignores SIGTERM: SIGKILL after the grace period, every process.
	run --timeout 1 -- sh -c "trap '' TERM; $PROG hang & echo \$! >hang.pid; wait; true"
	expect_rc 124
	expect_diagnostics "${HANG_DIAG[@]}"
	[ -s hang.pid ] || fail "ck_prog did not start"
	# Gone, or a zombie that nobody reaps (pid 1 of a container may not).
	local state
	state=$(awk '{print $3}' "/proc/$(cat hang.pid)/stat" 2>/dev/null)
	[ -z "$state" ] || [ "$state" = Z ] || fail "a process of the command outlived check (state $state)"
	run --timeout 0 -- true
	expect_rc 2
	run --timeout inf -- true
	expect_rc 2
}

# A hang on no closure (the program waits in pause()) while a closure holds the reference that its
# 20 finished peers put back: that closure is the root of the hang, said as an error on the line
# of the missing put, never "no leaks" nor "nothing stuck" (issue 22: it was "in flight, not
# judged", or a suspect that check did not tell).
case_timeout_plain() {
	skip_without_bpf
	run --timeout 2 -- "$PROG" hang_plain
	expect_rc 124
	expect_diagnostics \
		"$SHOWN:$LEAK_B: error: closure never finished, the root of a hang: put 0 references back; the finished closures of its kind put 1 here" \
		"$SHOWN:$INIT_B: note: the closure (request_b) was initialised here, in request_b" \
		"$SHOWN:$(line_of INIT_PLAIN): note: it keeps alive its parent (main), initialised here"
	grep -Eqx "closuretrace: note: no closure is stuck: the program waits on something else; this closure was quiet for [0-9.]+ (s|ms) before the process was ended" err ||
		fail "what the program waits on is not said"
	grep -Eqx "closuretrace: 1 error: 1 closure leaked or stuck; [0-9]+ events, 0 lost" err ||
		fail "no summary"
	grep -qx "closuretrace: note: the recording was cut short: 1 closure in flight then was not judged" err ||
		fail "the parent in flight is not said"
	grep -Eq "no leaks|nothing stuck" err && fail "a clean verdict on a hang"
	return 0
}

# One SIGTERM: check goes on recording while the command ends; a second one ends it at once.
# The verdict says the recording was cut short and reports nothing in flight as a leak.
case_sigterm_twice() {
	skip_without_bpf
	"$CT" check -- sh -c "trap '' TERM; echo \$\$ >sh.pid; exec $PROG hang" >out 2>err </dev/null &
	local check=$! state=
	for _ in $(seq 200); do
		[ -s sh.pid ] && grep -q hang "/proc/$(cat sh.pid)/cmdline" 2>/dev/null && break
		sleep 0.05
	done
	sleep 0.5
	kill -TERM $check
	sleep 1
	kill -0 $check 2>/dev/null || fail "check ended at the first SIGTERM though the command ignores it"
	kill -TERM $check
	for _ in $(seq 100); do
		kill -0 $check 2>/dev/null || break
		sleep 0.05
	done
	kill -0 $check 2>/dev/null && fail "check still runs after a second SIGTERM"
	wait $check
	RC=$?
	expect_rc 143
	grep -qx "closuretrace: check was stopped by signal 15 (Terminated) before sh finished; its closures still in flight are not judged" err ||
		fail "the cut is not said"
	expect_diagnostics "${HANG_DIAG[@]}"
	grep -q "in flight then" err && fail "a closure in flight besides the root: $(cat err)"
	return 0
}

# A SIGTERM before the command ran any program with probes: check(1) EXIT STATUS says 128+N, and
# the stop is what is said (not "no closure probes": the command was ended before it ran them).
case_sigterm_before_probes() {
	skip_without_bpf
	"$CT" check -- sh -c "echo \$\$ >sh.pid; sleep 30" >out 2>err </dev/null &
	local check=$!
	for _ in $(seq 200); do
		[ -s sh.pid ] && grep -q sleep "/proc/$(pgrep -P "$(cat sh.pid)" | head -1)/cmdline" 2>/dev/null && break
		sleep 0.05
	done
	kill -TERM $check
	wait $check
	RC=$?
	expect_rc 143
	[ "$(cat err)" = "closuretrace: check was stopped by signal 15 (Terminated) before sh finished; its closures still in flight are not judged" ] ||
		fail "stderr: $(cat err)"
}

# The command's first process exits at once; a process it left in the background leaks later:
# check waits for every process of the command.
case_background() {
	skip_without_bpf
	run -- sh -c "(sleep 0.3; exec $PROG leak_a) & exit 0"
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}"
	expect_summary "closuretrace: 1 error: 1 closure leaked or stuck"
}

case_waitlist() {
	skip_without_bpf
	run -- "$PROG" waitlist
	expect_rc 1
	expect_diagnostics \
		"$SHOWN:$(line_of WAIT_STUCK): error: closure stuck: waits on a waitlist that was never woken" \
		"$SHOWN:$(line_of INIT_WAIT): note: the stuck closure (never_woken) was initialised here, in never_woken"
	expect_summary "closuretrace: 1 error: 1 closure leaked or stuck"
}

# stdin reaches the command, its stdout and stderr are byte for byte what they are without check.
case_output_unchanged() {
	skip_without_bpf
	head -c 100000 /dev/urandom >in
	"$PROG" clean <in >out.plain 2>err.plain
	[ $? = 0 ] || fail "ck_prog clean failed on its own"
	"$CT" check -- "$PROG" clean <in >out.check 2>err.check
	RC=$?
	expect_rc 0
	cmp out.plain out.check || fail "stdout changed"
	grep -q "stdin had 100000 bytes" out.check || fail "stdin did not reach the command"
	local n
	n=$(stat -c %s err.plain)
	cmp <(head -c "$n" err.check) err.plain || fail "stderr changed"
	[[ "$(tail -c +$((n + 1)) err.check)" =~ ^closuretrace:\ no\ leaks\;\ [0-9]+\ events,\ 0\ lost$ ]] ||
		fail "check added more than its summary to stderr: $(tail -c +$((n + 1)) err.check)"
}

# check --log-file FILE (%p: check's pid): every line of check's own goes to FILE; the command's
# standard output and error stay exactly its own, byte for byte (a test suite that asserts an
# empty stderr passes under check); the exit status is the check's. Both transports.
case_log_file() {
	skip_without_bpf
	local transport opt pid n
	"$PROG" leak_chatter </dev/null >out.plain 2>err.plain
	[ $? = 0 ] || fail "ck_prog leak_chatter failed on its own"
	[ "$(cat err.plain)" = "ck_prog: to stderr" ] || fail "ck_prog's own stderr: $(cat err.plain)"
	for transport in bpf no-bpf; do
		opt=()
		[ $transport = bpf ] || opt=(--no-bpf)
		rm -f log.*
		"$CT" check "${opt[@]}" --log-file 'log.%p' -- "$PROG" leak_chatter </dev/null >out 2>err &
		pid=$!
		wait $pid
		RC=$?
		expect_rc 1
		cmp out.plain out || fail "$transport: stdout changed"
		cmp err.plain err || fail "$transport: stderr changed: $(cat err)"
		[ "$(ls log.*)" = "log.$pid" ] || fail "$transport: the log is not log.$pid: $(ls)"
		cp "log.$pid" err
		expect_diagnostics "${DIAG_A[@]}"
		expect_summary "closuretrace: 1 error: 1 closure leaked or stuck"
		n=$(wc -l <"log.$pid")
		[ "$n" = 4 ] || fail "$transport: the log has $n lines, not 3 of diagnostics and the summary"
		# Clean: "no leaks" in the log, exit 0; a program whose stderr is empty keeps it empty.
		"$CT" check "${opt[@]}" --log-file log.clean -- "$PROG" clean </dev/null >out 2>err
		RC=$?
		expect_rc 0
		cmp err.plain err || fail "$transport: clean: stderr changed: $(cat err)"
		cp log.clean err
		[ "$(wc -l <log.clean)" = 1 ] || fail "$transport: clean: the log: $(cat log.clean)"
		expect_summary "closuretrace: no leaks"
		"$CT" check "${opt[@]}" --log-file log.quiet -- "$PROG" leak_a </dev/null >out 2>err
		RC=$?
		expect_rc 1
		[ ! -s err ] && [ ! -s out ] || fail "$transport: leak_a: output that is not the command's: $(cat out err)"
		grep -qx "${DIAG_A[0]}" log.quiet || fail "$transport: leak_a: the log: $(cat log.quiet)"
		# Started with standard error closed, the command has it closed too (not the log).
		"$CT" check "${opt[@]}" --log-file log.closed -- \
			sh -c "if [ -e /proc/\$\$/fd/2 ]; then echo open; else echo closed; fi; \"$PROG\" leak_a" \
			</dev/null >out 2>&-
		RC=$?
		expect_rc 1
		[ "$(cat out)" = closed ] || fail "$transport: standard error closed: the command's was $(cat out)"
		grep -qx "${DIAG_A[0]}" log.closed || fail "$transport: standard error closed: the log: $(cat log.closed)"
	done
}

# Each entry hides exactly the diagnostics it names.
case_suppressions() {
	skip_without_bpf
	printf '# the planted leak of kind A\nfun:request_a\n' >supp
	run --suppressions supp -- "$PROG" both
	expect_rc 1
	expect_diagnostics "${DIAG_B[@]}"
	expect_summary "closuretrace: 1 error: 1 closure leaked or stuck (1 suppressed)"

	printf '# by call site\nsite:ck_prog.c:%s   # the missing put\n' "$LEAK_B" >supp
	run --suppressions supp -- "$PROG" both
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}"

	printf 'src:*/check/ck_prog.c\n' >supp
	run --suppressions supp -- "$PROG" both
	expect_rc 0
	[ -z "$(diagnostics)" ] || fail "src: glob hid nothing"
	expect_summary "closuretrace: no leaks (2 suppressed)"

	printf 'fun:request_?\n' >supp
	run --suppressions supp -- "$PROG" both
	expect_rc 0

	# Names that match nothing hide nothing: another function, another line, the other rule.
	printf 'fun:batch\nsite:ck_prog.c:1\nsite:other.c:%s\nstuck:fun:request_a\nsrc:*.h\n' \
		"$LEAK_A" >supp
	run --suppressions supp -- "$PROG" both
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}" "${DIAG_B[@]}"

	# Several files: the entries of each count.
	printf 'fun:request_a\n' >supp.a
	printf 'fun:request_b\n' >supp.b
	run --suppressions supp.a --suppressions supp.b -- "$PROG" both
	expect_rc 0
	expect_summary "closuretrace: no leaks (2 suppressed)"

	printf 'leak:site:%s:%s\n' "$SOURCE" "$LEAK_A" >supp
	run --suppressions supp -- "$PROG" leak_a 3
	expect_rc 0
	expect_summary "closuretrace: no leaks (3 suppressed)"
}

# --gen-suppressions FILE: an entry for each error reported (valgrind's --gen-suppressions),
# ready to pass back with --suppressions, which then makes the same check pass.
case_gen_suppressions() {
	skip_without_bpf
	run --gen-suppressions gen.supp -- "$PROG" both
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}" "${DIAG_B[@]}"
	grep -qx 'closuretrace: wrote 2 suppressions to gen.supp' err || fail "no word of gen.supp"
	[ "$(grep -v '^#' gen.supp)" = "leak:site:$SHOWN:$LEAK_A
leak:site:$SHOWN:$LEAK_B" ] || fail "gen.supp: $(cat gen.supp)"
	grep -qx '# closure leaked: took 1 reference; the finished closures of its kind take 0 here' gen.supp ||
		fail "gen.supp: no comment with the message: $(cat gen.supp)"
	run --suppressions gen.supp -- "$PROG" both
	expect_rc 0
	expect_summary "closuretrace: no leaks (2 suppressed)"

	# Only what is still reported: with A suppressed, the file holds B alone.
	printf 'fun:request_a\n' >supp.a
	run --suppressions supp.a --gen-suppressions gen.b -- "$PROG" both
	expect_rc 1
	[ "$(grep -v '^#' gen.b)" = "leak:site:$SHOWN:$LEAK_B" ] || fail "gen.b: $(cat gen.b)"
	run --suppressions supp.a --suppressions gen.b -- "$PROG" both
	expect_rc 0

	# Stuck closures get stuck: entries; a clean run writes a file with none.
	for what in stuck waitlist; do
		run --gen-suppressions "gen.$what" -- "$PROG" "$what"
		expect_rc 1
		[ "$(grep -c '^stuck:site:' "gen.$what")" = 1 ] || fail "gen.$what: $(cat "gen.$what")"
		run --suppressions "gen.$what" -- "$PROG" "$what"
		expect_rc 0
	done
	run --gen-suppressions gen.clean -- "$PROG" clean
	expect_rc 0
	[ -z "$(grep -v '^#' gen.clean)" ] || fail "a clean run generated entries: $(cat gen.clean)"
	grep -qx 'closuretrace: wrote 0 suppressions to gen.clean' err || fail "no word of gen.clean"
}

case_suppressions_bad() {
	printf '# fine\nfun:x\nbogus:x\n' >supp
	run --suppressions supp -- true
	expect_rc 2
	[ "$(cat err)" = "supp:3: error: not a suppression (fun:, src: or site:): 'bogus:x'" ] || fail "bad entry"
	printf 'site:foo.c\n' >supp
	run --suppressions supp -- true
	expect_rc 2
	[ "$(cat err)" = "supp:1: error: a site is FILE:LINE: 'site:foo.c'" ] || fail "bad site"
	printf 'fun:\n' >supp
	run --suppressions supp -- true
	expect_rc 2
	[ "$(cat err)" = "supp:1: error: empty pattern: 'fun:'" ] || fail "empty pattern"
	run --suppressions no-such-file -- true
	expect_rc 2
	[ "$(cat err)" = "closuretrace: cannot read the suppressions no-such-file: No such file or directory" ] || fail "missing file"
}

case_sarif() {
	skip_without_bpf
	printf 'fun:request_b\n' >supp
	run --sarif out.sarif --suppressions supp -- "$PROG" both
	expect_rc 1
	python3 - "$SHOWN" "$LEAK_A" "$LEAK_B" <<'PY' || fail "SARIF"
import json, sys, urllib.parse
source, leak_a, leak_b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
log = json.load(open("out.sarif"))
# an absolute path is a file: URI, percent-encoded
uri = "file://" + urllib.parse.quote(source) if source.startswith("/") else urllib.parse.quote(source)
assert log["version"] == "2.1.0", log["version"]
assert log["$schema"].endswith("sarif-2.1.0.json"), log["$schema"]
run, = log["runs"]
driver = run["tool"]["driver"]
assert driver["name"] == "closuretrace"
rules = [r["id"] for r in driver["rules"]]
assert rules == ["closure-leak", "closure-stuck"], rules
results = run["results"]
assert len(results) == 2, results
lines = []
for r in results:
    assert r["ruleId"] in rules and r["level"] == "error", r
    assert r["message"]["text"].startswith("closure leaked: "), r["message"]
    loc, = r["locations"]
    phys = loc["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == uri, phys
    if "suppressions" in r:
        assert r["suppressions"] == [{"kind": "external", "justification": "supp:1"}], r
    lines.append((phys["region"]["startLine"], "suppressions" in r))
    for rel in r["relatedLocations"]:
        assert rel["physicalLocation"]["region"]["startLine"] > 0 and rel["message"]["text"]
assert sorted(lines) == [(leak_a, False), (leak_b, True)], lines
PY
}

case_keep_trace() {
	skip_without_bpf
	run --keep-trace kept.json -- "$PROG" leak_a
	expect_rc 1
	head -1 kept.json | grep -q '"type":"header"' || fail "no header"
	tail -1 kept.json | grep -q '"type":"end".*"exit_code":0' || fail "no end record"
	"$CT" report -i kept.json >report 2>&1 || fail "report failed on the kept trace"
	grep -q "ck_prog.c:$LEAK_A" report || fail "report does not blame LEAK_A"
}

# A shell script that runs the leaking program: followed across fork and exec.
case_nested() {
	skip_without_bpf
	printf '#!/bin/sh\necho script: start\n"%s" leak_a\necho script: end\n' "$PROG" >nested.sh
	chmod +x nested.sh
	run -- ./nested.sh
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}"
	[ "$(cat out)" = "$(printf 'script: start\nscript: end')" ] || fail "script output changed"
	run -- sh -c "\"$PROG\" clean >/dev/null; (\"$PROG\" leak_b); true"
	expect_rc 1
	expect_diagnostics "${DIAG_B[@]}"
	# Every exec is held until its probes are attached: many of them, none left stopped.
	run -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; \"$PROG\" leak_a"
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}"
}

# Processes outside the command, using the same library meanwhile, are not in its trace.
case_others_ignored() {
	skip_without_bpf
	run -- "$PROG" clean
	expect_rc 0
	local alone
	alone=$(grep -o '[0-9]* events' err)
	"$PROG" many 3000000 &
	local other=$!
	"$PROG" leak_b &
	run -- "$PROG" clean
	kill "$other" 2>/dev/null
	wait
	expect_rc 0
	[ "$(grep -o '[0-9]* events' err)" = "$alone" ] || fail "$(grep -o '[0-9]* events' err), alone $alone"
}

# The probes are attached per process: an unrelated process using the same libclosure.so while
# check runs has no breakpoint at any probe site and every USDT semaphore at 0 (so its batches stay
# off), where the checked process has them; none of its events reach the trace.
case_others_untouched() {
	skip_without_bpf
	"$PROG" many 1000000000 &
	local other=$! checker checked lib mine theirs
	"$CT" check --keep-trace t.json -- "$PROG" wait checked.pid >out 2>err </dev/null &
	checker=$!
	for _ in $(seq 100); do [ -s checked.pid ] && break; sleep 0.1; done
	checked=$(cat checked.pid 2>/dev/null)
	lib=$(awk '/libclosure/ { print $6; exit }' "/proc/$other/maps")
	theirs=$(python3 "$SRC/probe_state.py" "$other" "$lib")
	mine=$(python3 "$SRC/probe_state.py" "$checked" "$lib")
	kill "$other"
	kill "$checked"
	wait "$checker"
	wait
	[ -n "$checked" ] || fail "the checked process never ran"
	[[ "$theirs" =~ ^"semaphores 0 raised of "[1-9][0-9]*", breakpoints 0 of "[1-9] ]] ||
		fail "the other process: $theirs"
	[[ "$mine" =~ ^"semaphores "[1-9][0-9]*" raised of ".*", breakpoints "[1-9] ]] ||
		fail "the checked process: $mine"
	[ "$(grep -o '"pid":[0-9]*' t.json | sort -u)" = "\"pid\":$checked" ] ||
		fail "other pids in the trace: $(grep -o '"pid":[0-9]*' t.json | sort -u | tr '\n' ' ')"
}

# A child that does closure work from its first instruction after the fork is recorded whole: it
# is held until its own links exist (batches, and per-operation probes in the program itself).
case_fork_now() {
	skip_without_bpf
	local counts
	for how in "" --per-op; do
		run $how --keep-trace t.json -- "$PROG" fork_now 5000
		expect_rc 0
		counts=$(grep -o '"ev":"[a-z_]*"' t.json | sort | uniq -c | awk '{ printf "%s %s ", $2, $1 }')
		[ "$counts" = '"ev":"continue_at" 1 "ev":"finish" 1 "ev":"get" 5000 "ev":"init" 1 "ev":"put" 5000 ' ] ||
			fail "${how:-batched}: $counts"
	done
}

# An exec by another thread than the first: the process's links named its first task, gone; they
# are made again, and the new program's leak is found.
case_thread_exec() {
	skip_without_bpf
	run -- "$PROG" thread_exec "$PROG" leak_a
	expect_rc 1
	expect_diagnostics "${DIAG_A[@]}"
}

# The same program twice, as two processes: one diagnostic, counted twice.
case_nested_twice() {
	skip_without_bpf
	run -- bash -c "\"$PROG\" leak_a; \"$PROG\" leak_a"
	expect_rc 1
	expect_diagnostics "${DIAG_A[0]} [2 closures]" "${DIAG_A[@]:1}"
	expect_summary "closuretrace: 1 error: 2 closures leaked or stuck"
}

# A child forked without exec uses the same addresses as its parent, at the same time: the
# events' pid keeps their closures apart.
case_fork() {
	skip_without_bpf
	run --keep-trace t.json -- "$PROG" fork 0
	expect_rc 0
	[ -z "$(diagnostics)" ] || fail "diagnostics on a clean fork"
	[ "$(grep -o '"pid":[0-9]*' t.json | sort -u | wc -l)" = 2 ] || fail "not two pids in the trace"
	run -- "$PROG" fork 1
	expect_rc 1
	expect_diagnostics \
		"$SHOWN:$(line_of LEAK_FORK): error: closure leaked: took 1 reference; the finished closures of its kind take 0 here" \
		"$SHOWN:$(line_of INIT_FORK): note: the leaked closure (forked_closure) was initialised here, in forked_closure"
}

# A library the command dlopens is attached before its first operation (the loader is watched).
case_dlopen() {
	skip_without_bpf
	run --keep-trace t.json -- "$WORKLOAD" dlopen_now "$PLUGIN" 1000
	expect_rc 0
	local gets
	gets=$(grep -c '"ev":"get"' t.json)
	[ "$gets" = 1000 ] || fail "$gets get events, not 1000"
}

case_lost_flag() {
	skip_without_bpf
	run --buffer-size 4K -- "$PROG" many 200000
	expect_rc 1
	grep -qE "^closuretrace: [0-9]+ events were lost: the verdict is incomplete; rerun with a larger --buffer-size, or accept it with --allow-lost$" err ||
		fail "lost events not said"
	# Lost events fail the check even when leaks do not (check(1) EXIT STATUS).
	run --buffer-size 4K --error-exitcode 0 -- "$PROG" many 200000
	expect_rc 1
	run --buffer-size 4K --allow-lost --error-exitcode 0 -- "$PROG" many 200000
	expect_rc 0
	grep -qE "^closuretrace: warning: [0-9]+ events were lost: the verdict is incomplete$" err ||
		fail "lost events not said with --allow-lost"
}

case_not_root() {
	local as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	[ "$(id -u)" = 0 ] || as_nobody=()
	# Without BPF the command writes its own events (the in-process sink): the same verdict.
	"${as_nobody[@]}" "$CT" check -- "$PROG" clean >out 2>err </dev/null
	RC=$?
	expect_rc 0
	grep -qE "^closuretrace: no leaks; [1-9][0-9]* events, 0 lost$" err || fail "verdict: $(cat err)"
}

# check itself SIGKILLed while a process of the command is stopped: its guard continues the job
# (a process held at an exec would otherwise stay stopped for ever) and removes the temporary trace.
# check_killed_in DIR [OPTIONS]: check (OPTIONS) of a command that stops itself, SIGKILLed while
# the command is stopped: the guard continues the command and leaves DIR empty.
check_killed_in() {
	local dir=$1 sh_pid= ct_pid= state=
	shift
	rm -f sh.pid resumed
	TMPDIR=$WORK/tmp setsid "$CT" check "$@" -- sh -c 'echo $$ >sh.pid; kill -STOP $$; echo resumed >resumed' \
		>out 2>err </dev/null &
	for _ in $(seq 200); do
		[ -s sh.pid ] && sh_pid=$(cat sh.pid) && state=$(awk '{print $3}' "/proc/$sh_pid/stat" 2>/dev/null)
		[ "$state" = T ] && break
		sleep 0.05
	done
	[ "$state" = T ] || fail "the command did not stop itself"
	ct_pid=$(ps -o ppid= -p "$sh_pid" | tr -d ' ')
	[ "$(cat "/proc/$ct_pid/comm")" = closuretrace ] || fail "the command's parent is not closuretrace"
	if [ $# = 0 ]; then
		[ -z "$(ls -A tmp)" ] || fail "check wrote a file it was not asked for: $(ls -A tmp)"
	else
		[ -n "$(ls -A "$dir")" ] || fail "no unfinished trace in $dir while check $* runs"
	fi
	kill -KILL "$ct_pid"
	for _ in $(seq 200); do
		[ -s resumed ] && break
		sleep 0.05
	done
	[ "$(cat resumed 2>/dev/null)" = resumed ] || fail "the stopped command was not continued after check was killed"
	for _ in $(seq 200); do # the guard continues the command, then removes the file
		[ -z "$(ls -A "$dir")" ] && break
		sleep 0.05
	done
	[ -z "$(ls -A "$dir")" ] || fail "the unfinished trace was left behind: $(ls -A "$dir")"
}

case_check_killed() {
	skip_without_bpf
	mkdir tmp kept
	check_killed_in tmp
	check_killed_in kept --keep-trace kept/t.json
}

case_no_probes() {
	skip_without_bpf
	run -- /bin/false
	expect_rc 1
	[ "$(cat err)" = "closuretrace: /bin/false exited with status 1, and ran no program with closure probes: nothing to check" ] ||
		fail "a failed command without probes is not said"
	# --sarif and --keep-trace paths are checked before the command runs.
	run --sarif "$WORK/none/x.sarif" -- sh -c "touch ran"
	expect_rc 2
	[ "$(cat err)" = "closuretrace: cannot write $WORK/none/x.sarif: No such file or directory" ] || fail "--sarif path"
	run --keep-trace "$WORK/none/t.json" -- sh -c "touch ran"
	expect_rc 2
	[ ! -e ran ] || fail "the command ran"
	# A trace that cannot be written while recording (a full disk): 2, as record.
	for transport in bpf no-bpf; do
		local opt=()
		[ $transport = bpf ] || opt=(--no-bpf)
		run "${opt[@]}" --keep-trace /dev/full -- "$PROG" clean
		expect_rc 2
		grep -qx "closuretrace: writing the trace /dev/full failed: No space left on device" err ||
			fail "$transport: a full disk is not said"
	done
	run -- no-such-command-xyz
	expect_rc 2
	[ "$(cat err)" = "closuretrace: cannot run no-such-command-xyz: No such file or directory" ] ||
		fail "a command that cannot be run"
	run -- true
	expect_rc 3
	[ "$(cat err)" = "closuretrace: no closure probes in true or the programs it ran; link it with libclosure built with probes (CLOSURE_PROBES=ON)" ] ||
		fail "no-probes message"
}

# check writes no file it was not asked for: none in the working folder, none in TMPDIR. With BPF
# it needs no TMPDIR at all (one that does not exist); the sink of --no-bpf has its folder there
# while the command runs, and leaves nothing (check_killed: nothing while it runs with BPF).
case_no_files() {
	skip_without_bpf
	local transport
	mkdir cwd tmp
	for transport in bpf no-bpf; do
		local opt=() tmp=$WORK/no-such-folder
		[ $transport = bpf ] || { opt=(--no-bpf); tmp=$WORK/tmp; }
		(cd cwd && TMPDIR=$tmp "$CT" check "${opt[@]}" -- "$PROG" both >../out 2>../err </dev/null)
		RC=$?
		expect_rc 1
		expect_diagnostics "${DIAG_A[@]}" "${DIAG_B[@]}"
		[ -z "$(ls -A cwd)$(ls -A tmp)" ] || fail "$transport: check left files: $(ls -A cwd tmp)"
		[ ! -e no-such-folder ] || fail "$transport: check made TMPDIR"
	done
}

# The verdict judged as the command runs is the one its trace gives when read back (check_judge:
# the reader, then the same model and diagnostics): the same errors and notes, the same counts,
# by both transports, for leaks, stuck closures, two processes, a hang ended by --timeout, and a
# clean run of many events.
case_live_equals_file() {
	skip_without_bpf
	local transport args live judged
	for transport in bpf no-bpf; do
		for args in "both" "leak_a 3" "fork 1" "stuck" "waitlist" "clean" "many 20000" "hang"; do
			local opt=(--keep-trace t.json)
			[ $transport = bpf ] || opt+=(--no-bpf)
			[ "$args" != hang ] || opt+=(--timeout 1s)
			[ $transport = bpf ] || [ "$args" != hang ] || continue # the sink needs an exit
			# shellcheck disable=SC2086 # args are words
			run "${opt[@]}" -- "$PROG" $args
			[ "$RC" = 0 ] || [ "$RC" = 1 ] || [ "$RC" = 124 ] || fail "$transport $args: exit $RC"
			"$JUDGE" t.json >judged.txt 2>judge.err
			[ $? -le 1 ] || fail "$transport $args: check_judge: $(cat judge.err)"
			grep -E '^[^ ]+: (error|note): ' judged.txt | grep -v '^closuretrace: note: ' >file.txt
			diagnostics >live.txt
			diff live.txt file.txt >diff.txt || fail "$transport $args: live and read back differ: $(cat diff.txt)"
			# "N errors: M closures" (or none) against check_judge's "N shown, M closures".
			live=$(sed -nE 's/^closuretrace: ([0-9]+) errors?: ([0-9]+) closures? leaked or stuck.*/\1 \2/p' err)
			judged=$(sed -nE 's/^([0-9]+) shown, ([0-9]+) closures? leaked or stuck.*/\1 \2/p' judged.txt)
			[ "${live:-0 0}" = "$judged" ] || fail "$transport $args: counts '$live' live, '$judged' read back"
			[ -s live.txt ] || [ "$judged" = "0 0" ] || fail "$transport $args: no diagnostics"
		done
	done
}

# peak_run ARGS...: closuretrace check ARGS (stdout to out, stderr to err, status in RC); its peak
# resident memory in KiB (VmHWM, read while it runs) in PEAK.
peak_run() {
	local pid kb state
	"$CT" check "$@" >out 2>err </dev/null &
	pid=$!
	PEAK=0
	while read -r state kb < <(awk '/^State:/ {s = $2} /^VmHWM:/ {k = $2} END {print s, k + 0}' \
		"/proc/$pid/status" 2>/dev/null) && [ -n "$state" ] && [ "$state" != Z ]; do
		[ "$kb" -gt "$PEAK" ] && PEAK=$kb
		sleep 0.02
	done
	wait "$pid"
	RC=$?
}

# check's memory follows the closures alive, not the events: 8 times the events (14 M, all of
# closures that finish) take less than 1.5 times the peak memory (the ring buffer and the
# recorder's reorder queue are bounded; the model forgets finished closures).
case_memory_flat() {
	skip_without_bpf
	local small events
	peak_run -- "$PROG" many 250000
	expect_rc 0
	expect_summary "closuretrace: no leaks"
	small=$PEAK
	peak_run -- "$PROG" many 2000000
	expect_rc 0
	expect_summary "closuretrace: no leaks"
	events=$(sed -nE 's/^closuretrace: no leaks; ([0-9]+) events.*/\1/p' err)
	echo "peak RSS: $small KiB at 1.8 M events, $PEAK KiB at $events events"
	[ "$events" -ge 14000000 ] || fail "only $events events"
	[ "$small" -gt 0 ] && [ "$PEAK" -lt $((small * 3 / 2)) ] ||
		fail "peak RSS $small KiB at 1.8 M events, $PEAK KiB at $events"
}

"case_$CASE"
echo "PASS [$CASE]"
