#!/usr/bin/env python3
"""Checks traces for the batch tests.

  batch_check.py counts TRACE            events by kind ("kind N" lines, docs/probes.md order)
  batch_check.py ordered TRACE           events in time order (ts never decreases)
  batch_check.py same TRACE_A TRACE_B    the same events: (kind, file:line) multisets
                                         (run, finish, destructor: kind only)
  batch_check.py alternate TRACE N       the closure first initialised: get and put alternate
                                         2, 1, 2, 1 ... N times each, in the trace's order
  batch_check.py end TRACE               the trailer as key=value lines
  batch_check.py perpid TRACE            per process: "inits gets puts", one line each, sorted
  batch_check.py lines TRACE             the number of event lines
  batch_check.py sites TRACE             "kind file:line N" lines, sorted
"""
import collections
import json
import sys

KINDS = ["init", "get", "put", "sub", "continue_at", "run", "finish", "destructor", "wait",
         "wake", "sync_begin", "sync_end"]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def events(recs):
    return [r for r in recs if r["type"] == "event"]


def site(recs):
    syms = {r["addr"]: r for r in recs if r["type"] == "sym"}

    def where(ip):
        s = syms.get(ip)
        return f"{s.get('file', '?')}:{s.get('line', '?')}" if s else "?"
    return where


def main(argv):
    cmd, path = argv[1], argv[2]
    recs = load(path)
    if cmd == "counts":
        c = collections.Counter(e["ev"] for e in events(recs))
        for k in KINDS:
            print(f"{k} {c.get(k, 0)}")
    elif cmd == "ordered":
        ts = [e["ts"] for e in events(recs)]
        bad = [i for i in range(1, len(ts)) if ts[i] < ts[i - 1]]
        if bad:
            sys.exit(f"{path}: event {bad[0] + 1} is earlier than the one before it")
    elif cmd == "same":
        other = load(argv[3])

        def key(rs):
            where = site(rs)
            # run, finish and destructor name the put that released the closure: whichever
            # thread came last, which differs between runs of a threaded program.
            return collections.Counter(
                (e["ev"], "" if e["ev"] in ("run", "finish", "destructor") else where(e["ip"]))
                for e in events(rs))
        a, b = key(recs), key(other)
        if a != b:
            diff = (a - b) + (b - a)
            sys.exit(f"{path} and {argv[3]} differ, e.g. {list(diff.items())[:5]}")
    elif cmd == "alternate":
        n = int(argv[3])
        evs = events(recs)
        cl = next(e["cl"] for e in evs if e["ev"] == "init")
        seq = [(e["ev"], e["remaining"]) for e in evs if e["cl"] == cl and e["ev"] in ("get", "put")]
        want = [("get", 2), ("put", 1)] * n
        if seq != want:
            first = next((i for i, (x, y) in enumerate(zip(seq, want)) if x != y), min(len(seq), len(want)))
            sys.exit(f"{path}: {len(seq)} gets and puts, not alternating from #{first + 1}: "
                     f"{seq[first:first + 4]}")
    elif cmd == "perpid":
        c = collections.Counter((e["pid"], e["ev"]) for e in events(recs))
        rows = sorted(f"{c[p, 'init']} {c[p, 'get']} {c[p, 'put']}" for p in {e["pid"] for e in events(recs)})
        print("\n".join(rows))
    elif cmd == "sites":
        where = site(recs)
        c = collections.Counter((e["ev"], where(e["ip"])) for e in events(recs))
        print("\n".join(sorted(f"{k} {w} {n}" for (k, w), n in c.items())))
    elif cmd == "lines":
        print(len(events(recs)))
    elif cmd == "end":
        for k, v in recs[-1].items():
            print(f"{k}={v}")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
