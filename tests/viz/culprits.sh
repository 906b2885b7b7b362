#!/usr/bin/env bash
# Pictures that always show the culprit (issue 40 item 3):
# - three leaks of one kind under three parents alike: three red boxes, or one red "×3" of them,
#   and no leak in a node of another colour;
# - a chain 100,000 deep whose leaf leaked (its ancestors kept alive by it): -T dot under 1 MB
#   with the top, a "… 99997 levels …" node, the leaf's parent and the leaf drawn red; svg likewise;
# - a hang on a waitlist: the root of the hang red, a "waits on" edge from the stuck waiter to the
#   waitlist and a "would wake it" edge from the waitlist to the root.
#   culprits.sh CLOSURETRACE FIXTURES
set -u
tool=$1 fixtures=$2
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1

# nodes FILE.dot: one line per node, "NAME<TAB>COLOR<TAB>LABEL" (dot's continued lines joined).
nodes() {
	python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", "")
for name, attrs in re.findall(r'^\s*([A-Za-z_]\w*)\s+\[(.*?)\];', text, re.M | re.S):
    if name in ("graph", "node", "edge"):
        continue
    colour = re.search(r'(?<![a-z])color="?([^",\]]+)', attrs)
    label = re.search(r'label="((?:[^"\\]|\\.)*)"', attrs)
    print("%s\t%s\t%s" % (name, colour.group(1) if colour else "-", label.group(1) if label else ""))
PY
}

"$tool" graph -T dot -i "$fixtures/three_leaks.json" >three.dot || fail "graph three_leaks: exit $?"
nodes three.dot >three.txt
red=$(awk -F'\t' '$2 == "red"' three.txt)
boxes=$(grep -c '	LEAKED: \|LEAKED: holds' <<<"$red")
if grep -q '^f[0-9]*	red	×3 LEAKED' <<<"$red"; then
	[ "$(wc -l <<<"$red")" = 1 ] || fail "three leaks: a red ×3 and other red nodes: $red"
elif [ "$(wc -l <<<"$red")" != 3 ] || [ "$boxes" != 3 ]; then
	fail "three leaks: neither three red boxes nor one red ×3: $(cat three.txt)"
fi
awk -F'\t' '$2 != "red" && $3 ~ /LEAKED/' three.txt | grep -q . &&
	fail "three leaks: a leak in a node that is not red: $(cat three.txt)"

# A chain 100,000 deep: the top and every closure below it continue, kept alive by their child;
# the leaf took a reference it never put back.
python3 - >deep.json <<'PY'
n = 100000
print('{"type":"header","format":"closuretrace","version":1,"pid":7,"exe":"/x","start_ns":0}')
print('{"type":"sym","addr":"0x401000","func":"level","file":"src/deep.c","line":10}')
print('{"type":"sym","addr":"0x401010","func":"level","file":"src/deep.c","line":12}')
print('{"type":"sym","addr":"0x401020","func":"leaf_io","file":"src/deep.c","line":20}')
print('{"type":"sym","addr":"0x402000","func":"level_done","file":"src/deep.c","line":30}')
ev = '{"type":"event","ts":%d,"tid":7,"ev":"%s","cl":"0x%x","remaining":%d,"ip":"0x%x"%s}'
cl = lambda i: 0x100000 + 0x40 * i
ts = 0
for i in range(n):
    ts += 1
    print(ev % (ts, "init", cl(i), 1, 0x401000,
                ',"flags":"R","parent":"0x%x","stack":false' % (cl(i - 1) if i else 0)))
for i in range(n - 1):
    ts += 1
    print(ev % (ts, "continue_at", cl(i), 1, 0x401010,
                ',"fn":"0x402000","wq":"0x0","how":"continue_at"'))
ts += 1
print(ev % (ts, "get", cl(n - 1), 2, 0x401020, ',"flags":"R"'))
print(ev % (ts + 1, "continue_at", cl(n - 1), 1, 0x401010,
            ',"fn":"0x0","wq":"0x0","how":"return"'))
print('{"type":"end","events":%d,"lost":0,"duration_ns":%d,"reason":"exit","exit_code":0}'
      % (2 * n + 1, ts + 10))
PY
"$tool" graph -T dot --leaks -i deep.json >deep.dot || fail "graph --leaks -T dot of the chain: exit $?"
size=$(stat -c %s deep.dot)
[ "$size" -le 1048576 ] || fail "graph --leaks -T dot of a 100,000-deep chain: $size bytes, over 1 MB"
nodes deep.dot >deep.txt
grep -q '^c0	darkorange	level -> level_done\\n' deep.txt || fail "deep: the top is not drawn: $(cat deep.txt)"
grep -q '^f[0-9]*	darkorange	… 99997 levels …\\n7:0x100040#1 to 7:0x71a740#1\\nlevel -> level_done\\nkept alive by unfinished children$' \
	deep.txt || fail "deep: no '… 99997 levels …' node: $(cat deep.txt)"
grep -q '^c99999	red	level\\n.*\\nLEAKED: holds 1 ref\\nblame: src/deep.c:20 leaf_io' deep.txt ||
	fail "deep: the leaked leaf is not drawn red: $(cat deep.txt)"
[ "$(wc -l <deep.txt)" = 4 ] || fail "deep: $(wc -l <deep.txt) nodes, expected 4: $(cat deep.txt)"
"$tool" graph -T dot -i deep.json >all.dot || fail "graph -T dot of the chain: exit $?"
cmp -s deep.dot all.dot || fail "deep: --leaks and the whole picture differ (every closure is unfinished)"
"$tool" graph -T svg --leaks -i deep.json -o deep.svg || fail "graph -T svg of the chain: exit $?"
grep -q '>… 99997 levels …<' deep.svg || fail "deep: the svg has no elision"
grep -q '>blame: src/deep.c:20 leaf_io: took refs never put back (sure: medium)<' deep.svg ||
	fail "deep: the svg does not draw the leaf"

"$tool" graph -T dot -i "$fixtures/hang_waitlist.json" >hang.dot || fail "graph hang: exit $?"
nodes hang.dot >hang.txt
root=$(awk -F'\t' '$3 ~ /ROOT OF A HANG/ {print $1 "\t" $2}' hang.txt)
[ "$root" = "c4	red" ] || fail "hang: the root of the hang is not one red node: '$root'"
waiter=$(awk -F'\t' '$3 ~ /STUCK/ {print $1}' hang.txt)
wl=$(awk -F'\t' '$3 ~ /^waitlist 0x7f00000b0000/ {print $1}' hang.txt)
[ -n "$waiter" ] && [ -n "$wl" ] || fail "hang: no waiter ($waiter) or no waitlist ($wl)"
python3 - hang.dot "$waiter" "$wl" <<'PY' || fail "hang: the waits-on and would-wake edges"
import re, sys
text = open(sys.argv[1]).read()
waiter, wl = sys.argv[2], sys.argv[3]
edge = lambda a, b: re.search(r'^\s*%s -> %s\s+\[([^\]]*)\]' % (a, b), text, re.M)
waits, wakes = edge(waiter, wl), edge(wl, "c4")
assert waits and "style=dashed" in waits.group(1), "no dashed edge %s -> %s" % (waiter, wl)
assert wakes and "style=dotted" in wakes.group(1), "no dotted edge %s -> c4" % wl
assert "would wake it" in text and "waits on (closure_wait)" in text, "no legend"
PY
exit $status
