#!/usr/bin/env bash
# An event stamped before its closure's init reaches the reader after the reorder window passed
# that init (top saw it: finishes of lives that ended before the attach, still in a thread's
# buffer, applied to the closures the snapshot had begun since at those addresses). It belongs to
# an earlier life: set aside as late, never a lifetime below 0 ("0 ns").
#   earlier_life.sh CLOSURETRACE
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ct=$1
scratch
python3 - >t.json <<'PY'
import json
def ev(**kw):
    print(json.dumps(dict(type="event", **kw), separators=(",", ":")))
print('{"type":"header","format":"closuretrace","version":1,"pid":700,"exe":"/usr/bin/poold","start_ns":0}')
print('{"type":"sym","addr":"0x601000","func":"req_alloc","file":"src/pool.c","line":10}')
print('{"type":"sym","addr":"0x601100","func":"req_done","file":"src/pool.c","line":20}')
ev(ts=-5000, tid=700, ev="init", cl="0x7f0000003000", remaining=1, flags="R", ip="0x601000", parent="0x0", stack=False, snapshot=True)
# 5,000 short lives elsewhere: more than the reader's reorder window holds.
for i in range(5000):
    cl = hex(0x7f1000000000 + i * 0x100)
    ev(ts=i * 10, tid=702, ev="init", cl=cl, remaining=1, flags="R", ip="0x601000", parent="0x0", stack=False)
    ev(ts=i * 10 + 5, tid=702, ev="finish", cl=cl, remaining=0, ip="0x601100", parent="0x0")
# The earlier life's finish, late; then this life's own.
ev(ts=-9000, tid=701, ev="finish", cl="0x7f0000003000", remaining=0, ip="0x601100", parent="0x0")
ev(ts=60000, tid=701, ev="finish", cl="0x7f0000003000", remaining=0, ip="0x601100", parent="0x0")
print('{"type":"end","events":10003,"lost":0,"duration_ns":1000000,"reason":"exit","exit_code":0}')
PY
"$ct" report -i t.json >r.txt 2>&1 || fail "report: $(cat r.txt)"
# The snapshot's closure lived from -5 us to 60 us: 65 us, the longest (not 0, nor cut at -9 us).
grep -qE '^ +5001 +5001 +0 +5 ns +5 ns +5 ns +65\.0 µs +req_alloc \(src/pool\.c:10\)$' r.txt ||
	fail "not 5001 finished req_alloc, the longest 65 us: $(cat r.txt)"
grep -q "^# 1 event was reported after its closure finished .* set aside$" r.txt ||
	fail "the late finish is not set aside: $(cat r.txt)"
echo "ok: the earlier life's finish set aside; the snapshot's closure lived 65 us"
