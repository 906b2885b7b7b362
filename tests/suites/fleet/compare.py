#!/usr/bin/env python3
"""Checks that what ClickHouse holds of one exported trace equals `closuretrace report --json`.

compare.py URL TRACE_ID REPORT_JSON
URL: http://HOST:PORT/DATABASE. Every count is read with FINAL, as the fleet's queries read
(the dedupe rule, docs/fleet.md). Exit 0, or 1 naming what differs.
"""
import json
import sys
import urllib.parse
import urllib.request


def query(url, sql):
    base, db = url.rsplit("/", 1)
    req = urllib.request.Request(
        base + "/?" + urllib.parse.urlencode({"database": db}), data=sql.encode())
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read().decode()


def one(url, sql):
    return int(query(url, sql).strip())


def main():
    url, trace_id, report = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(report) as f:
        rep = json.load(f)
    t = rep["totals"]
    where = "trace_id = '%s'" % trace_id
    bad = []

    def same(what, got, want):
        if got != want:
            bad.append("%s: ClickHouse %s, report %s" % (what, got, want))

    same("events", one(url, "SELECT count() FROM events FINAL WHERE " + where), t["events"])
    same("closures", one(url, "SELECT count() FROM closures FINAL WHERE " + where), t["closures"])
    # Each closure has one verdict word (report's): the counts of each word are the report's.
    for col, key in (("finished = 1", "finished"), ("verdict = 'leaked'", "leaked"),
                     ("verdict = 'root of a hang'", "hang_roots"),
                     ("verdict = 'kept alive'", "kept_alive"), ("stuck = 1", "stuck"),
                     ("verdict = 'stuck'", "stuck"), ("verdict = 'in flight'", "in_flight"),
                     ("verdict = 'suspect'", "suspects"), ("verdict = 'set aside'", "set_aside")):
        same("closures " + col,
             one(url, "SELECT count() FROM closures FINAL WHERE %s AND %s" % (where, col)), t[key])
    # Each kind, as report names it: the same definition, the same finished closures.
    rows = query(url, "SELECT kind, countIf(finished = 1), count() FROM closures FINAL WHERE %s "
                 "GROUP BY kind FORMAT TSV" % where)
    got = {k: (int(f), int(n)) for k, f, n in (r.split("\t") for r in rows.splitlines())}
    want = {k["kind"]: (k["finished"], k["count"]) for k in rep["kinds"]}
    same("kinds (finished, count)", got, want)
    # The traces row, once; its totals the report's.
    trow = query(url, "SELECT events, closures, finished, leaked, hang_roots, kept_alive, stuck, "
                 "in_flight, suspects, set_aside, lost FROM traces FINAL WHERE %s FORMAT TSV" % where)
    lines = trow.splitlines()
    same("traces rows", len(lines), 1)
    if lines:
        vals = [int(v) for v in lines[0].split("\t")]
        same("traces row", vals, [t["events"], t["closures"], t["finished"], t["leaked"],
                                  t["hang_roots"], t["kept_alive"], t["stuck"], t["in_flight"],
                                  t["suspects"], t["set_aside"], rep["lost"]])
    # One diagnostic per leaked closure and per stuck one, folded: the counts add up.
    same("leak diagnostics",
         one(url, "SELECT sum(closures) FROM diagnostics FINAL WHERE %s AND rule = 'leak'" % where),
         len(rep["leaks"]) + len(rep["hang_roots"]))
    same("stuck diagnostics",
         one(url, "SELECT sum(closures) FROM diagnostics FINAL WHERE %s AND rule = 'stuck'" % where),
         len(rep["stuck"]))
    if bad:
        print("FAIL: trace %s (%s):\n  %s" % (trace_id, report, "\n  ".join(bad)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
