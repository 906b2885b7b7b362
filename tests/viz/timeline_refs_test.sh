#!/usr/bin/env bash
# The timeline's reference arrows (issue 40 item 4): one per hop between threads of a reference,
# given back by closure_put or closure_sub, paired as the model pairs them; counted in Python from
# the raw trace (timeline_refs.py) and compared arrow for arrow. What the timeline cannot hold is
# said: the output's otherData and a warning line. A leak's slice names its blame's file:line.
# - ref_hops.json: gets on two threads given back by a sub of 2 and puts on a device thread, a
#   put on the taking thread (no hop), a child's get and its finish's put (not plain references),
#   a leaked get;
# - generated: 5,000 gets open at once on one closure, and 5,000 children finished before their
#   parent's next step: 4,096 arrows of each drawn, 904 said not drawn;
# - with BLOCKIO (root, BPF): the demo recorded, 200 requests of 4 bios with its planted leak:
#   2,000 hops (1,600 given back by closure_sub), all drawn; the LEAKED slice's blame names the
#   LEAK: line of examples/blockio.c.
#   timeline_refs_test.sh CLOSURETRACE CHECKER FIXTURES [BLOCKIO]
# Exits 0 (pass), 1 (fail) or 77 (skip, with BLOCKIO: common.sh's skip_without_bpf).
set -u
tool=$1 checker=$2 fixtures=$3 blockio=${4:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../common.sh"
keep_going=1
scratch

if [ -z "$blockio" ]; then
	"$tool" timeline -i "$fixtures/ref_hops.json" -o "$tmp/refs.tl.json" 2>"$tmp/err" ||
		fail "ref_hops: exit $?: $(cat "$tmp/err")"
	python3 "$checker" "$tmp/refs.tl.json" "$fixtures/ref_hops.json" --hops 4 --subs 2 \
		--blame src/refs.c:51 >"$tmp/check" || fail "ref_hops: $(cat "$tmp/check")"
	python3 "$here/timeline_check.py" "$tmp/refs.tl.json" "$fixtures/ref_hops.json" \
		--flows 'reference=4,continued=2,first run=2,released=2,child finished=1' >"$tmp/check" ||
		fail "ref_hops: $(cat "$tmp/check")"

	# More than the timeline holds on one closure.
	python3 - "$tmp/gets.json" "$tmp/children.json" <<'EOF'
import json, sys

def write(path, events):
    with open(path, "w") as f:
        f.write('{"type":"header","format":"closuretrace","version":1,"pid":9,"exe":"/x"}\n')
        for n, (tid, op, cl, rem, extra) in enumerate(events):
            ev = {"type": "event", "ts": 100 + n, "tid": tid, "ev": op, "cl": cl,
                  "remaining": rem, "flags": "R" if op in ("init", "run") else "",
                  "ip": "0x401000"}
            ev.update(extra)
            f.write(json.dumps(ev) + "\n")
        f.write('{"type":"end","events":%d,"lost":0,"reason":"exit","exit_code":0}\n'
                % len(events))

N, P = 5000, "0x1000"
cont = {"fn": "0x402000", "wq": "0x0", "how": "continue_at"}
ret = {"fn": "0x0", "wq": "0x0", "how": "return"}
run = {"fn": "0x402000", "wq": "0x0"}
end = [(2, "run", P, 1, run), (2, "continue_at", P, 0, ret), (2, "finish", P, 0, {"parent": "0x0"})]
gets = [(1, "init", P, 1, {"parent": "0x0"})]
gets += [(1, "get", P, 2 + i, {}) for i in range(N)]
gets += [(1, "continue_at", P, N, cont)] + [(3, "put", P, N - 1 - i, {}) for i in range(N)]
write(sys.argv[1], gets + end)
kids = [(1, "init", P, 1, {"parent": "0x0"})]
for i in range(N):
    c = "0x%x" % (0x100000 + 0x100 * i)
    kids += [(1, "get", P, 2, {}), (1, "init", c, 1, {"parent": P}),
             (1, "continue_at", c, 0, ret), (1, "finish", c, 0, {"parent": P}),
             (1, "put", P, 1, {})]
write(sys.argv[2], kids + [(1, "continue_at", P, 0, cont)] + end)
EOF
	why="more gets open, or children finished before their parent's next step, on one closure than the timeline holds (4096)"
	for f in gets children; do
		"$tool" timeline -i "$tmp/$f.json" -o "$tmp/$f.tl.json" 2>"$tmp/err" || fail "$f: exit $?"
		head -1 "$tmp/err" | grep -qxF "$tmp/$f.json: warning: 904 arrows not drawn: $why" ||
			fail "$f: stderr: $(cat "$tmp/err")"
		grep -qxF "],\"displayTimeUnit\":\"ns\",\"otherData\":{\"arrows_not_drawn\":904,\"why\":\"$why\"}}" \
			"$tmp/$f.tl.json" || fail "$f: no otherData: $(tail -1 "$tmp/$f.tl.json")"
	done
	python3 "$checker" "$tmp/gets.tl.json" "$tmp/gets.json" --hops 5000 --subs 0 --dropped 904 \
		>"$tmp/check" || fail "gets: $(cat "$tmp/check")"
	python3 "$here/timeline_check.py" "$tmp/children.tl.json" "$tmp/children.json" \
		--flows 'child finished=4096,continued=1,first run=1' >"$tmp/check" ||
		fail "children: $(cat "$tmp/check")"
	exit $status
fi

skip_without_bpf
"$tool" record -o "$tmp/t.json" -- "$blockio" --requests 200 --bios 4 --leak >"$tmp/out" 2>&1 ||
	fail "record: exit $?: $(cat "$tmp/out")"
"$tool" timeline -i "$tmp/t.json" -o "$tmp/tl.json" 2>"$tmp/err" || fail "timeline: exit $?"
grep -q "arrows not drawn" "$tmp/err" && fail "timeline: $(cat "$tmp/err")"
leak=$(grep -n 'LEAK:' "$here/../../examples/blockio.c" | head -1 | cut -d: -f1)
python3 "$checker" "$tmp/tl.json" "$tmp/t.json" --hops 2000 --subs 1600 \
	--blame "examples/blockio.c:$leak" >"$tmp/check" || fail "$(cat "$tmp/check")"
exit $status
