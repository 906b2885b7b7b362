#!/usr/bin/env bash
# closuretrace export and fleet against real clickhouse-server instances (Debian's), each started
# by this test in its scratch folder on 127.0.0.1 and killed at the end whatever happens.
#   fleet_test.sh CASE CLOSURETRACE SOURCE_DIR BLOCKIO KERNEL_STYLE
# single: one server for every case: three recorded traces of two programs from two labelled
#   hosts, counts equal to report --json; the fleet queries' rows; re-export, damaged trace,
#   server refused, slow, killed mid-export; check --export and record --export.
# cluster: two servers as two shards behind Distributed tables, configured by the remote_servers
#   block of docs/fleet.md, give the same answers as one.
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
case_name=$1 ct=$2 src=$3 blockio=$4 kstyle=$5
here=$src/tests/suites/fleet
scratch
CH_DIR=$tmp/ch
. "$here/clickhouse.sh"
on_exit() { ch_stop_all; }

# export_ok NAME TRACE URL ARGS...: export from the source folder (sites read examples/blockio.c:N),
# sets the variable NAME to the trace id it printed.
export_ok() {
	local var=$1 trace=$2 url=$3 id
	shift 3
	(cd "$src" && "$ct" export -i "$trace" --to "$url" "$@") >export.out 2>export.err ||
		fail "export $trace to $url: exit $?: $(cat export.err)"
	id=$(sed -n 's/^closuretrace export: trace \([0-9a-f]*-[0-9]*\): .*/\1/p' export.out)
	[ -n "$id" ] || fail "export $trace printed no trace id: $(cat export.out)"
	printf -v "$var" '%s' "$id"
}

# count PORT SQL: one number from the server.
count() { ch_query "$1" "$2" | tr -d '\n'; }

# The synthetic runs of one program in three builds (a clean one, then two that leak at
# src/bio.c:30), at three times one hour apart: the fixtures with their exe put here.
build_runs() {
	local b
	for b in 1 2 3; do
		printf 'int main(void) { return %d; }\n' "$b" >app$b.c
		cc -o app$b app$b.c -Wl,--build-id=0x$(printf "$b%.0s" {1..40}) || fail "cc app$b"
	done
	sed "s|\"exe\":\"/usr/bin/hops\"|\"exe\":\"$tmp/app\"|" "$src/tests/fixtures/hops.json" >run1.json
	sed "s|\"exe\":\"/usr/bin/blockio\"|\"exe\":\"$tmp/app\"|" \
		"$src/tests/fixtures/leak_under_children.json" >run2.json
	sed "1s|\"pid\":4242|\"pid\":4243|; s|\"exe\":\"/usr/bin/blockio\"|\"exe\":\"$tmp/app\"|" \
		"$src/tests/fixtures/leak_under_children.json" >run3.json
	touch -d '2026-01-01 10:00:00' run1.json
	touch -d '2026-01-01 11:00:00' run2.json
	touch -d '2026-01-01 12:00:00' run3.json
}

# export_builds URL: the three runs, each with its build in place at $tmp/app (as a deployment
# replaces the binary), from host gamma.
export_builds() {
	local b
	for b in 1 2 3; do
		cp app$b app
		export_ok build_id_$b "$tmp/run$b.json" "$1" --host gamma --label build=$b
	done
	rm -f app
}

case_single() {
	skip_without_bpf
	ch_start one || fail "clickhouse-server did not start"
	local U=http://127.0.0.1:$CH_PORT_one/fleet P=$CH_PORT_one
	expect 0 "" "$ct" export --create-schema --to "$U"
	[ "$(cat out.txt)" = "closuretrace export: the tables of closuretrace are in $U" ] ||
		fail "create-schema said: $(cat out.txt)"
	# Twice: IF NOT EXISTS.
	expect 0 "" "$ct" export --create-schema --to "$U"

	# Three recorded traces of two programs, from two labelled hosts.
	"$ct" record -o a.json -- "$blockio" --leak >/dev/null 2>rec.err || fail "record a: $(cat rec.err)"
	"$ct" record -o b.json -- "$blockio" --leak --requests 60 >/dev/null 2>rec.err ||
		fail "record b: $(cat rec.err)"
	"$ct" record -o c.json -- "$kstyle" >/dev/null 2>rec.err || fail "record c: $(cat rec.err)"
	for t in a b c; do "$ct" report --json -i $t.json >$t.report.json || fail "report $t"; done
	export_ok id_a "$tmp/a.json" "$U" --host alpha --label ci=nightly --label arch=x86_64
	export_ok id_b "$tmp/b.json" "$U" --host beta --label ci=pr
	export_ok id_c "$tmp/c.json" "$U" --host beta --label ci=pr --run-id pr-42
	for t in a b c; do
		id=id_$t
		python3 "$here/compare.py" "$U" "${!id}" $t.report.json || fail "trace $t differs"
	done
	[ "$(count $P "SELECT count() FROM fleet.traces FINAL")" = 3 ] || fail "not 3 traces"
	[ "$(ch_query $P "SELECT host, run_id, label_keys, label_values FROM fleet.traces FINAL WHERE trace_id = '$id_c' FORMAT TSV")" = \
		"beta	pr-42	['ci']	['pr']" ] || fail "trace c's host, run id or labels"
	# The build ids the recorder read: the program's, and its module's the same.
	local want_id
	want_id=$(readelf -n "$blockio" | sed -n 's/.*Build ID: \([0-9a-f]*\)/\1/p')
	[ "$(ch_query $P "SELECT program, build_id, module_build_ids[indexOf(modules, program)] FROM fleet.traces FINAL WHERE trace_id = '$id_a' FORMAT TSV")" = \
		"$blockio	$want_id	$want_id" ] || fail "trace a's program or build id (want $want_id)"

	# The same trace again: nothing counted twice.
	export_ok again "$tmp/a.json" "$U" --host alpha --label ci=nightly --label arch=x86_64
	[ "$again" = "$id_a" ] || fail "the same trace got another id: $again, $id_a"
	python3 "$here/compare.py" "$U" "$id_a" a.report.json || fail "a exported twice differs"

	# The fleet queries. Synthetic builds and a stuck run first.
	build_runs
	export_builds "$U"
	export_ok id_stuck "$src/tests/fixtures/stuck_sync.json" "$U" --host delta
	"$ct" fleet top-leaks --from "$U" --json >top.json || fail "fleet top-leaks"
	python3 - "$id_a" <<'PY' || fail "top-leaks: $(cat top.json)"
import json, sys
rows = [json.loads(l) for l in open("top.json")]
by = {r["site"]: r for r in rows}
# blockio --leak leaked one bio per run, at line 217, in two runs on two hosts.
r = by["examples/blockio.c:217"]
assert (r["leaked"], r["runs"], r["hosts"], r["function"]) == (2, 2, 2, "bio_take_leaked_reference"), r
# The synthetic runs: builds 2 and 3 leak at src/bio.c:30, on host gamma.
r = by["src/bio.c:30"]
assert (r["leaked"], r["runs"], r["hosts"]) == (2, 2, 1), r
assert rows[0]["leaked"] >= rows[-1]["leaked"]
PY
	"$ct" fleet first-leak-build --from "$U" --json >first.json || fail "fleet first-leak-build"
	grep -q "\"program\":\"${tmp//\//\\\\/}\\\\/app\",\"site\":\"src\\\\/bio.c:30\",\"first_build\":\"2222222222222222222222222222222222222222\",\"first_seen\":\"2026-01-01 10:59:59\",\"builds\":2" first.json ||
		fail "first-leak-build: $(cat first.json)"
	"$ct" fleet lifetimes --from "$U" --json >life.json || fail "fleet lifetimes"
	python3 - "$blockio" a.report.json b.report.json <<'PY' || fail "lifetimes: $(head -5 life.json)"
import json, sys
rows = [json.loads(l) for l in open("life.json")]
prog = sys.argv[1]
want = {}
for rep in sys.argv[2:]:
    for k in json.load(open(rep))["kinds"]:
        if k["finished"]:
            want[k["kind"]] = want.get(k["kind"], 0) + k["finished"]
got = {r["kind"]: r for r in rows if r["program"] == prog}
assert set(got) == set(want), (sorted(got), sorted(want))
for kind, n in want.items():
    r = got[kind]
    assert r["closures"] == n, (kind, r, n)
    assert 0 < r["p50_ns"] <= r["p99_ns"], r
PY
	"$ct" fleet stuck-now --from "$U" --json >stuck.json || fail "fleet stuck-now"
	[ "$(python3 -c 'import json; print(" ".join("%s/%s/%s/%d" % (r["host"], r["closure"], r["verdict"], r["stuck"]) for r in map(json.loads, open("stuck.json"))))')" = \
		"delta/500:0x7ffd00000100#1/stuck/1 delta/500:0x7f0000007000#1/stuck/1" ] ||
		fail "stuck-now: $(cat stuck.json)"
	"$ct" fleet top-leaks --from "$U" >table.txt || fail "fleet top-leaks as a table"
	[ "$(head -1 table.txt)" = "site                    function                   leaked  runs  hosts" ] ||
		fail "top-leaks table header: $(head -3 table.txt)"
	grep -Eq '^examples/blockio.c:217  bio_take_leaked_reference       2     2      2$' table.txt ||
		fail "top-leaks table: $(cat table.txt)"
	expect 2 "closuretrace fleet: no query 'nope'; the queries are:
  first-leak-build   The first build in which each call site leaked.
  lifetimes          p50 and p99 lifetime of each kind of closure, per build.
  stuck-now          The closures stuck longest now, in the latest run of each host.
  top-leaks          The call sites blamed for the most leaked closures, across runs and hosts." \
		"$ct" fleet nope --from "$U"

	# A damaged trace is refused before anything is sent.
	local before after
	before=$(count $P "SELECT count() FROM fleet.events")
	head -100 a.json >bad.json
	echo '{"type":"event","ts":1,"tid":1,"ev":"get","cl":"0x1","remaining":' >>bad.json
	tail -n +101 a.json >>bad.json
	expect 2 "bad.json:101: error: invalid JSON: unexpected token near end of file (column 65)
closuretrace export: nothing was sent to $U" "$ct" export -i bad.json --to "$U"
	after=$(count $P "SELECT count() FROM fleet.events")
	[ "$before" = "$after" ] || fail "a damaged trace sent rows: $before then $after events"

	# A server that refuses, one that never answers.
	local dead
	dead=$(ch_free_port)
	# (a user and password in the URL go to the server, never into a message)
	"$ct" export -i a.json --to "http://someone:s3cret@127.0.0.1:$dead/fleet" >out.txt 2>err.txt
	[ $? = 3 ] || fail "export to a closed port: exit not 3: $(cat err.txt)"
	grep -q s3cret err.txt && fail "the password is in the message: $(cat err.txt)"
	grep -q "^closuretrace export: http://127.0.0.1:$dead/fleet: .*[Cc]onnect" err.txt ||
		fail "refused: $(cat err.txt)"
	grep -qx "closuretrace export: trace $id_a (a.json) is not complete there: rows stored before the failure: events 0, closures 0, diagnostics 0, traces 0; the trace is left as it was: export it again (a row sent twice counts once)" err.txt ||
		fail "refused, second line: $(cat err.txt)"
	python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)' >slow.port &
	pids+=($!)
	for _ in $(seq 100); do [ -s slow.port ] && break; sleep 0.05; done
	"$ct" export -i a.json --to "http://127.0.0.1:$(cat slow.port)/fleet" --timeout 1 >out.txt 2>err.txt
	[ $? = 3 ] || fail "export to a server that never answers: exit not 3: $(cat err.txt)"
	grep -q "^closuretrace export: http://127.0.0.1:$(cat slow.port)/fleet: .*[Tt]imeout\|timed out" err.txt ||
		fail "slow: $(cat err.txt)"
	grep -q "rows stored before the failure: events 0, closures 0" err.txt || fail "slow: $(cat err.txt)"

	# check --export: the verdict and exit status unchanged; the run in ClickHouse. Its temporary
	# trace in $TMPDIR, here the scratch folder.
	expect_check() { # STATUS URL ARGS...
		local want=$1 url=$2
		shift 2
		TMPDIR=$tmp/tmpdir "$ct" check --export "$url" --label ci=check "$@" >out.txt 2>err.txt
		local got=$?
		[ "$got" = "$want" ] || fail "check --export $url $*: exit $got, not $want: $(cat err.txt)"
	}
	mkdir tmpdir
	expect_check 1 "$U" -- "$blockio" --leak
	grep -q "blockio.c:217: error: closure leaked" err.txt || fail "check --export: $(cat err.txt)"
	grep -q "^closuretrace: exported trace [0-9a-f]*-[0-9]* to $U: [0-9]* events, [0-9]* closures, 1 diagnostics$" err.txt ||
		fail "check --export said: $(cat err.txt)"
	[ "$(count $P "SELECT count() FROM fleet.traces FINAL WHERE has(label_values, 'check')")" = 1 ] ||
		fail "check --export: no traces row"
	[ -z "$(ls -A tmpdir)" ] || fail "check --export left files in \$TMPDIR: $(ls -A tmpdir)"
	expect_check 0 "http://127.0.0.1:$dead/fleet" -- "$blockio" --requests 10
	grep -q "^closuretrace: warning: the export to http://127.0.0.1:$dead/fleet failed; the verdict above stands$" err.txt ||
		fail "check --export to a dead server: $(cat err.txt)"
	rm -f tmpdir/*
	# No run is lost (issue 38 item 7): the trace of a failed export is kept where check says,
	# with the command that exports it again; run later, that command stores the rows a direct
	# export of the same file stores, and run twice, stores nothing twice.
	expect_check 1 "http://127.0.0.1:$dead/fleet" --label "who=a b's" -- "$blockio" --leak
	grep -q "blockio.c:217: error: closure leaked" err.txt || fail "check --export, dead: $(cat err.txt)"
	local kept again_cmd kept_id
	kept=$(sed -n 's/^closuretrace: the trace is kept in \(.*\); this exports it again (rows already stored count once):$/\1/p' err.txt)
	[ "$kept" = "$(echo "$tmp"/tmpdir/closuretrace-check-*.json)" ] && [ -s "$kept" ] ||
		fail "check --export, dead: the trace is not where it says ('$kept'): $(cat err.txt); $(ls -A tmpdir)"
	again_cmd=$(grep -A1 '^closuretrace: the trace is kept in ' err.txt | tail -1)
	[ "$again_cmd" = "  closuretrace export -i $kept --to http://127.0.0.1:$dead/fleet --label ci=check --label 'who=a b'\\''s'" ] ||
		fail "check --export, dead: the command to export again: '$again_cmd'"
	kept_id=$(sed -n 's/^closuretrace: warning: trace \([0-9a-f]*-[0-9]*\) (.*) is not complete there: .*/\1/p' err.txt)
	[ -n "$kept_id" ] || fail "check --export, dead: no trace id said: $(cat err.txt)"
	"$ct" report -i "$kept" >kept.report 2>kept.err || fail "report -i the kept trace: $(cat kept.err)"
	grep -q "blockio.c:217" kept.report || fail "the kept trace's report: $(cat kept.report)"
	"$ct" report --json -i "$kept" >kept.report.json || fail "report --json -i the kept trace"
	# The command as printed, run twice against the server come back (here: another port).
	for _ in 1 2; do
		(eval "${again_cmd/#  closuretrace/\"\$ct\"} --to $U") >again.out 2>again.err ||
			fail "the printed export: exit $?: $(cat again.err)"
		grep -q "^closuretrace export: trace $kept_id: " again.out || fail "printed export: $(cat again.out)"
	done
	python3 "$here/compare.py" "$U" "$kept_id" kept.report.json || fail "the kept trace exported differs"
	# A direct export of the file, into a database of its own made by the same command
	# (--create-schema with -i does both: issue 39 item 6).
	local D=http://127.0.0.1:$P/direct
	"$ct" export -i "$kept" --to "$D" --create-schema --label ci=check --label "who=a b's" >both.out 2>both.err ||
		fail "export -i --create-schema: exit $?: $(cat both.err)"
	[ "$(head -1 both.out)" = "closuretrace export: the tables of closuretrace are in $D" ] &&
		grep -q "^closuretrace export: trace $kept_id: [0-9]* events, .* bytes sent to $D$" both.out ||
		fail "export -i --create-schema said: $(cat both.out)"
	local cols order
	for t in events closures diagnostics traces; do
		# Every column but the time of the export (the traces row's version).
		cols=$(ch_query $P "SELECT arrayStringConcat(groupArray(name), ', ') FROM system.columns WHERE database = 'fleet' AND table = '$t' AND name != 'exported_at'")
		order=seq
		[ $t != traces ] || order=trace_id
		ch_query $P "SELECT $cols FROM fleet.$t FINAL WHERE trace_id = '$kept_id' ORDER BY $order FORMAT TSV" >a.$t ||
			fail "query fleet.$t"
		ch_query $P "SELECT $cols FROM direct.$t FINAL ORDER BY $order FORMAT TSV" >b.$t || fail "query direct.$t"
		[ -s a.$t ] || fail "fleet.$t: no rows of the kept trace"
		cmp -s a.$t b.$t || fail "$t: the kept trace exported later and directly differ: $(diff a.$t b.$t | head -5)"
	done
	[ "$(count $P "SELECT count() FROM fleet.traces FINAL WHERE trace_id = '$kept_id'")" = 1 ] ||
		fail "the kept trace's traces row is not one"
	rm -f tmpdir/*
	# --keep-trace: the trace is its file, and the command names it.
	expect_check 1 "http://127.0.0.1:$dead/fleet" --keep-trace kept.json -- "$blockio" --leak
	grep -qx "  closuretrace export -i kept.json --to http://127.0.0.1:$dead/fleet --label ci=check" err.txt ||
		fail "check --keep-trace --export, dead: $(cat err.txt)"
	[ -z "$(ls -A tmpdir)" ] || fail "check --keep-trace --export left a temporary trace: $(ls -A tmpdir)"
	"$ct" report -i kept.json >/dev/null 2>kept.err || fail "report -i kept.json: $(cat kept.err)"
	"$ct" record -o r.json --export "$U" --label ci=record -- "$blockio" --requests 10 >/dev/null 2>err.txt ||
		fail "record --export: $(cat err.txt)"
	grep -q "^closuretrace: exported trace " err.txt || fail "record --export said: $(cat err.txt)"
	[ "$(count $P "SELECT events FROM fleet.traces FINAL WHERE has(label_values, 'record')")" = \
		"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["events"])' < <("$ct" report --json -i r.json))" ] ||
		fail "record --export: events differ"

	# The server killed in the middle of an export, restarted, the export run again: every row
	# once. Small batches, so that the export is still sending when the first rows are stored.
	"$ct" record -o big.json -- "$blockio" --requests 3000 >/dev/null 2>rec.err || fail "record big: $(cat rec.err)"
	"$ct" report --json -i big.json >big.report.json || fail "report big"
	cp big.json big.copy
	"$ct" export -i big.json --to "$U" --host alpha --batch-bytes 65536 >kill.out 2>kill.err &
	local exporter=$! sent=0
	for _ in $(seq 600); do
		sent=$(count $P "SELECT count() FROM fleet.events WHERE trace_id NOT IN (SELECT trace_id FROM fleet.traces)" 2>/dev/null)
		[ "${sent:-0}" -gt 0 ] 2>/dev/null && break
		sleep 0.02
	done
	ch_kill one
	wait $exporter
	local rc=$?
	[ "$rc" = 3 ] || fail "export during a kill: exit $rc, not 3: $(cat kill.err kill.out)"
	grep -q "^closuretrace export: $U: " kill.err || fail "kill: $(cat kill.err)"
	grep -q "is not complete there: rows stored before the failure: events [1-9]" kill.err ||
		fail "kill, rows said: $(cat kill.err)"
	cmp -s big.json big.copy || fail "the export changed its trace"
	ch_restart one || fail "clickhouse-server did not restart"
	export_ok id_big "$tmp/big.json" "$U" --host alpha --batch-bytes 65536
	python3 "$here/compare.py" "$U" "$id_big" big.report.json || fail "after the kill and re-run"
	# Merged for good, every row once without FINAL too.
	for t in events closures diagnostics traces; do
		ch_query $P "OPTIMIZE TABLE fleet.$t FINAL" >/dev/null || fail "optimize $t"
	done
	[ "$(count $P "SELECT count() FROM fleet.events WHERE trace_id = '$id_big'")" = \
		"$(python3 -c 'import json; print(json.load(open("big.report.json"))["totals"]["events"])')" ] ||
		fail "events stored twice after the merge"
}

case_cluster() {
	ch_ports s1
	ch_ports s2
	# The remote_servers block of docs/fleet.md, its shard1 and shard2 put at our two servers.
	local shards
	shards=$(python3 "$here/remote_servers.py" "$src/docs/fleet.md" "127.0.0.1:$CH_TCP_s1" "127.0.0.1:$CH_TCP_s2") ||
		fail "docs/fleet.md's remote_servers: $shards"
	ch_start one || fail "clickhouse-server one did not start"
	ch_start s1 "$shards" || fail "shard 1 did not start"
	ch_start s2 "$shards" || fail "shard 2 did not start"
	local one=http://127.0.0.1:$CH_PORT_one/fleet s1=http://127.0.0.1:$CH_PORT_s1/fleet
	local s2=http://127.0.0.1:$CH_PORT_s2/fleet q t
	expect 0 "" "$ct" export --create-schema --to "$one"
	expect 0 "" "$ct" export --create-schema --to "$s1" --cluster fleet
	[ "$(cat out.txt)" = "closuretrace export: the tables of closuretrace are in $s1, over cluster fleet" ] ||
		fail "create-schema --cluster said: $(cat out.txt)"
	expect 0 "" "$ct" export --create-schema --to "$s2" --cluster fleet
	build_runs
	export_builds "$one"
	export_builds "$s1"
	# Traces of several programs and hosts, into the cluster through either shard.
	local n=0
	# Each at its own time, so that the latest run of a host is one run.
	for t in leak_under_children two_processes kernel_patterns fold lives sync_timeout hops stuck_sync; do
		n=$((n + 1))
		cp "$src/tests/fixtures/$t.json" $t.json
		touch -d "2026-02-01 10:0$n:00" $t.json
		export_ok id "$tmp/$t.json" "$one" --host "host$((n % 3))"
		export_ok id "$tmp/$t.json" "$([ $((n % 2)) = 0 ] && echo "$s1" || echo "$s2")" \
			--host "host$((n % 3))"
	done
	# Twice into the cluster: still once.
	export_ok id "$tmp/fold.json" "$s2" --host host1
	for q in top-leaks first-leak-build lifetimes stuck-now; do
		"$ct" fleet $q --from "$one" --json >$q.one || fail "fleet $q on one server"
		"$ct" fleet $q --from "$s1" --json >$q.s1 || fail "fleet $q through shard 1"
		"$ct" fleet $q --from "$s2" --json >$q.s2 || fail "fleet $q through shard 2"
		[ -s $q.one ] || fail "fleet $q: no rows"
		cmp -s $q.one $q.s1 || fail "fleet $q: one server and the cluster differ: $(diff $q.one $q.s1)"
		cmp -s $q.one $q.s2 || fail "fleet $q: through shard 2: $(diff $q.one $q.s2)"
	done
	# Every row is on one shard: the local tables add up to one server's.
	for t in events closures diagnostics traces; do
		local a b c
		a=$(count $CH_PORT_one "SELECT count() FROM fleet.$t FINAL")
		b=$(count $CH_PORT_s1 "SELECT count() FROM fleet.${t}_local FINAL")
		c=$(count $CH_PORT_s2 "SELECT count() FROM fleet.${t}_local FINAL")
		[ "$a" = $((b + c)) ] || fail "$t: one server $a, shards $b + $c"
	done
}

case_$case_name
exit $status
