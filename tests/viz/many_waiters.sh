#!/usr/bin/env bash
# A hang with 100,000 closures waiting on one waitlist behind one journal write that never gave
# back its reference (issue 40: finding the roots of a hang looked at every closure for each
# waiter, and took minutes): report, report --json and graph name the one root and count every
# waiter stuck, in the time ctest allows.
#   many_waiters.sh CLOSURETRACE
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ct=$1
waiters=100000
scratch
python3 - "$waiters" >hang.json <<'PY'
import sys
waiters = int(sys.argv[1])
out = sys.stdout
out.write('{"type":"header","format":"closuretrace","version":1,"pid":600,"exe":"/usr/bin/journal","start_ns":1000000}\n')
for addr, func, line in ((0x401000, "journal_write", 10), (0x401010, "journal_write", 12),
                         (0x401020, "journal_write", 14), (0x402000, "journal_write_done", 30),
                         (0x402020, "journal_write_done", 34), (0x403000, "write_endio", 50),
                         (0x404000, "reserve", 20), (0x404010, "reserve", 22),
                         (0x404020, "reserve", 24), (0x405000, "reserve_done", 40)):
    out.write('{"type":"sym","addr":"0x%x","func":"%s","file":"src/journal.c","line":%d}\n' % (addr, func, line))
ts = 100
def ev(tid, op, cl, remaining, rest):
    global ts
    ts += 1
    out.write('{"type":"event","ts":%d,"tid":%d,"ev":"%s","cl":"0x%x","remaining":%d,%s}\n' % (ts, tid, op, cl, remaining, rest))
def write(cl, finish):
    ev(100, "init", cl, 1, '"flags":"R","ip":"0x401000","parent":"0x0","stack":false')
    ev(100, "get", cl, 2, '"flags":"R","ip":"0x401010"')
    ev(100, "continue_at", cl, 1, '"ip":"0x401020","fn":"0x402000","wq":"0x0","how":"continue_at"')
    if finish:
        ev(101, "put", cl, 0, '"ip":"0x403000"')
        ev(101, "run", cl, 1, '"flags":"R","ip":"0x403000","fn":"0x402000","wq":"0x0"')
        ev(101, "continue_at", cl, 0, '"ip":"0x402020","fn":"0x0","wq":"0x0","how":"return"')
        ev(101, "finish", cl, 0, '"ip":"0x402020","parent":"0x0"')
for i in range(30):
    write(0x7f0000001000 + 0x100 * i, True)
write(0x7f0000100000, False)
for i in range(waiters):
    cl = 0x7f0001000000 + 0x100 * i
    ev(200, "init", cl, 1, '"flags":"R","ip":"0x404000","parent":"0x0","stack":false')
    ev(200, "wait", cl, 2, '"flags":"RW","ip":"0x404010","waitlist":"0x7f00000b0000"')
    ev(200, "continue_at", cl, 1, '"flags":"W","ip":"0x404020","fn":"0x405000","wq":"0x0","how":"continue_at"')
out.write('{"type":"end","events":%d,"lost":0,"duration_ns":3000000000,"reason":"timeout","signal":15,"cut_short":true}\n' % (ts - 100))
PY
"$ct" report --json -i hang.json >report.json || fail "report --json: exit $?"
python3 - "$waiters" report.json <<'PY' || fail "report --json: $(head -c 300 report.json)"
import json, sys
waiters = int(sys.argv[1])
d = json.load(open(sys.argv[2]))
t = d["totals"]
assert t["hang_roots"] == 1 and t["stuck"] == waiters, t
roots = d["hang_roots"]
assert len(roots) == 1 and roots[0]["closure"] == "600:0x7f0000100000#1", roots
assert roots[0]["verdict"] == "root of a hang", roots[0]["verdict"]
PY
"$ct" report -i hang.json >report.txt || fail "report: exit $?"
grep -q "^stuck: $waiters$" report.txt || fail "report: $(grep -m1 '^stuck' report.txt)"
"$ct" graph -T dot -i hang.json >hang.dot || fail "graph: exit $?"
grep -q 'fillcolor="#ffd8d8"' hang.dot || fail "graph: the root is not drawn red"
echo "ok: $waiters waiters behind one root: report, report --json and graph name it"
exit $status
