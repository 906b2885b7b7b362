#!/usr/bin/env bash
# Hostile structures (issue 12 items 1, 2, 14): report, report --json and explain terminate and
# stay small on a closure that is its own parent and on a 10,000-deep chain where every closure
# leaks; report --json keeps "trace" when the path is not UTF-8.
#   hostile_test.sh CLOSURETRACE FIXTURES
set -uo pipefail
ct=$1 fixtures=$2
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
header='{"type":"header","format":"closuretrace","version":1,"pid":1,"exe":"/x","start_ns":0}'
end='{"type":"end","events":1,"lost":0,"duration_ns":10,"reason":"exit","exit_code":0}'

# A closure that is its own parent: one leak, no chain, every command ends.
printf '%s\n%s\n%s\n' "$header" \
	'{"type":"event","ts":1,"tid":1,"ev":"init","cl":"0x10","remaining":1,"flags":"R","ip":"0x1","parent":"0x10","stack":false}' \
	"$end" >self.json
timeout 10 "$ct" report -i self.json >self.txt 2>&1 || fail "report of a self-parent: $?"
grep -q "^closures: 1 (0 finished, 1 unfinished: 1 leaked" self.txt || fail "$(cat self.txt)"
grep -q "chain to the root" self.txt && fail "a self-parent has no chain: $(cat self.txt)"
timeout 10 "$ct" report --json -i self.json >self.out || fail "report --json of a self-parent"
[ "$(stat -c %s self.out)" -lt 20000 ] || fail "report --json of one closure is $(stat -c %s self.out) bytes"
timeout 10 "$ct" explain -i self.json 0x10 >explain.txt || fail "explain of a self-parent"
grep -q "parent 0x10$" explain.txt || fail "$(head -1 explain.txt)"

# A 10,000-deep chain, every closure holding a reference from closure_get.
python3 - >deep.json <<PY
print('$header')
n = 10000
for i in range(1, n + 1):
    print('{"type":"event","ts":%d,"tid":1,"ev":"init","cl":"0x%x","remaining":1,"flags":"R","ip":"0x1","parent":"0x%x","stack":false}' % (2 * i, 16 * i, 16 * (i - 1)))
    print('{"type":"event","ts":%d,"tid":1,"ev":"get","cl":"0x%x","remaining":2,"flags":"R","ip":"0x2"}' % (2 * i + 1, 16 * i))
print('$end')
PY
timeout 60 "$ct" report --json -i deep.json >deep.out || fail "report --json of a deep chain: $?"
python3 - deep.out <<'PY' || fail "report --json of a deep chain"
import json, os, sys
size = os.path.getsize(sys.argv[1])
d = json.load(open(sys.argv[1]))
leaks = d["leaks"]
print("deep chain: %d bytes, %d leaks" % (size, len(leaks)))
assert len(leaks) == 10000, len(leaks)
assert size < 32 * 1024 * 1024, size
deepest = [l for l in leaks if l["closure"] == "1:0x27100#1"][0]
assert len(deepest["chain"]) == 8 and deepest["chain_left_out"] == 9999 - 8, deepest["chain_left_out"]
assert "chain_left_out" not in [l for l in leaks if l["closure"] == "1:0x40#1"][0]
PY
timeout 60 "$ct" report -i deep.json >deep.txt || fail "report of a deep chain: $?"
grep -q "\.\.\. 9991 more levels to the root" deep.txt || fail "report's chain: $(grep -m3 more deep.txt)"

# A trace whose path is not UTF-8: "trace" stays, its bad byte shown as every name's is (\udcXX).
cp "$fixtures/leak_under_children.json" $'caf\xe9.json'
"$ct" report --json -i $'caf\xe9.json' >utf8.out || fail "report --json of caf\\xe9.json"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["trace"]; assert t == "caf\\udce9.json", t' utf8.out ||
	fail "trace: $(grep '"trace"' utf8.out)"
echo PASS
