#!/usr/bin/env bash
# The same hostile name through every JSON output (docs/trace-format.md, "Strings and bytes that
# are not UTF-8"): the trace writer (test_json_string --trace), report --json, timeline, check's
# SARIF log, export's rows and, with a server, fleet --json; json_strings.py checks that each is
# valid JSON and holds the same string for the name.
#   json_strings.sh CASE CLOSURETRACE SOURCE_DIR TEST_JSON_STRING CHECK_JUDGE ROWS_DUMP
# local: every output but fleet (no server). fleet: export to a clickhouse-server started here
#   (tests/suites/fleet/clickhouse.sh) and fleet --json of its answers; skipped (77) without one.
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
case_name=$1 ct=$2 src=$3 writer=$4 judge=$5 rows=$6
scratch

"$writer" --trace trace.json || fail "test_json_string --trace: exit $?"
outputs=(trace trace.json)
case $case_name in
local)
	"$ct" report --json -i trace.json >report.json || fail "report --json: exit $?"
	"$ct" timeline -i trace.json -o timeline.json 2>timeline.err ||
		fail "timeline: exit $?: $(cat timeline.err)"
	# check_judge prints the diagnostics, then the SARIF log from its first '{' line on.
	"$judge" trace.json --sarif >judge.out
	[ $? = 1 ] || fail "check_judge: not exit 1 (a leak)"
	sed -n '/^{/,$p' judge.out >sarif.json
	"$rows" trace.json | cut -f2- >rows.jsonl || fail "fleet_rows_dump: exit $?"
	outputs+=(report report.json timeline timeline.json sarif sarif.json rows rows.jsonl)
	;;
fleet)
	[ -x /usr/sbin/clickhouse-server ] || { echo "SKIP: no clickhouse-server"; exit 77; }
	CH_DIR=$tmp/ch
	. "$src/tests/suites/fleet/clickhouse.sh"
	on_exit() { ch_stop_all; }
	ch_start one || fail "clickhouse-server did not start"
	url=http://127.0.0.1:$CH_PORT_one/fleet
	"$ct" export --create-schema --to "$url" >export.out 2>&1 || fail "$(cat export.out)"
	"$ct" export -i trace.json --to "$url" >export.out 2>&1 || fail "export: $(cat export.out)"
	for q in top-leaks first-leak-build; do
		"$ct" fleet "$q" --from "$url" --json >"$q.jsonl" 2>fleet.err ||
			fail "fleet $q --json: exit $?: $(cat fleet.err)"
		outputs+=("fleet-$q" "$q.jsonl")
	done
	;;
*) fail "no case $case_name" ;;
esac
python3 "$src/tests/trace/json_strings.py" "${outputs[@]}" || fail "json_strings.py"
