#!/usr/bin/env bash
# The command-line front (cli/args.c), the same for every command: an unknown option, a missing
# argument, an extra argument and a bad value each get one line of one shape and exit 2; --help is
# 0 and lists the options of the command's table; durations take units; -p takes PID[,PID...].
#   options_test.sh CLOSURETRACE FIXTURES
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ct=$1 fixtures=$2
scratch
see() { echo "; see 'closuretrace $1 --help'"; }
for c in record list graph report explain check top ps timeline export fleet; do
	expect 2 "closuretrace $c: unknown option: --bogus$(see "$c")" "$ct" "$c" --bogus
	expect 2 "closuretrace $c: unknown option: -Z$(see "$c")" "$ct" "$c" -Z
	expect 0 "" "$ct" "$c" --help
	grep -qx '  -h, --help             this help' out.txt || fail "$c --help: $(cat out.txt)"
	head -1 out.txt | grep -q "^usage: closuretrace $c " || fail "$c --help: $(head -1 out.txt)"
	[ -s out.txt ] && [ "$(tail -c 1 out.txt | od -An -c | tr -d ' ')" = '\n' ] ||
		fail "$c --help does not end its last line"
done
# A missing argument, for a short and a long option.
expect 2 "closuretrace record: an option is missing its argument: -o$(see record)" "$ct" record -o
expect 2 "closuretrace graph: an option is missing its argument: --root$(see graph)" "$ct" graph --root
# Arguments left after the options.
expect 2 "closuretrace report: unexpected argument: x.json$(see report)" "$ct" report x.json
expect 2 "closuretrace top: unexpected argument: 5$(see top)" "$ct" top -p 1 5
# Durations: units or bare seconds; anything else named.
for d in 1x 1.5parsecs -1s '' s; do
	expect 2 "closuretrace check: --timeout needs a positive duration (1.5, 1s, 500ms): $d$(see check)" \
		"$ct" check --timeout "$d" -- true
done
expect 2 "closuretrace top: --delay needs a duration from 0.1s to 3600s (1.5, 1s, 500ms): 2h$(see top)" \
	"$ct" top -d 2h -p 1
# A list of pids is read (perf's -p PID,PID) and refused by the commands that read one process.
for c in top ps; do
	expect 2 "closuretrace $c: -p takes one process id here, not a list nor -p twice$(see "$c")" "$ct" "$c" -p 1,2
	expect 2 "closuretrace $c: not a process id: 1,,2$(see "$c")" "$ct" "$c" -p 1,,2
	expect 2 "closuretrace $c: not a process id: 1,$(see "$c")" "$ct" "$c" -p 1,
	expect 2 "closuretrace $c: -p takes one process id here, not a list nor -p twice$(see "$c")" "$ct" "$c" -p 1 -p 2
done
# timeline's times take the same units (bare: nanoseconds): 1.5 us to 2 us of fold.json is 12 of
# its 45 events.
"$ct" timeline -i "$fixtures/fold.json" --from 1.5us --to 2us -o a.json 2>a.err || fail "timeline: $(cat a.err)"
"$ct" timeline -i "$fixtures/fold.json" --from 1500 --to 2000 -o b.json 2>b.err || fail "timeline: $(cat b.err)"
grep -q "wrote 12 events" a.err || fail "--from 1.5us --to 2us: $(cat a.err)"
cmp -s a.json b.json || fail "--from 1.5us is not --from 1500"
expect 2 "closuretrace timeline: --from is after --to$(see timeline)" "$ct" timeline --from 2s --to 1s
# Options that cannot go together are refused (exit 2), never ignored: beside --create-schema
# without -i, export has no trace for what only a trace takes; --cluster only makes tables; a
# label without --export; an --export URL that is not one, before the command runs.
for o in "--label a=b" "--host h" "--run-id r" "--batch-bytes 10"; do
	# shellcheck disable=SC2086 # the option and its value are two words
	expect 2 "closuretrace export: ${o%% *} is for a trace to export: beside --create-schema, give -i TRACE$(see export)" \
		"$ct" export --create-schema --to http://127.0.0.1:1/db $o
done
expect 2 "closuretrace export: --cluster goes with --create-schema: two$(see export)" \
	"$ct" export -i "$fixtures/fold.json" --to http://127.0.0.1:1/db --cluster two
for c in check record; do
	expect 2 "closuretrace $c: --label goes with --export URL$(see $c)" "$ct" $c --label a=b -- true
	expect 2 "closuretrace $c: want a ClickHouse URL as http://HOST:PORT/DATABASE, not 'db:8123'$(see $c)" \
		"$ct" $c --export db:8123 -- true
done
echo "ok: one message shape and exit 2 for every command's bad usage; units and pid lists read"
exit $status
