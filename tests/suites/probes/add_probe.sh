#!/bin/bash
# The probe contract's promise (docs/design.md, "The probe contract"): a new probe is one line in
# CLOSURE_PROBE_LIST, plus where libclosure fires it and what the model does with it. In a copy of
# the source tree this test adds the probe poke(v, fn) that way and nothing else, builds the copy,
# records a program that fires it (each transport: batches, one probe per operation, the
# in-process sink), and checks that the trace, report, explain and timeline all carry it.
# add_probe.sh SOURCE_DIR
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
src=$(cd "$1" && pwd) || exit 1
scratch

mkdir tree
tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . | tar -C tree -xf - ||
	fail "copying $src"

# The three places, each as a person would write them.
python3 - tree <<'PY' || fail "editing the copy"
import sys
root = sys.argv[1]
def edit(rel, old, new):
    path = "%s/%s" % (root, rel)
    text = open(path).read()
    if text.count(old) != 1:
        sys.exit("%s: '%s' found %d times" % (rel, old, text.count(old)))
    open(path, "w").write(text.replace(old, new))
# 1. The contract: one line.
last = "X(destroy, DESTROY, (NONE, _), (NONE, _), (NONE, _))"
edit("lib/include/closure_probes.h", last,
     last + " \\\n\tX(poke, POKE, (INT, v), (FN, fn), (NONE, _))")
# 2. Where it fires: a new call, closure_poke(cl, v), naming its caller's function.
edit("lib/include/closure.h", "void closure_debug_destroy(struct closure *cl);",
     "void closure_debug_destroy(struct closure *cl);\nvoid closure_poke(struct closure *cl, int v);")
edit("lib/closure.c", "/* A plain store, as in the kernel:", """void closure_poke(struct closure *cl, int v)
{
	uintptr_t ip = CALLER_IP();
	uint32_t r = __atomic_load_n(CLOSURE_WORD(cl), __ATOMIC_RELAXED);

	probe_op2(poke, cl, r, ip, (int64_t)v, (uintptr_t)closure_poke);
}

/* A plain store, as in the kernel:""")
# 3. What the model does: nothing beyond what every operation does (the count after it).
edit("viz/model.c", "\tcase TRACE_NR_OPS:\n", "\tcase TRACE_POKE:\n\tcase TRACE_NR_OPS:\n")
PY

cmake -S tree -B build -DCLOSURE_DEBUG=ON -DCLOSURETRACE_WERROR=ON >cmake.log 2>&1 ||
	fail "configuring the copy: $(tail -20 cmake.log)"
cmake --build build -j2 --target closuretrace closure >build.log 2>&1 ||
	fail "building the copy: $(grep -m5 -E 'error|warning' build.log)"
cc -o poke "$src/tests/suites/probes/poke_prog.c" -Itree/lib/include -Ibuild/lib/include \
	-Lbuild/lib -lclosure -Wl,-rpath,"$tmp/build/lib" || fail "building poke_prog.c"
ct=build/cli/closuretrace

# check TRANSPORT RECORD-OPTIONS...: records poke and checks every view of the trace.
check() {
	local how=$1 trace=$1.json
	shift
	"$ct" record "$@" -o "$trace" -- ./poke >"$how.out" 2>&1 || fail "$how: record: $(cat "$how.out")"
	python3 - "$trace" "$how" <<'PY' || fail "$how: the trace"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if '"type":"event"' in l]
pokes = [e for e in events if e["ev"] == "poke"]
if [e.get("v") for e in pokes] != [7, 11] or any(not e.get("fn", "").startswith("0x") for e in pokes):
    sys.exit("%s: poke events %s, not v 7 then 11 with a fn address" % (sys.argv[2], pokes))
syms = [l for l in open(sys.argv[1]) if '"sym"' in l and '"closure_poke"' in l]
if not syms:
    sys.exit("%s: no sym record names closure_poke (fn, a code address)" % sys.argv[2])
open(sys.argv[2] + ".events", "w").write("%d\n" % len(events))
open(sys.argv[2] + ".leak", "w").write(pokes[1]["cl"] + "\n")
PY
	"$ct" report --json -i "$trace" >"$how.report" || fail "$how: report exited $?"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["totals"]["events"], r["totals"]["leaked"])' \
		"$how.report" >"$how.totals"
	[ "$(cat "$how.totals")" = "$(cat "$how.events") 1" ] ||
		fail "$how: report's events and leaks '$(cat "$how.totals")', not '$(cat "$how.events") 1'"
	"$ct" explain -i "$trace" "$(cat "$how.leak")" >"$how.explain" 2>&1 || fail "$how: explain exited $?"
	[ "$(grep -c ' poke .* v 11, fn closure_poke$' "$how.explain")" = 1 ] &&
		grep -q '^verdict: leaked' "$how.explain" ||
		fail "$how: explain of the leak does not tell its poke (v 11): $(cat "$how.explain")"
	"$ct" timeline -i "$trace" -o "$how.timeline" || fail "$how: timeline exited $?"
	python3 - "$how.timeline" "$how" <<'PY' || fail "$how: the timeline"
import json, sys
doc = json.load(open(sys.argv[1]))
evs = doc["traceEvents"] if isinstance(doc, dict) else doc
pokes = [e for e in evs if e.get("name") == "poke"]
got = sorted((e["args"].get("v"), e["args"].get("fn")) for e in pokes)
if got != [(7, "closure_poke"), (11, "closure_poke")]:
    sys.exit("%s: timeline's poke events %s" % (sys.argv[2], got))
PY
}

check sink --no-bpf
skip_without_bpf
check batches
check per_op --per-op
echo "PASS: poke carried through trace, report, explain and timeline by every transport"
