#!/usr/bin/env python3
"""The probe contract (lib/include/closure_probes.h, CLOSURE_PROBE_LIST) is the one list of
operations and their arguments; what repeats it elsewhere is checked against it here:
- docs/probes.md's table: one row per probe, in the contract's order, naming each extra argument
  as argN `name` (and "—" for none);
- the tests' Python lists: the counted ones (the operations a correct program fires: all but bug
  and destroy) in the contract's order, and timeline_check.py's set of every operation.
contract_check.py SOURCE_DIR"""
import os
import re
import sys

src = sys.argv[1]
header = open(os.path.join(src, "lib", "include", "closure_probes.h")).read()
body = header[header.index("#define CLOSURE_PROBE_LIST(X)"):]
body = body[:body.index("\n\n")]
pair = r"\((\w+), (\w+)\)"
contract = []  # (name, [(type, field) of arg4..arg6 that exist])
for m in re.finditer(r"X\((\w+), \w+, %s, %s, %s\)" % (pair, pair, pair), body):
    args = [(m.group(i), m.group(i + 1)) for i in (2, 4, 6) if m.group(i) != "NONE"]
    contract.append((m.group(1), args))
bad = []
if len(contract) != body.count("X("):
    bad.append("closure_probes.h: %d entries of CLOSURE_PROBE_LIST read as (TYPE, field) pairs, of %d"
               % (len(contract), body.count("X(")))
types = {"ADDR", "FN", "BOOL", "INT", "BUG", "HOW"}
for name, args in contract:
    for t, field in args:
        if t not in types:
            bad.append("closure_probes.h: %s's argument %s has type %s, not one of %s"
                       % (name, field, t, sorted(types)))

# docs/probes.md: the operations' table.
doc = open(os.path.join(src, "docs", "probes.md")).read()
rows = re.findall(r"^\| `(\w+)` \| .* \| ([^|]*) \|$", doc, re.M)
if [n for n, _ in rows][:len(contract)] != [n for n, _ in contract]:
    bad.append("docs/probes.md's table lists %s, not the contract's %s"
               % ([n for n, _ in rows], [n for n, _ in contract]))
for (name, args), (row_name, extras) in zip(contract, rows):
    if row_name != name:
        continue
    if not args and extras.strip() != "—":
        bad.append("docs/probes.md: %s has no extra argument, the table says '%s'" % (name, extras))
    for i, (_, field) in enumerate(args):
        if "arg%d `%s`" % (4 + i, field) not in extras:
            bad.append("docs/probes.md: %s's arg%d is `%s` in the contract, not in the table"
                       % (name, 4 + i, field))

# The tests' Python lists.
ops = [n for n, _ in contract]
counted = [n for n in ops if n not in ("bug", "destroy")]
for rel, var in (("tests/cli/trace_check.py", "KINDS"),
                 ("tests/suites/batch/batch_check.py", "KINDS"),
                 ("tests/suites/probes/bpftrace_counts.py", "PROBES")):
    text = open(os.path.join(src, rel)).read()
    m = re.search(r"^%s = \[(.*?)\]" % var, text, re.M | re.S)
    got = re.findall(r'"(\w+)"', m.group(1)) if m else None
    if got != counted:
        bad.append("%s: %s is %s, not the contract's operations without bug and destroy %s"
                   % (rel, var, got, counted))
text = open(os.path.join(src, "tests/viz/timeline_check.py")).read()
m = re.search(r"^OPS = \{(.*?)\}", text, re.M | re.S)
if not m or set(re.findall(r'"(\w+)"', m.group(1))) != set(ops):
    bad.append("tests/viz/timeline_check.py: OPS is not the contract's operations %s" % ops)

for b in bad:
    print("FAIL: " + b)
if not bad:
    print("ok: %d operations; docs/probes.md and 4 Python lists agree with the contract"
          % len(contract))
sys.exit(1 if bad else 0)
