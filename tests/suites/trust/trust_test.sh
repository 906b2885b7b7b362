#!/usr/bin/env bash
# The root recorder against hostile traced programs, for real (root, BPF). One case per run:
#   trust_test.sh CASE CLOSURETRACE BIN_DIR WORKLOAD
# The hostile program (ct_hostile.c) runs as nobody, as an unprivileged user's would. Each case
# prints what it checks and exits 0 (pass) or 1 (fail).
set -uo pipefail
case_name=$1 ct=$2 bindir=$3 workload=$4
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
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

# no_escapes FILE: nothing in FILE that a terminal could obey: no control character but newline
# (ESC, BEL, ...), no DEL, no C1 (U+0080..U+009F), no byte that is not part of valid UTF-8 (a lone
# 0x9b is an 8-bit CSI), no bidi control (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069).
no_escapes() {
	python3 - "$1" <<'PY' || fail "raw in $1: $(cat -v "$1" | head -20)"
import sys
bad = set()
for ch in open(sys.argv[1], "rb").read().decode("utf-8", "surrogateescape"):
    o = ord(ch)
    if 0xdc80 <= o <= 0xdcff:
        bad.add("byte 0x%02x" % (o & 0xff))
    elif ((o < 0x20 and ch != "\n") or 0x7f <= o <= 0x9f or o in (0x61c, 0x200e, 0x200f)
          or 0x202a <= o <= 0x202e or 0x2066 <= o <= 0x2069):
        bad.add("U+%04X" % o)
if bad:
    print("FAIL: %s holds %s" % (sys.argv[1], ", ".join(sorted(bad))))
    sys.exit(1)
PY
	echo "ok: nothing a terminal obeys in $1 ($(wc -l <"$1") lines)"
}

# The hostile programs in a folder named as ct_hostile names its file (hdir), and that name as
# every output shows it (trace_text.h), shown_hdir.
hdir=$tmp/$'bin\033]2;DIR\007\233[2J\205\342\200\256\302\233\377'
shown_hdir=$tmp/'bin\u001b]2;DIR\u0007\udc9b[2J\udc85\u202e\u009b\udcff'
if ! mkdir -m 755 "$hdir" || ! cp "$bindir/ct_hostile" "$bindir/ct_hostile_debug" "$hdir/"; then
	fail "cannot copy the hostile programs"
fi
# ct_hostile.c's file (#line), as shown, and its functions that leak (ct_hostile_leaks.c).
shown_file='\u001b]2;PWNED-FILE\u0007\udc9b[2J\udc85\u202e\u009b\udcff.c'
leak_esc='leak\u001b]2;ESC\u0007' leak_c1='leak\udc9b[2J\udc85\u009b\udcff' leak_rlo='leak_\u202e_rlo'

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
	# Names a terminal would obey (ct_hostile names), in a program in such a folder: top shows
	# them escaped.
	start_hostile "$hdir/ct_hostile" names
	recorded 60 "$ct" top -b -n 3 -d 0.5 -p "$hpid"
	[ "$rc" = 0 ] || fail "top exited $rc: $(cat err.txt)"
	grep -qF "names -> evil_continuation ($shown_file:" out.txt || fail "the init site is not shown: $(cat -v out.txt)"
	no_escapes out.txt
	no_escapes err.txt
	;;
escapes_ps)
	start_hostile "$hdir/ct_hostile_debug" names
	recorded 60 "$ct" ps -p "$hpid"
	[ "$rc" = 0 ] || fail "ps exited $rc: $(cat err.txt)"
	[[ "$(head -1 out.txt)" == "process $hpid ($shown_hdir/ct_hostile_debug): "[23]" live closures" ]] ||
		fail "the program is not shown: $(cat -v out.txt)"
	grep -qF " $shown_file:" out.txt || fail "the file is not shown: $(cat -v out.txt)"
	no_escapes out.txt
	no_escapes err.txt
	;;
escapes_record)
	# record -v names the objects it attaches to (paths the process chose); report and explain
	# of the trace show its names escaped.
	start_hostile "$hdir/ct_hostile" names
	recorded 60 "$ct" record -v -p "$hpid" -d 1 -o t.json
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	grep -qF "closuretrace: attached 2 probes in $shown_hdir/ct_hostile" err.txt ||
		fail "record -v does not name the program: $(cat -v err.txt)"
	no_escapes out.txt
	no_escapes err.txt
	"$ct" report -i t.json >report.txt 2>report.err || fail "report exited $?: $(cat -v report.err)"
	header=$(sed -n 2p report.txt)
	[[ "$header" == "# pid $hpid $shown_hdir/ct_hostile, $(grep -c '"type":"event"' t.json) events, "*" s, stopped: duration" ]] ||
		fail "report's header: $(head -2 report.txt | cat -v)"
	grep -qF "names -> evil_continuation ($shown_file:" report.txt || fail "report: $(cat -v report.txt)"
	no_escapes report.txt
	no_escapes report.err
	cl=$(sed -n 's/.*"ev":"continue_at","cl":"\(0x[0-9a-f]*\)".*/\1/p' t.json | head -1)
	"$ct" explain -i t.json "$cl" >explain.txt 2>explain.err || fail "explain $cl exited $?: $(cat -v explain.err)"
	grep -qF "names -> evil_continuation, init at $shown_file:" explain.txt ||
		fail "explain: $(cat -v explain.txt)"
	no_escapes explain.txt
	no_escapes explain.err
	;;
escapes_check)
	# Issue 38 items 2 and 3: three closures leaked in functions named with what a terminal
	# obeys, two of them with bytes that are not UTF-8: three errors on stderr, escaped, and
	# three results in the SARIF log, which is valid JSON and says the same.
	recorded 60 "$ct" check --sarif s.sarif --keep-trace k.json -- "${as_nobody[@]}" "$hdir/ct_hostile" leaks
	[ "$rc" = 1 ] || fail "check exited $rc, not 1 (leaks): $(cat -v err.txt)"
	at="$shown_file:" # relative to the folder it was compiled in, its source root
	cat >want.txt <<-EOF
		closuretrace: error: closure leaked: the running reference (owned by $leak_esc) was never given up (in $leak_esc)
		closuretrace: note: the leaked closure ($leak_esc) was initialised here, in $leak_esc
		closuretrace: error: closure leaked: the running reference (owned by $leak_c1) was never given up (in $leak_c1)
		closuretrace: note: the leaked closure ($leak_c1) was initialised here, in $leak_c1
		${at}13: error: closure leaked: the running reference (owned by $leak_rlo) was never given up
		${at}13: note: the leaked closure ($leak_rlo) was initialised here, in $leak_rlo
		closuretrace: 3 errors: 3 closures leaked or stuck; 3 events, 0 lost
	EOF
	diff want.txt err.txt >diff.txt || fail "check's diagnostics: $(cat -v diff.txt)"
	echo "ok: check: 3 errors, escaped: $(grep -c ': error: ' err.txt) error lines"
	no_escapes out.txt
	no_escapes err.txt
	no_escapes s.sarif
	python3 - s.sarif err.txt "$bindir" <<'PY' || fail "the SARIF log: $(cat s.sarif)"
import json, sys, urllib.parse
results = json.load(open(sys.argv[1]))["runs"][0]["results"]
errors = [l.split(": error: ", 1)[1] for l in open(sys.argv[2], encoding="utf-8") if ": error: " in l]
assert len(results) == len(errors) == 3, (len(results), len(errors))
# The same words as stderr (without the function stderr adds when no file is known).
for r, e in zip(results, errors):
    assert e.startswith(r["message"]["text"]), (r["message"]["text"], e)
# The file by its own bytes, percent-encoded, relative to its source root (the folder it was
# compiled in, sys.argv[3]): the URI finds it there.
uri = results[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
path = b"\033]2;PWNED-FILE\007\233[2J\205\342\200\256\302\233\377.c"
assert uri == urllib.parse.quote_from_bytes(path, safe="/-._~"), uri
print("ok: 3 SARIF results, valid JSON, the messages of stderr, %s" % uri)
PY
	# The suppressions written for them hide them all.
	recorded 60 "$ct" check --gen-suppressions g.supp -- "${as_nobody[@]}" "$hdir/ct_hostile" leaks
	[ "$rc" = 1 ] || fail "check --gen-suppressions exited $rc: $(cat -v err.txt)"
	recorded 60 "$ct" check --suppressions g.supp -- "${as_nobody[@]}" "$hdir/ct_hostile" leaks
	if [ "$rc" != 0 ] || [ "$(cat err.txt)" != "closuretrace: no leaks (3 suppressed); 3 events, 0 lost" ]; then
		fail "check --suppressions (exit $rc) of what --gen-suppressions wrote: $(cat -v err.txt g.supp)"
	fi
	no_escapes g.supp
	# The kept trace, read back: report and explain of every leak show the names escaped.
	"$ct" report -i k.json >report.txt 2>report.err || fail "report: $(cat -v report.err)"
	grep -qF "leaks: 3 root causes" report.txt || fail "report: $(cat -v report.txt)"
	no_escapes report.txt
	no_escapes report.err
	while read -r cl; do
		"$ct" explain -i k.json "$cl" >explain.txt 2>explain.err || fail "explain $cl: $(cat -v explain.err)"
		no_escapes explain.txt
		no_escapes explain.err
	done < <(sed -n 's/.*"ev":"init","cl":"\(0x[0-9a-f]*\)".*/\1/p' k.json)
	;;
escapes_list)
	# list names the objects by their paths (the program's folder here), from a process and
	# from a file; a file it cannot read is named escaped too.
	start_hostile "$hdir/ct_hostile" names
	recorded 60 "$ct" list -p "$hpid"
	[ "$rc" = 0 ] || fail "list -p exited $rc: $(cat -v err.txt)"
	grep -qF "usdt:$shown_hdir/ct_hostile:closure:module  2 sites" out.txt || fail "list -p: $(cat -v out.txt)"
	no_escapes out.txt
	no_escapes err.txt
	recorded 60 "$ct" list "$hdir/ct_hostile"
	[ "$rc" = 0 ] || fail "list exited $rc: $(cat -v err.txt)"
	grep -qF "usdt:$shown_hdir/ct_hostile:closure:batch  5 sites" out.txt || fail "list: $(cat -v out.txt)"
	no_escapes out.txt
	no_escapes err.txt
	recorded 60 "$ct" list "$hdir/none"
	[ "$rc" = 2 ] || fail "list of no file exited $rc: $(cat -v err.txt)"
	[ "$(cat err.txt)" = "closuretrace list: cannot read $shown_hdir/none as an ELF file: No such file or directory" ] ||
		fail "list of no file: $(cat -v err.txt)"
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
	# streams (BATCH_SPANS_TOTAL_MAX, 262,144) and those given up counted as lost; no stream
	# shows a frontier, so the decoder holds events up to its room (BATCH_HELD_BYTES, 64 MiB)
	# and no more. The process makes 4 rounds once the recorder is attached (a "go" file), then
	# exits, which ends the recording: 800,000 gaps, past the cap however loaded the machine
	# (with a fixed -d, a process starved by load made too few: lost 0). The trace's reader
	# sleeps 5 s first: the writer falls behind, as under load (CI failed here at 175 MB; held
	# events' rings grown for good took a recorder to 253 MB). The queue behind the ring buffer
	# is held to 16 MiB in memory (its own bound, twice that, is batch_spool's), so what is
	# measured is the decoder: 160 MB is the queue's 32, the decoder's 64, the rest about 30,
	# with room. A 4 MiB ring buffer: the default 64 MiB is written through before attaching
	# (touch_ring) and would count in the peak.
	start_hostile "$bindir/ct_hostile" gaps 200000 16000 4
	CLOSURETRACE_SPOOL_MEM=$((16 << 20)) timeout -s KILL 120 /usr/bin/time -f "maxrss_kb=%M" \
		"$ct" record -v -p "$hpid" -d 100 -b 4M -o - 2>err.txt </dev/null | { sleep 5; cat >t.json; } &
	recording=$!
	for _ in $(seq 1 3000); do
		grep -q '^closuretrace: recording process' err.txt && break
		sleep 0.01
	done
	touch go
	wait "$recording"
	grep -q '"type":"end".*"reason":"exit"' t.json || fail "the recording did not end at the exit: $(tail -1 t.json) $(cat err.txt)"
	rss=$(sed -n 's/^maxrss_kb=//p' err.txt)
	[ -n "$rss" ] && [ "$rss" -lt 163840 ] || fail "the recorder grew to $rss kB (limit 160 MB): $(cat err.txt)"
	lost=$(grep -o '"lost":[0-9]*' t.json | tail -1)
	[ -n "$lost" ] && [ "${lost#*:}" -gt 0 ] || fail "the gaps given up are not counted as lost: $lost"
	grep -q 'in sequence gaps given up' err.txt || fail "record -v does not say where: $(cat err.txt)"
	echo "ok: seqs with gaps, the trace's reader behind, the recorder's peak $rss kB, $lost"
	;;
hostile_batches)
	# Issue 38 item 4: batches of random bytes (random ops, times, closures, sequence numbers),
	# batches of 256 records flat out, and parents that make cycles. Each recording ends at its
	# -d with a trailer, the recorder under 300 MB (a 4 MiB ring buffer: the default 64 MiB,
	# mapped twice, would count 128 MB of it), and report reads the trace. The random sequence
	# numbers' gaps are the process's word: believed up to its CPU time, the rest refused and
	# said (it once made "lost 4727872689558").
	for mode in bogus many cycle; do
		start_hostile "$bindir/ct_hostile" "$mode"
		recorded 110 /usr/bin/time -f "maxrss_kb=%M" "$ct" record -v -p "$hpid" -d 2 -b 4M -o "$mode.json"
		[ "$rc" = 0 ] || fail "$mode: record exited $rc: $(cat err.txt)"
		kill "$hpid"
		rss=$(sed -n 's/^maxrss_kb=//p' err.txt)
		[ -n "$rss" ] && [ "$rss" -lt 307200 ] || fail "$mode: the recorder grew to $rss kB (limit 300 MB): $(cat err.txt)"
		tail -1 "$mode.json" | grep -q '^{"type":"end",' || fail "$mode: no trailer: $(tail -c 300 "$mode.json")"
		timeout 60 "$ct" report -i "$mode.json" >report.txt 2>&1 || fail "$mode: report exited $?: $(head -5 report.txt)"
		grep -q "^# closuretrace report of $mode.json" report.txt || fail "$mode: report: $(head -5 report.txt)"
		echo "ok: $mode: the recorder's peak $rss kB, $(tail -1 "$mode.json" | grep -o '"lost":[0-9]*'), report read it"
		case $mode in
		bogus)
			grep -q "^closuretrace: warning: refused the traced process's word for [0-9]* more records it never handed over" err.txt ||
				fail "bogus: the gaps' size believed: $(cat err.txt)"
			lost=$(tail -1 bogus.json | sed -n 's/.*"lost":\([0-9]*\).*/\1/p')
			[ "$lost" -lt 1000000000 ] || fail "bogus: lost $lost, more than a second of CPU could make"
			;;
		cycle)
			grep -qE '^closures: [0-9]+ ' report.txt || fail "cycle: $(head -12 report.txt)"
			;;
		esac
	done
	;;
name_lie)
	# A thread name record names its own thread (the library writes its own id): one naming
	# thread 1 (init) or an id no thread has is the process's lie, left out; the trace stays
	# one report reads (a tid past 2^31 once made it refuse the trace).
	start_hostile "$bindir/ct_hostile" namelie
	recorded 30 "$ct" record -p "$hpid" -d 1 -o t.json
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	grep -q '"type":"thread","tid":1,' t.json && fail "thread 1 named: $(grep '"type":"thread"' t.json | head -3)"
	grep -q '"type":"thread","tid":3000000000' t.json && fail "a tid past 2^31 named"
	grep -qE "^\{\"type\":\"thread\",\"tid\":$hpid,(\"pid\":$hpid,)?\"name\":\"name0\"\}$" t.json ||
		fail "its own name not kept: $(grep '"type":"thread"' t.json | head -3)"
	"$ct" report -i t.json >r.txt 2>&1 || fail "report: $(cat r.txt)"
	echo "ok: names of thread 1 and of 3000000000 left out, its own kept, report reads it"
	;;
tid_lie)
	# Issue 38 item 5: a batch handed over by one thread that names another (at process exit
	# one thread hands over the others' buffers) is believed only for a thread of the same
	# process. A nobody process names thread 1 (init): its records are refused, said, counted
	# as lost, and thread 1 is nowhere in the trace.
	start_hostile "$bindir/ct_hostile" tidlie 1
	recorded 30 "$ct" record -p "$hpid" -d 2 -o t.json
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	grep -qx "closuretrace: warning: records refused: a batch named thread 1, which is not a thread of process $hpid" err.txt ||
		fail "no word of the refused records: $(cat err.txt)"
	grep -q '"tid":1[,}]' t.json && fail "thread 1 is in the trace: $(grep '"tid":1[,}]' t.json | head -3)"
	lost=$(tail -1 t.json | grep -o '"lost":[0-9]*')
	[ -n "$lost" ] && [ "${lost#*:}" -gt 0 ] || fail "the refused records are not counted as lost: $(tail -1 t.json)"
	echo "ok: records naming thread 1 refused, counted ($lost), thread 1 not in the trace"
	;;
claims)
	# Issue 38 item 5: a batch's count of records its library dropped is the process's own
	# word. Small claims (7 a batch) are believed and said to be the process's own (the
	# trailer's lost_claimed, report's note); a claim of 4,294,967,040 a batch from a process
	# that sleeps is more than its CPU time could make: refused, said, never counted as lost.
	start_hostile "$bindir/ct_hostile" claims 7
	recorded 30 "$ct" record -v -p "$hpid" -d 2 -o small.json
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	end=$(tail -1 small.json)
	python3 -c 'import json, sys
e = json.loads(sys.argv[1])
assert e["type"] == "end" and e["lost_claimed"] > 0 and e["lost_claimed"] % 7 == 0, e
assert e["lost"] >= e["lost_claimed"] and "claims_refused" not in e, e' "$end" ||
		fail "small claims: $end"
	grep -q "dropped by the library (the process's own count" err.txt || fail "-v: $(cat err.txt)"
	"$ct" report -i small.json >report.txt 2>&1 || fail "report: $(cat report.txt)"
	grep -qx "# note: [0-9]* of the lost events are the traced process's own count of records its library dropped (not verified)" report.txt ||
		fail "report: $(cat report.txt)"
	echo "ok: small claims believed, said to be the process's: $end"
	kill "$hpid"
	start_hostile "$bindir/ct_hostile" claims 4294967040
	recorded 30 "$ct" record -p "$hpid" -d 2 -o big.json
	[ "$rc" = 0 ] || fail "record exited $rc: $(cat err.txt)"
	end=$(tail -1 big.json)
	python3 -c 'import json, sys
e = json.loads(sys.argv[1])
assert e["type"] == "end" and "lost_claimed" not in e and e["lost"] == 0, e
assert e["claims_refused"] > 0 and e["claims_refused"] % 4294967040 == 0, e' "$end" ||
		fail "impossible claims: $end"
	grep -q "^closuretrace: warning: refused the traced process's word for [0-9]* more records it never handed over (dropped by its library, or skipped in its sequence numbers) than its CPU time could have made (not counted as lost)$" err.txt ||
		fail "no word of the refused claim: $(cat err.txt)"
	"$ct" report -i big.json --json >report.json 2>&1 || fail "report --json: $(cat report.json)"
	grep -q "claimed [0-9]* more records it never handed over than its CPU time could have made: refused" report.json ||
		fail "report --json: $(head -c 2000 report.json)"
	echo "ok: impossible claims refused and said: $end"
	;;
planted_links)
	# Issue 38 item 1: root writes every output into a world-writable sticky folder where nobody
	# planted a link (or a file) of the same name pointing at a root-owned 0600 file. Each is
	# refused with its reason, whatever fs.protected_symlinks says: the file, its mode and its
	# folder unchanged, nothing written where the link points, no temporary file left.
	mkdir -m 1777 sticky
	mkdir -m 700 secret
	echo "root's own" >secret/file
	chmod 600 secret/file
	"$ct" record -o trace.json -- "$workload" counts 2 >/dev/null 2>err.txt || fail "record: $(cat err.txt)"
	link_says="a link owned by another user in a world-writable sticky folder (not followed)"
	file_says="a file owned by another user in a world-writable sticky folder (not replaced)"
	refused() { # WHAT SAYS NAME CMD...: CMD exits non-zero saying SAYS about sticky/NAME
		local what=$1 says=$2 name=$3
		shift 3
		"$@" >out.txt 2>err.txt </dev/null
		local rc=$?
		[ "$rc" != 0 ] || fail "$what: exit 0 through nobody's $name: $(cat err.txt)"
		grep -q "^closuretrace.*: cannot write .*sticky/$name: $says\$" err.txt ||
			fail "$what (exit $rc) does not say why: $(cat err.txt)"
		[ "$(cat secret/file)" = "root's own" ] && [ "$(stat -c %a:%U secret/file)" = 600:root ] ||
			fail "$what changed the file behind the link: $(stat -c %a:%U secret/file)"
		[ -z "$(ls secret | grep -vx file)" ] || fail "$what wrote beside the file: $(ls -a secret)"
		[ -z "$(ls -A sticky | grep '^\.')" ] || fail "$what left files: $(ls -A sticky)"
		echo "ok: $what refused (exit $rc): $(head -1 err.txt)"
	}
	for out in t.json k.json s.sarif g.supp p.svg l.json; do
		"${as_nobody[@]}" ln -s "$tmp/secret/file" "sticky/$out" || fail "nobody cannot plant $out"
	done
	refused "record -o" "$link_says" t.json "$ct" record -o sticky/t.json -- "$workload" counts 1
	refused "check --keep-trace" "$link_says" k.json "$ct" check --keep-trace sticky/k.json -- "$workload" counts 1
	refused "check --sarif" "$link_says" s.sarif "$ct" check --sarif sticky/s.sarif -- "$workload" counts 1
	refused "check --gen-suppressions" "$link_says" g.supp \
		"$ct" check --gen-suppressions sticky/g.supp -- "$workload" counts 1
	refused "graph -o" "$link_says" p.svg "$ct" graph -i trace.json -o sticky/p.svg
	refused "timeline -o" "$link_says" l.json "$ct" timeline -i trace.json -o sticky/l.json
	# A file of nobody's there: replaced, it would be root's file where nobody expects theirs
	# (and a hard link to root's file could be planted as one): refused too.
	rm -f sticky/p.svg
	"${as_nobody[@]}" sh -c 'echo nobody > sticky/p.svg' || fail "nobody cannot write sticky/p.svg"
	refused "graph -o over nobody's file" "$file_says" p.svg "$ct" graph -i trace.json -o sticky/p.svg
	[ "$(cat sticky/p.svg)" = nobody ] || fail "nobody's file was changed"
	# Our own link there is ours to follow: the file it names is replaced, the link stays.
	rm -f sticky/p.svg
	ln -s "$tmp/mine.svg" sticky/p.svg
	echo old >mine.svg
	"$ct" graph -i trace.json -o sticky/p.svg 2>err.txt || fail "graph -o through root's own link: $(cat err.txt)"
	[ -L sticky/p.svg ] && grep -q '<svg' mine.svg || fail "root's own link was not followed"
	echo "ok: root's own link in the sticky folder followed, the file it names replaced"
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
