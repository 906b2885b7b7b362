#!/usr/bin/env bash
# The root recorder against hostile traced programs, for real (root, BPF). One case per run:
#   trust_test.sh CASE CLOSURETRACE BIN_DIR WORKLOAD
# The hostile program (ct_hostile.c) runs as nobody, as an unprivileged user's would. Each case
# prints what it checks and exits 0 (pass) or 1 (fail).
set -uo pipefail
case_name=$1 ct=$2 bindir=$3 workload=$4
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
chmod 755 "$tmp"
skip_without_bpf
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)

# start_hostile PROGRAM ARGS...: runs it as nobody until it prints "ready"; sets $hpid.
start_hostile() {
	"${as_nobody[@]}" "$@" >hostile.out 2>&1 &
	hpid=$!
	pids+=("$hpid")
	for _ in $(seq 1 500); do
		grep -qx ready hostile.out && return 0
		kill -0 "$hpid" 2>/dev/null || fail "$* ended: $(cat hostile.out)"
		sleep 0.02
	done
	fail "$* never got ready: $(cat hostile.out)"
}

# recorded SECONDS CMD...: CMD (a recorder), killed if it runs past SECONDS (then the case fails);
# its status in $rc, its output in out.txt and err.txt.
recorded() {
	local limit=$1
	shift
	timeout -s KILL "$limit" "$@" >out.txt 2>err.txt </dev/null
	rc=$?
	[ "$rc" != 137 ] || fail "$* still ran after $limit s (killed): $(cat err.txt)"
}

# no_escapes FILE: not one control character but newline (ESC, BEL, ...) in FILE.
no_escapes() {
	if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$1"; then
		fail "control characters in $1: $(cat -v "$1" | head -20)"
	fi
	echo "ok: no control character in $1"
}

case $case_name in
fifo_module)
	# The process names a FIFO in closure:module: the recorder must neither open it (it would
	# block for ever in open) nor believe it; it ends at its -d.
	mkfifo "$tmp/module.fifo"
	start_hostile "$bindir/ct_hostile" module "$tmp/module.fifo"
	recorded 30 "$ct" record -p "$hpid" -d 2 -o t.json
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	grep -q 'module records refused' err.txt || fail "no word of the refused records: $(cat err.txt)"
	grep -q "module.fifo" t.json && fail "the FIFO is in the trace: $(grep module.fifo t.json | head -3)"
	echo "ok: record -p -d 2 ended (exit 0), the FIFO refused: $(cat err.txt)"
	;;
path_flood)
	# 2,000,000 distinct module paths, as fast as the process can fire them: refused at the
	# cost of a stat each; the recorder ends at its -d, its objects bounded.
	start_hostile "$bindir/ct_hostile" paths
	start=$(date +%s%N)
	recorded 60 "$ct" record -p "$hpid" -d 3 -o t.json
	took=$((($(date +%s%N) - start) / 1000000))
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	grep -q 'module records refused' err.txt || fail "no word of the refused records: $(cat err.txt)"
	[ "$(grep -c '"type":"module"' t.json)" -lt 50 ] || fail "$(grep -c '"type":"module"' t.json) module records in the trace"
	echo "ok: record -p -d 3 of a path flood ended after $took ms: $(cat err.txt)"
	;;
escapes_top)
	# Symbol and file names with escape sequences: top shows them made visible.
	start_hostile "$bindir/ct_hostile" names
	recorded 60 "$ct" top -b -n 3 -d 0.5 -p "$hpid"
	[ "$rc" = 0 ] || fail "top exited $rc: $(cat err.txt)"
	grep -q 'names -> [^ ]* (?\]2;PWNED-FILE??\[2J\.c:[0-9]*)' out.txt || fail "the init site is not shown: $(cat -v out.txt)"
	no_escapes out.txt
	no_escapes err.txt
	;;
escapes_ps)
	start_hostile "$bindir/ct_hostile_debug" names
	recorded 60 "$ct" ps -p "$hpid"
	[ "$rc" = 0 ] || fail "ps exited $rc: $(cat err.txt)"
	grep -q '?\]2;PWNED-FILE??\[2J\.c' out.txt || fail "the file is not shown: $(cat -v out.txt)"
	no_escapes out.txt
	no_escapes err.txt
	;;
fake_streams)
	# One batch hit per made-up buffer address, 200,000 of them a round: streams are capped
	# (BATCH_STREAMS_MAX), the rest refused and counted as lost; the recorder stays under 300 MB.
	start_hostile "$bindir/ct_hostile" streams 200000
	recorded 60 /usr/bin/time -f "maxrss_kb=%M" "$ct" record -p "$hpid" -d 3 -o t.json
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	rss=$(sed -n 's/^maxrss_kb=//p' err.txt)
	[ -n "$rss" ] && [ "$rss" -lt 307200 ] || fail "the recorder grew to $rss kB (limit 300 MB): $(cat err.txt)"
	grep -q 'batched records refused (counted as lost)' err.txt || fail "no word of the refused records: $(cat err.txt)"
	echo "ok: 200,000 made-up streams, the recorder's peak $rss kB: $(grep refused err.txt)"
	;;
seq_gaps)
	# 200,000 hits a round over 16,000 made-up buffers, each record's seq 2 past its stream's
	# last: every hit leaves a gap, kept open for a late record. Gaps are capped over all
	# streams (BATCH_SPANS_TOTAL_MAX) and those given up counted as lost; the recorder stays
	# small (209 MB after 8 s before the cap, and growing). A 4 MiB ring buffer: the default
	# 64 MiB is written through before attaching (touch_ring) and would count in the peak.
	start_hostile "$bindir/ct_hostile" gaps 200000 16000
	recorded 60 /usr/bin/time -f "maxrss_kb=%M" "$ct" record -p "$hpid" -d 8 -b 4M -o t.json
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	rss=$(sed -n 's/^maxrss_kb=//p' err.txt)
	[ -n "$rss" ] && [ "$rss" -lt 122880 ] || fail "the recorder grew to $rss kB (limit 120 MB): $(cat err.txt)"
	lost=$(grep -o '"lost":[0-9]*' t.json | tail -1)
	[ -n "$lost" ] && [ "${lost#*:}" -gt 0 ] || fail "the gaps given up are not counted as lost: $lost"
	echo "ok: seqs with gaps, the recorder's peak $rss kB, $lost"
	;;
fake_tid)
	# A nobody process lists a buffer whose head names a thread of a root process, at an
	# address where that process holds a secret behind a head that passes for its own. Were
	# the head believed (BPF told to drain that thread's buffer there at its exit), the root
	# process's bytes would reach the nobody process's trace (issue 25 item 4). The victim
	# exits while it is recorded: nothing of it may be in the trace.
	coproc victim { "$bindir/ct_hostile" victim; }
	pids+=("$victim_PID")
	read -r vtid <&"${victim[0]}" || fail "the victim did not start"
	start_hostile "$bindir/ct_hostile" faketid "$vtid"
	"$ct" record -p "$hpid" -d 3 -o t.json >out.txt 2>err.txt &
	rec=$!
	sleep 1.5
	exec {victim[1]}>&- # end of input: the victim exits, under the recording
	wait "$victim_PID" 2>/dev/null
	wait "$rec" || fail "record exited $?: $(cat err.txt)"
	grep -q "\"tid\":$vtid[,}]" t.json && fail "the victim's thread is in the trace: $(grep "\"tid\":$vtid[,}]" t.json | head -3)"
	# "RET-7f3a", the marker's second 8 bytes, as the record's ip (written less 1).
	grep -qi '0x613366372d544551' t.json && fail "the victim's marker is in the trace"
	grep -q '"type":"end"' t.json || fail "no trailer: $(cat err.txt)"
	echo "ok: a buffer naming root's thread $vtid was not believed; nothing of it in the trace"
	;;
recorder_sigkill)
	# record -p SIGKILLed while it records: the -o path holds the trace up to its last complete
	# line (flushed every 100 ms; the last line may be cut), and no hidden .t.json.XXXXXX is
	# left as the only copy. report reads it.
	start_hostile "$bindir/ct_hostile" names
	"$ct" record -p "$hpid" -o t.json >rec.out 2>rec.err </dev/null &
	rpid=$!
	pids+=("$rpid")
	for _ in $(seq 1 500); do
		[ "$(grep -c '"type":"event"' t.json 2>/dev/null || echo 0)" -ge 200 ] && break
		kill -0 "$rpid" 2>/dev/null || fail "record ended: $(cat rec.err)"
		sleep 0.02
	done
	kill -KILL "$rpid"
	wait "$rpid" 2>/dev/null
	[ "$(ls -A | grep 't\.json')" = t.json ] || fail "not t.json alone: $(ls -A)"
	head -1 t.json | grep -q '^{"type":"header"' || fail "no header line: $(head -c 200 t.json)"
	events=$(grep -c '"type":"event"' t.json)
	[ "$events" -ge 200 ] || fail "$events events in the killed recording's trace"
	"$ct" report -i t.json >report.txt 2>report.err || fail "report of the killed recording: $(cat report.err)"
	echo "ok: SIGKILLed, t.json holds $events events; report: $(head -c 200 report.err)"
	;;
setuid_sink)
	# A setuid-root program linked with libclosure, run by nobody with CLOSURETRACE_SINK naming
	# a folder nobody cannot write: the library must not create its files there as root.
	mkdir locked
	cp "$bindir/ct_hostile" prog
	chown root:root prog
	chmod 4755 prog
	"${as_nobody[@]}" env CLOSURETRACE_SINK="$tmp/locked" ./prog once >out.txt 2>err.txt
	rc=$?
	[ "$rc" = 0 ] || fail "the setuid program exited $rc: $(cat err.txt)"
	[ -z "$(ls -A locked)" ] || fail "files created as root in a folder nobody cannot write: $(ls -la locked)"
	# The same program not setuid does write there (the variable is read at all).
	chmod 0755 prog
	CLOSURETRACE_SINK="$tmp/locked" ./prog once >out.txt 2>err.txt || fail "prog once: $(cat err.txt)"
	[ -n "$(ls -A locked)" ] || fail "not setuid, the sink was not used either: the test proves nothing"
	echo "ok: setuid, CLOSURETRACE_SINK ignored; not setuid, $(ls -A locked | wc -l) files written"
	;;
killed_at_attach_record | killed_at_attach_check)
	# The command is killed (SIGKILL) before the recorder has attached and let it run: a
	# message, and the command's status (128+9), never the recorder's death by SIGPIPE (141).
	cmd=${case_name#killed_at_attach_}
	args=(record -o t.json)
	[ "$cmd" = check ] && args=(check)
	timeout -s KILL 60 "$bindir/ct_kill_at_attach" "$ct" "${args[@]}" -- "$workload" counts 1 \
		>out.txt 2>err.txt </dev/null
	rc=$?
	grep -qx killed out.txt || fail "the command was not killed in time: $(cat out.txt err.txt)"
	[ "$rc" = 137 ] || fail "$cmd exited $rc, not 137 (the command's SIGKILL): $(cat err.txt)"
	grep -q 'the command ended before it could start' err.txt ||
		fail "no message: $(cat err.txt)"
	echo "ok: $cmd of a command killed at attach: exit $rc, $(head -c 300 err.txt)"
	;;
*)
	fail "unknown case $case_name"
	;;
esac
exit "$status"
