#!/usr/bin/env bash
# report --json streams (issue 21 item 7): its memory is bounded by one closure's element, not by
# the number of leaks. On parent chains of 20,000 and 60,000 closures (each one a leak, each with
# its chain to the root), what --json costs beyond the text report of the same trace (the same
# model, no document) must not grow with the 40,000 more leaks: under 16 MB more (building the
# whole document first, as before, took about 9 KB a leak: 360 MB more). Memory, not time: the
# speed is in make bench (viz.bench.sh). The document is whole: every leak, the deepest with its
# chain cut at 8 and the 59,991 closures above said.
#   report_json_stream.sh CLOSURETRACE VIZ_TRACEGEN
set -u
tool=$1 gen=$2
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1

declare -A excess
for n in 20000 60000; do
	"$gen" --chain $n >"$tmp/chain.json"
	read -r rc text < <(peak "$tool" report -i "$tmp/chain.json")
	[ "$rc" = 0 ] || fail "report of a $n-deep chain: exit $rc"
	read -r rc json < <(peak "$tool" report --json -i "$tmp/chain.json")
	[ "$rc" = 0 ] || fail "report --json of a $n-deep chain: exit $rc"
	excess[$n]=$((json - text))
	echo "chain $n: report peak $text KB, --json $json KB"
	python3 - "$tmp/out" $n <<'PY' || fail "report --json of a $n-deep chain: not the whole document"
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
n = int(sys.argv[2])
leaks = doc["leaks"]
assert doc["totals"]["leaked"] == n and len(leaks) == n, (doc["totals"], len(leaks))
deepest = max(leaks, key=lambda l: l["closure"])
assert len(deepest["chain"]) == 8 and deepest["chain_left_out"] == n - 1 - 8, deepest
assert "chain_left_out" not in leaks[0] and doc["warnings"] == [], leaks[0]
PY
done
grow=$((excess[60000] - excess[20000]))
[ "$grow" -lt 16384 ] ||
	fail "--json's memory beyond the text report grew by $grow KB with 40,000 more leaks (${excess[20000]} -> ${excess[60000]} KB): the document is held, not streamed"
echo "--json beyond the text report: ${excess[20000]} KB at 20,000 leaks, ${excess[60000]} KB at 60,000"
exit $status
