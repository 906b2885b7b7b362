#!/usr/bin/env python3
"""Checks a closuretrace timeline against the Chrome trace-event format, as its viewers read it.

    timeline_check.py TIMELINE [TRACE] [--flows NAME=N,...] [--hops]

- the object form: {"traceEvents": [...]}, every event with ph, name, pid, tid (ts but for "M");
- ts in microseconds with at most three decimals (a whole number of ns);
- every async begin "b" has one end "e" (same cat, name, id, pid), not before it;
- every flow start "s" has one end "f" (same cat, name, id: what Perfetto pairs them by), not
  before it; each binds to an instant event of the same cat on the same pid, tid and ts written
  before it (the binding point Perfetto and DevTools use), and "f" binds to it ("bp":"e": the
  enclosing slice, the instant; without it both viewers bind to the next slice instead); a flow
  id is used by one flow only (chrome://tracing pairs by cat and id, Perfetto by cat, name and
  id); every arrow but "child finished" is a hop between threads (its ends on different tids of
  one process);
- with --flows: exactly N arrows of each NAME given, and none of any other name;
- with --hops and TRACE: as many "continued", "woken" and "reference" arrows as the trace has
  hops of each kind, counted here from its events in time order: a continue_at (how continue_at
  or nobarrier) and the next run of that closure on another thread; a wait and the next wake of it
  on another thread; a get and the put or sub that gives it back on another thread, paired as
  the model pairs them (timeline_refs.py);
- complete events "X" have dur >= 0; instant events are thread-scoped ("s":"t") and in time
  order on each thread; every thread and process used is named ("M");
- with TRACE (the closuretrace JSON Lines input): one instant per trace event, same thread,
  same op, same time in ns.
Prints a one-line summary and exits 0, or prints every problem and exits 1.
"""
import collections
import json
import sys

from timeline_refs import reference_hops

problems = []
flow_names = collections.Counter()


def bad(msg):
    if len(problems) < 50:
        problems.append(msg)


def ns_of(ts):
    ns = round(ts * 1000)
    if abs(ts * 1000 - ns) > 1e-3 * max(1.0, abs(ts)) * 1e-6 + 1e-6:
        return None
    return ns


def check(events):
    begins, ends = {}, collections.Counter()
    starts, finishes = {}, {}
    instants_at = set()  # (cat, pid, tid, ns) of instants written so far
    last_instant = {}
    used, named_threads, named_procs = set(), set(), set()
    counts = collections.Counter()
    ends_of = collections.defaultdict(list)
    flow_ids = set()
    for n, ev in enumerate(events):
        ph = ev.get("ph")
        counts[ph] += 1
        where = "event %d (%s %r)" % (n, ph, ev.get("name"))
        for key in ("name", "pid", "tid"):
            if key not in ev:
                bad("%s: no %s" % (where, key))
        if not isinstance(ev.get("pid"), int) or not isinstance(ev.get("tid"), int):
            bad("%s: pid and tid must be integers" % where)
        if ph == "M":
            if ev["name"] == "thread_name":
                named_threads.add((ev["pid"], ev["tid"]))
            elif ev["name"] == "process_name":
                named_procs.add(ev["pid"])
            if not isinstance(ev.get("args", {}).get("name"), str):
                bad("%s: metadata without args.name" % where)
            continue
        ts = ev.get("ts")
        if not isinstance(ts, (int, float)):
            bad("%s: ts is not a number" % where)
            continue
        ns = ns_of(ts)
        if ns is None:
            bad("%s: ts %r is not a whole number of ns in µs" % (where, ts))
            continue
        ev["_ns"] = ns
        place = (ev["pid"], ev["tid"])
        used.add(place)
        if ph == "b":
            key = (ev.get("cat"), ev["name"], ev.get("id"), ev["pid"])
            if key in begins:
                bad("%s: a second begin for id %s" % (where, ev.get("id")))
            begins[key] = ns
        elif ph == "e":
            key = (ev.get("cat"), ev["name"], ev.get("id"), ev["pid"])
            if key not in begins:
                bad("%s: end without begin (id %s)" % (where, ev.get("id")))
            elif ns < begins[key]:
                bad("%s: ends before it begins" % where)
            ends[key] += 1
        elif ph == "X":
            dur = ev.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0 or ns_of(dur) is None:
                bad("%s: bad dur %r" % (where, dur))
        elif ph == "i":
            if ev.get("s") != "t":
                bad("%s: instant not thread-scoped" % where)
            if ns < last_instant.get(place, ns):
                bad("%s: instant out of time order on thread %s" % (where, place))
            last_instant[place] = ns
            instants_at.add((ev.get("cat"), ev["pid"], ev["tid"], ns))
        elif ph in ("s", "f"):
            key = (ev.get("cat"), ev["name"], ev.get("id"))
            table = starts if ph == "s" else finishes
            if key in table:
                bad("%s: a second flow %s for id %s" % (where, ph, ev.get("id")))
            table[key] = ns
            ends_of[key].append((ph, ev["pid"], ev["tid"]))
            if ph == "s":
                flow_names[ev["name"]] += 1
                if (ev.get("cat"), ev.get("id")) in flow_ids:
                    bad("%s: flow id %s used by two flows" % (where, ev.get("id")))
                flow_ids.add((ev.get("cat"), ev.get("id")))
            if ph == "s" and "bp" in ev:
                bad("%s: flow start with a \"bp\"" % where)
            if (ev.get("cat"), ev["pid"], ev["tid"], ns) not in instants_at:
                bad("%s: flow binds to nothing (no instant of its cat at pid %s tid %s ts %s)"
                    % (where, ev["pid"], ev["tid"], ts))
            if ph == "f" and ev.get("bp") != "e":
                bad("%s: flow end without \"bp\":\"e\"" % where)
        else:
            bad("%s: unexpected phase" % where)
    for key in begins:
        if ends[key] != 1:
            bad("begin %r has %d ends" % (key, ends[key]))
    for key, ns in starts.items():
        if key not in finishes:
            bad("flow %r starts and never ends" % (key,))
        elif finishes[key] < ns:
            bad("flow %r ends before it starts" % (key,))
    for key in finishes:
        if key not in starts:
            bad("flow %r ends and never starts" % (key,))
    for key, ends in ends_of.items():
        # "child finished" points at the parent's next step, wherever it is; the rest are hops.
        if len(ends) == 2 and key[1] != "child finished" and (
                ends[0][1] != ends[1][1] or ends[0][2] == ends[1][2]):
            bad("flow %r is no hop between threads of one process: %r" % (key, ends))
    for place in sorted(used):
        if place not in named_threads:
            bad("thread %s has no thread_name" % (place,))
        if place[0] not in named_procs:
            bad("process %s has no process_name" % place[0])
    return counts


# The ops of the trace format; readers skip others, and so does the timeline.
OPS = {"init", "get", "put", "sub", "continue_at", "run", "finish", "destructor", "wait", "wake",
       "sync_begin", "sync_end", "bug", "destroy"}


def compare_with_trace(events, trace_path):
    header_pid = None
    want = collections.Counter()
    with open(trace_path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                break  # a cut-short last line
            if rec.get("type") == "header":
                header_pid = rec.get("pid")
            elif rec.get("type") == "event" and rec.get("ev") in OPS:
                want[(rec.get("pid") or header_pid, rec["tid"], rec["ev"], rec["ts"])] += 1
    got = collections.Counter((e["pid"], e["tid"], e["name"], e["_ns"])
                              for e in events if e.get("ph") == "i" and "_ns" in e)
    for key in sorted((want - got).keys()):
        bad("trace event %s has no instant" % (key,))
    for key in sorted((got - want).keys()):
        bad("instant %s is no trace event" % (key,))


def trace_hops(trace_path):
    """The hops between threads that the trace's events make, by arrow name."""
    recs = []
    with open(trace_path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            try:
                rec = json.loads(line)
            except ValueError:
                break
            if rec.get("type") == "event" and rec.get("ev") in OPS:
                recs.append((rec["ts"], n, rec))
    recs.sort(key=lambda r: (r[0], r[1]))
    hops, lives = collections.Counter(), {}
    for _, _, e in recs:
        key = (e.get("pid"), e["cl"])
        if e["ev"] == "init":
            lives[key] = {"cont": None, "wait": None}
        life = lives.setdefault(key, {"cont": None, "wait": None})
        tid, ev = e["tid"], e["ev"]
        if ev == "continue_at":
            life["cont"] = tid if e.get("how") in ("continue_at", "nobarrier") else None
        elif ev == "run":
            hops["continued"] += life["cont"] is not None and life["cont"] != tid
            life["cont"] = None
        elif ev == "wait":
            life["wait"] = tid
        elif ev == "wake":
            hops["woken"] += life["wait"] is not None and life["wait"] != tid
            life["wait"] = None
    hops["reference"] = len(reference_hops(trace_path))
    return hops


def check_hops(trace_path):
    want = trace_hops(trace_path)
    for name in ("continued", "woken", "reference"):
        if flow_names[name] != want[name]:
            bad("%d %r arrows, but the trace has %d such hops" % (flow_names[name], name,
                                                                 want[name]))


def check_flow_counts(spec):
    want = {}
    for item in spec.split(","):
        name, _, n = item.partition("=")
        want[name] = int(n)
    for name in sorted(set(want) | set(flow_names)):
        if flow_names[name] != want.get(name, 0):
            bad("%d %r arrows, expected %d" % (flow_names[name], name, want.get(name, 0)))


def main():
    flows = None
    hops = "--hops" in sys.argv
    if hops:
        sys.argv.remove("--hops")
    if "--flows" in sys.argv:
        i = sys.argv.index("--flows")
        if i + 1 >= len(sys.argv):
            print(__doc__, file=sys.stderr)
            return 2
        flows = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("%s: not JSON: %s" % (sys.argv[1], e))
        return 1
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print("%s: not the object form {\"traceEvents\": [...]}" % sys.argv[1])
        return 1
    events = doc["traceEvents"]
    counts = check(events)
    if len(sys.argv) == 3:
        compare_with_trace(events, sys.argv[2])
    if flows is not None:
        check_flow_counts(flows)
    if hops and len(sys.argv) == 3:
        check_hops(sys.argv[2])
    if problems:
        for p in problems:
            print("FAIL: " + p)
        return 1
    print("ok: %d events: %d slices, %d instants, %d closure_sync, %d arrows, %d names; arrows: %s"
          % (len(events), counts["b"], counts["i"], counts["X"], counts["s"], counts["M"],
             ", ".join("%s %d" % kv for kv in sorted(flow_names.items())) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
