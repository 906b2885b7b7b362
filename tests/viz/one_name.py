#!/usr/bin/env python3
"""One name and one verdict word per closure in every output (issue 40 item 5).

   one_name.py CLOSURETRACE CHECK_JUDGE ROWS_DUMP FIXTURES

Of each trace below, every unfinished closure: the same id (PID:ADDR#N, PID the header's when
the events name none) and the same verdict word (leaked, root of a hang, stuck, kept alive,
suspect, in flight) in report, report --json, explain, graph -T dot, timeline, check's SARIF and
the export rows (check --export, fleet); the same kind name in each; and the same counts of each
word, which add up to the unfinished closures. No one trace has both a leak and a root of a hang
(a leak needs a process that exited; a root of a hang, one ended by the recorder): stuck_sync.json
has a leak, stuck closures and a parent kept alive; cut_short.json a root of a hang, a stuck
closure and one in flight; sync_timeout.json two kinds of one name, initialised in main (and a
closure set aside: counted, not shown).
"""
import json
import os
import re
import subprocess
import sys

CT, JUDGE, ROWS, FIXTURES = sys.argv[1:5]
TRACES = {
    "stuck_sync.json": {"leaked": 1, "stuck": 2},
    "cut_short.json": {"root of a hang": 1, "stuck": 1, "in flight": 1},
    "sync_timeout.json": {"leaked": 1, "kept alive": 1, "set aside": 1},
}
# report --json's totals and lists, by word
TOTALS = {"leaked": "leaked", "root of a hang": "hang_roots", "stuck": "stuck",
          "kept alive": "kept_alive", "suspect": "suspects", "in flight": "in_flight",
          "set aside": "set_aside"}
LISTS = {"leaked": "leaks", "root of a hang": "hang_roots", "stuck": "stuck",
         "kept alive": "kept_alive", "suspect": "suspects"}
failures = []


def run(*args, ok=(0, 1)):
    p = subprocess.run(args, cwd=FIXTURES, capture_output=True, text=True)
    if p.returncode not in ok:
        sys.exit("FAIL: %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def same(what, got, want):
    if got != want:
        failures.append("%s: %r, expected %r" % (what, got, want))


def check_trace(trace, want_words):
    doc = json.loads(run(CT, "report", "--json", "-i", trace))
    # the JSON: each closure in the list of its word, with that word; the totals count them
    words, kinds = {}, {}
    for word, key in LISTS.items():
        for c in doc[key]:
            same("%s: report --json %s list: %s" % (trace, key, c["closure"]), c["verdict"], word)
            words[c["closure"]] = c["verdict"]
            kinds[c["closure"]] = c["function"]
    for c in doc["kept_alive"] + doc["leaks"] + doc["stuck"]:
        for p in c.get("chain", []):
            if p["closure"] in words:
                same("%s: chain verdict of %s" % (trace, p["closure"]), p["verdict"],
                     words[p["closure"]])
    t = doc["totals"]
    for word, key in TOTALS.items():
        same("%s: totals %s" % (trace, key), t[key], want_words.get(word, 0))
    same("%s: the words add up" % trace, sum(t[k] for k in TOTALS.values()), t["unfinished"])
    counted = {}
    for w in words.values():
        counted[w] = counted.get(w, 0) + 1
    same("%s: listed closures" % trace, counted,
         {w: n for w, n in want_words.items() if w in LISTS})
    for cid in words:
        if not re.fullmatch(r"[1-9][0-9]*:0x[0-9a-f]+#[1-9][0-9]*", cid):
            failures.append("%s: %s is no PID:ADDR#N" % (trace, cid))

    # the timeline: every unfinished closure's slice, its id, word, category and kind
    tl = os.path.join(os.environ.get("TMPDIR", "/tmp"), "one_name.%d.json" % os.getpid())
    run(CT, "timeline", "-i", trace, "-o", tl)
    slices = [e for e in json.load(open(tl))["traceEvents"]
              if e.get("ph") == "b" and "verdict" in e.get("args", {})]
    os.unlink(tl)
    for e in slices:
        cid, w = e["args"]["closure"], e["args"]["verdict"]
        if w == "in flight":
            words.setdefault(cid, w)
            kinds.setdefault(cid, e["name"][len("IN FLIGHT "):])
        same("%s: timeline verdict of %s" % (trace, cid), w, words.get(cid))
        key = TOTALS[w] if w not in ("suspect", "root of a hang") else \
            {"suspect": "suspect", "root of a hang": "hang_root"}[w]
        same("%s: timeline category of %s" % (trace, cid), e["cat"], "closure." + key)
        same("%s: timeline name of %s" % (trace, cid), e["name"],
             "%s %s" % (w.upper(), kinds.get(cid)))
    same("%s: timeline slices of unfinished closures" % trace, len(slices), len(words))
    report = run(CT, "report", "-i", trace)
    for cid, w in words.items():
        check_closure(trace, report, cid, w, kinds[cid])
    check_report_counts(trace, report, t)
    check_check(trace, words, t, kinds)


def check_closure(trace, report, cid, w, kind):
    # report: in the section of its word, under its id, with its kind
    sections = {"leaked": r"  leak \d+: ", "root of a hang": r"  root \d+: ",
                "suspect": r"  suspect \d+: ", "stuck": r"  ", "in flight": None,
                "kept alive": None}
    if sections[w] is not None:
        pattern = "^%s%s %s, " % (sections[w], re.escape(cid), re.escape(kind))
        if w == "stuck":  # in the stuck section
            body = report.split("\nstuck: ", 1)[-1]
        else:
            body = report
        if not re.search(pattern, body, re.M):
            failures.append("%s: report has no line %r" % (trace, pattern))
    # explain: its id and kind first, then its word
    ex = run(CT, "explain", "-i", trace, cid).splitlines()
    same("%s: explain's first line of %s" % (trace, cid), ex[0].split(", ")[0],
         "%s %s" % (cid, kind))
    verdict = [l for l in ex if l.startswith("verdict: ")]
    if not verdict or not re.match(r"verdict: %s($|[^a-z])" % w, verdict[0]):
        failures.append("%s: explain of %s does not say %r: %s" % (trace, cid, w, verdict))
    # graph: the node with its id says its kind first and its word
    dot = run(CT, "graph", "-T", "dot", "--no-fold", "-i", trace).replace("\\\n", "")
    labels = [l for l in re.findall(r'label="((?:[^"\\]|\\.)*)"', dot)
              if "\\n%s\\n" % cid in l]
    same("%s: graph nodes of %s" % (trace, cid), len(labels), 1)
    if labels:
        lines = labels[0].split("\\n")
        same("%s: graph kind of %s" % (trace, cid), lines[0], kind)
        said = [l for l in lines if l.startswith(w.upper() + ":") or l.startswith(w + " ")]
        if not said:
            failures.append("%s: graph node of %s does not say %r: %s" % (trace, cid, w, lines))


def check_report_counts(trace, report, t):
    m = re.search(r"^closures: \d+ \(\d+ finished, (\d+) unfinished: (.*)\)$", report, re.M)
    if not m:
        failures.append("%s: report has no counts" % trace)
        return
    said = {}
    for part in re.split(r"[,;] ", m.group(2)):
        n, word = part.split(" ", 1)
        word = re.sub(r" by them$", "", word)
        word = {"suspects": "suspect", "roots of a hang": "root of a hang"}.get(word, word)
        said[word] = int(n)
    for word, n in said.items():
        same("%s: report's count of %s" % (trace, word), n, t[TOTALS[word]])


def check_check(trace, words, t, kinds):
    # check's SARIF: each result names its first closure and that closure's word
    sarif = json.loads("{" + run(JUDGE, trace, "--sarif").split("\n{", 1)[1])  # after the text
    for r in sarif["runs"][0]["results"]:
        cid, w = r["properties"]["closure"], r["properties"]["verdict"]
        same("%s: SARIF verdict of %s" % (trace, cid), w, words.get(cid))
    # the export rows: every closure's id and word, the trace's counts of each word
    rows = [l.split("\t", 1) for l in run(ROWS, trace).splitlines()]
    for table, row in rows:
        r = json.loads(row)
        if table == "closures" and not r["finished"] and r["verdict"] != "set aside":
            same("%s: export verdict of %s" % (trace, r["closure"]), r["verdict"],
                 words.get(r["closure"]))
            same("%s: export kind of %s" % (trace, r["closure"]),
                 r["kind"].startswith(kinds.get(r["closure"], "?")), True)
        elif table == "traces":
            for key in TOTALS.values():
                same("%s: export traces %s" % (trace, key), r[key], t[key])


for name, want in TRACES.items():
    check_trace(name, want)
for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("ok: one id and one verdict word per closure in every output of %d traces" % len(TRACES))
