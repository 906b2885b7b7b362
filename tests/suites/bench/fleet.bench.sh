#!/usr/bin/env bash
# The export benchmark: closuretrace export of a generated trace into one local clickhouse-server
# (started here, in a scratch folder, on 127.0.0.1): events/s, against closuretrace report on the
# same file in the same run (the reading and judging that export does too); then the bytes
# ClickHouse stores per event (the events table, and all four tables) against the trace's JSON.
#   fleet.bench.sh BUILD_DIR       (FLEET_BENCH_EVENTS overrides the 1,000,000)
set -euo pipefail
build=${1:-build-bench}
here=$(cd "$(dirname "$0")" && pwd)
tool=$build/cli/closuretrace
events=${FLEET_BENCH_EVENTS:-1000000}
tmp=$(mktemp -d)
CH_DIR=$tmp/ch
. "$here/../fleet/clickhouse.sh"
trap 'ch_stop_all; rm -rf "$tmp"' EXIT

"$build/tests/suites/bench/viz_tracegen" --events "$events" >"$tmp/big.json"
n=$("$tool" report --json -i "$tmp/big.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["events"])')
bytes=$(stat -c %s "$tmp/big.json")
ch_start bench >/dev/null
url=http://127.0.0.1:$CH_PORT_bench/fleet
"$tool" export --create-schema --to "$url" >/dev/null

# CPU seconds (user + system) as well as wall time: on a loaded machine the wall time says little.
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$CH_PID_bench/stat"; }
/usr/bin/time -f "%e %U %S %M" -o "$tmp/rtime" "$tool" report -i "$tmp/big.json" >/dev/null
cpu0=$(server_cpu)
/usr/bin/time -f "%e %U %S %M" -o "$tmp/etime" "$tool" export -i "$tmp/big.json" --to "$url" >/dev/null
cpu1=$(server_cpu)
read -r rsec ru rs rkb <"$tmp/rtime"
read -r esec eu es ekb <"$tmp/etime"
for t in events closures diagnostics traces; do
	ch_query "$CH_PORT_bench" "OPTIMIZE TABLE fleet.$t FINAL" >/dev/null
done
stored_events=$(ch_query "$CH_PORT_bench" "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'fleet' AND table = 'events' AND active")
stored_all=$(ch_query "$CH_PORT_bench" "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'fleet' AND active")
awk -v n="$n" -v r="$rsec" -v e="$esec" -v rkb="$rkb" -v ekb="$ekb" -v b="$bytes" \
	-v rc="$(echo "$ru + $rs" | bc)" -v ec="$(echo "$eu + $es" | bc)" -v sc="$(echo "$cpu1 - $cpu0" | bc)" \
	-v se="$stored_events" -v sa="$stored_all" 'BEGIN {
	printf "trace: %d events, %.1f MB of JSON (%.1f bytes/event)\n", n, b / 1e6, b / n
	printf "report (baseline): %.2f s, %.2f s CPU, %.2f M events/s, peak RSS %.1f MB\n", r, rc, n / r / 1e6, rkb / 1024
	printf "export into one local server: %.2f s, %.0f events/s, peak RSS %.1f MB\n", e, n / e, ekb / 1024
	printf "  CPU: closuretrace %.2f s (%.0f events per CPU second), clickhouse-server %.2f s\n", ec, n / ec, sc
	printf "ratio export / report: %.2fx the time, %.2fx the CPU of closuretrace\n", e / r, ec / rc
	printf "ClickHouse stores: events table %.1f bytes/event, all four tables %.1f bytes/event\n", se / n, sa / n
	printf "ratio JSON / ClickHouse: %.1fx smaller (events table), %.1fx (all tables)\n", b / se, b / sa
}'
