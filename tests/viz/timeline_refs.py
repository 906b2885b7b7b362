#!/usr/bin/env python3
"""The timeline's reference arrows against the raw trace: one per hop between threads.

    timeline_refs.py TIMELINE TRACE [--hops N] [--subs N] [--dropped N] [--blame FILE:LINE]

A hop is a reference taken on one thread (get) and given back on another (put, or sub: v at
once), paired as the model pairs them (viz/model.c, the pairing leaks.c blames by), counted here
from the trace's JSON Lines in time order:
- per closure life (an init starts one at its address), the plain gets still open, newest last;
- a put or a sub of v gives back the newest open one(s) (none left: nothing);
- a child's init takes the get it made on its parent out of them: the newest open get at the
  init's site among the last 4 whose sites are known; the put that follows the child's finish on
  the parent is that child's, and gives back no open get.

Asserted: the timeline's "reference" arrows ("s" at the get's thread and time, "f" at the put's)
are exactly the trace's hops, arrow for arrow, when none are dropped; with --hops, --subs: that
many hops, of which that many given back by a sub; with --dropped N: N arrows said not drawn
(otherData.arrows_not_drawn, absent when 0) and as many fewer reference arrows; with --blame: the
LEAKED slice's blame starts with FILE:LINE (the file's name as the trace gives it, or its end).
Prints a one-line summary and exits 0, or prints every problem and exits 1.
"""
import collections
import json
import sys

KEPT = 4  # open gets whose sites the model keeps (MODEL_OPEN_GETS)


class Life:
    def __init__(self):
        self.open = []  # (tid, ts, ip), oldest first
        self.kept = 0  # the newest this many have known sites
        self.child_puts_due = 0


def events_of(trace_path):
    """The trace's events in time order (file order among equal times), and its header's pid."""
    recs, pid = [], None
    with open(trace_path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            try:
                rec = json.loads(line)
            except ValueError:
                break  # a cut-short last line
            if rec.get("type") == "header":
                pid = rec.get("pid")
            elif rec.get("type") == "event":
                recs.append((rec["ts"], n, rec))
    recs.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in recs], pid


def give_back(life, n, e, pid, hops):
    for _ in range(min(n, len(life.open))):
        tid, ts, _ = life.open.pop()
        life.kept = max(life.kept - 1, 0)
        if tid != e["tid"]:
            hops.append((pid, tid, ts, e["tid"], e["ts"], e["ev"]))


def reference_hops(trace_path):
    """[(pid, get tid, get ts, put tid, put ts, "put" or "sub")] of every hop between threads."""
    events, header_pid = events_of(trace_path)
    lives, hops = {}, []
    for e in events:
        pid = e.get("pid") or header_pid
        key = (pid, e["cl"])
        if e["ev"] == "init":
            lives[key] = Life()
            parent = e.get("parent", "0x0")
            if int(parent, 16) and parent != e["cl"]:
                p = lives.setdefault((pid, parent), Life())
                known = p.open[len(p.open) - p.kept:]
                for i in range(len(known) - 1, -1, -1):
                    if known[i][2] == e["ip"]:
                        del p.open[len(p.open) - p.kept + i]
                        p.kept -= 1
                        break
            continue
        life = lives.setdefault(key, Life())
        if e["ev"] == "get":
            life.open.append((e["tid"], e["ts"], e["ip"]))
            life.kept = min(life.kept + 1, KEPT)
        elif e["ev"] == "put":
            if life.child_puts_due:
                life.child_puts_due -= 1
            else:
                give_back(life, 1, e, pid, hops)
        elif e["ev"] == "sub":
            give_back(life, e["v"], e, pid, hops)
        elif e["ev"] == "finish":
            parent = e.get("parent", "0x0")
            if int(parent, 16) and parent != e["cl"]:
                lives.setdefault((pid, parent), Life()).child_puts_due += 1
            del lives[key]
    return hops


def ns(ts):
    return round(ts * 1000)


def timeline_arrows(doc):
    """[(pid, from tid, from ns, to tid, to ns)] of the "reference" arrows."""
    starts, ends = {}, {}
    for ev in doc["traceEvents"]:
        if ev.get("name") == "reference" and ev.get("ph") in ("s", "f"):
            side = starts if ev["ph"] == "s" else ends
            side[ev["id"]] = (ev["pid"], ev["tid"], ns(ev["ts"]))
    return [starts[i] + ends[i][1:] for i in starts if i in ends], len(starts), len(ends)


def leaked_blames(doc):
    return [ev.get("args", {}).get("blame") for ev in doc["traceEvents"]
            if ev.get("ph") == "b" and ev.get("cat") == "closure.leaked"]


def option(name):
    if name not in sys.argv:
        return None
    i = sys.argv.index(name)
    value = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    return value


def main():
    want_hops, want_subs = option("--hops"), option("--subs")
    dropped, blame = int(option("--dropped") or 0), option("--blame")
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    hops = reference_hops(sys.argv[2])
    arrows, nstarts, nends = timeline_arrows(doc)
    problems = []
    if nstarts != nends or len(arrows) != nstarts:
        problems.append("%d reference arrow starts, %d ends, %d pairs" % (nstarts, nends,
                                                                         len(arrows)))
    said = doc.get("otherData", {}).get("arrows_not_drawn", 0)
    if said != dropped:
        problems.append("otherData.arrows_not_drawn is %r, expected %d" % (said, dropped))
    want = collections.Counter(h[:5] for h in hops)
    got = collections.Counter(arrows)
    if dropped:
        if len(arrows) != len(hops) - dropped or got - want:
            problems.append("%d reference arrows (%d not in the trace), expected %d - %d"
                            % (len(arrows), sum((got - want).values()), len(hops), dropped))
    else:
        for hop in sorted((want - got).keys())[:10]:
            problems.append("hop %s has no arrow" % (hop,))
        for arrow in sorted((got - want).keys())[:10]:
            problems.append("arrow %s is no hop of the trace" % (arrow,))
    subs = sum(h[5] == "sub" for h in hops)
    if want_hops is not None and len(hops) != int(want_hops):
        problems.append("the trace has %d hops, expected %s" % (len(hops), want_hops))
    if want_subs is not None and subs != int(want_subs):
        problems.append("the trace has %d hops given back by sub, expected %s" % (subs, want_subs))
    if blame is not None:
        blames = leaked_blames(doc)
        if not blames or not all(b and (b.startswith(blame + ": ") or ("/" + blame + ": ") in b)
                                 for b in blames):
            problems.append("LEAKED slices' blames %r do not name %s" % (blames, blame))
    if problems:
        for p in problems:
            print("FAIL: " + p)
        return 1
    print("ok: %d hops between threads (%d given back by put, %d by sub), %d reference arrows"
          % (len(hops), len(hops) - subs, subs, len(arrows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
