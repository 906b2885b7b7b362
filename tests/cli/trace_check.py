#!/usr/bin/env python3
"""Checks a closuretrace trace for the recorder's tests.

  trace_check.py valid TRACE               structure; prints the trailer as key=value lines
  trace_check.py counts TRACE              events by kind, in docs/probes.md order
  trace_check.py syms TRACE SOURCE OBJ     every event ip inside OBJ has a sym record whose
                                           file is SOURCE and whose line carries a SITE marker
  trace_check.py sites TRACE               every event ip has a sym record with func, file and
                                           line, the file not closure.h (inlined fast paths
                                           resolve to their caller)
  trace_check.py events TRACE CL           "ev remaining" of every event on closure CL
"""
import json
import sys

KINDS = ["init", "get", "put", "sub", "continue_at", "run", "finish", "destructor", "wait",
         "wake", "sync_begin", "sync_end"]


def load(path):
    records = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                records.append(json.loads(line))
            except ValueError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
    return records


def valid(path):
    recs = load(path)
    if not recs or recs[0].get("type") != "header" or recs[0].get("format") != "closuretrace":
        sys.exit(f"{path}: first line is not a header")
    if recs[-1].get("type") != "end":
        sys.exit(f"{path}: last line is not the trailer")
    events = [r for r in recs if r["type"] == "event"]
    for e in events:
        for field in ("ts", "tid", "ev", "cl", "remaining", "ip"):
            if field not in e:
                sys.exit(f"{path}: event without {field}: {e}")
    end = recs[-1]
    if end["events"] != len(events):
        sys.exit(f"{path}: trailer says {end['events']} events, {len(events)} written")
    for k in sorted(end):
        print(f"{k}={end[k]}")


def counts(path):
    c = {k: 0 for k in KINDS}
    for r in load(path):
        if r["type"] == "event":
            c[r["ev"]] = c.get(r["ev"], 0) + 1
    for k in c:
        print(k, c[k])


def syms(path, source, obj):
    recs = load(path)
    with open(source) as f:
        sites = {n for n, line in enumerate(f, 1) if "/* SITE" in line}
    by_addr = {r["addr"]: r for r in recs if r["type"] == "sym"}
    bad, checked = [], 0
    for e in (r for r in recs if r["type"] == "event"):
        s = by_addr.get(e["ip"])
        if s is None:
            bad.append(f"no sym for ip {e['ip']} ({e['ev']})")
            continue
        if s.get("obj") != obj:
            continue
        checked += 1
        if s.get("file") != source or s.get("line") not in sites or not s.get("func"):
            bad.append(f"{e['ev']} at {e['ip']}: {s}")
    for line in sorted(set(bad)):
        print(line)
    if bad or not checked:
        sys.exit(f"{path}: {len(set(bad))} bad call sites, {checked} checked")
    print(f"{checked} call sites resolved to SITE lines")


def sites(path):
    recs = load(path)
    by_addr = {r["addr"]: r for r in recs if r["type"] == "sym"}
    bad = set()
    ips = {r["ip"] for r in recs if r["type"] == "event"}
    for ip in ips:
        s = by_addr.get(ip)
        if (s is None or not s.get("func") or not s.get("file") or not s.get("line")
                or s["file"].endswith("closure.h")):
            bad.add(f"{ip}: {s}")
    for line in sorted(bad):
        print(line)
    if bad or not ips:
        sys.exit(f"{path}: {len(bad)} of {len(ips)} call sites unresolved")
    print(f"{len(ips)} call sites resolved")


def events(path, cl):
    for r in load(path):
        if r["type"] == "event" and r["cl"] == cl:
            print(r["ev"], r["remaining"])


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"valid": valid, "counts": counts, "syms": syms, "sites": sites, "events": events}[cmd](*args)
