#!/usr/bin/env python3
"""A trace of 1 M events converted in bounded memory.

    timeline_big.py CLOSURETRACE VIZ_TRACEGEN WORKDIR [BOUND_KB GROWTH_KB]

viz_tracegen writes traces of 250 k and 1 M events (requests with child bios, completed and
continued on other threads); closuretrace timeline converts each, its output read as it streams.
Asserted: every trace event became an instant, every slice begin has its end, every arrow start its
end, the summary line counts what was written; the peak RSS of the converter (VmHWM of
/proc/PID/status, read while it runs: getrusage of a child forked from Python counts Python's
image) stays under BOUND_KB (16 MiB) for 1 M events and grows by less than GROWTH_KB (2 MiB) from
250 k to 1 M events: memory follows the live closures, not the events (the output alone is
about 250 MiB).
"""
import os
import re
import subprocess
import sys

BOUND_KB = 16 * 1024
GROWTH_KB = 2 * 1024


def peak_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def convert(tool, trace):
    proc = subprocess.Popen([tool, "timeline", "-i", trace], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    counts = {}
    size = lines = maxrss = 0
    for line in proc.stdout:
        size += len(line)
        lines += 1
        if lines % 20000 == 0:
            maxrss = max(maxrss, peak_kb(proc.pid))
        m = re.match(rb'\{"ph":"(.)"', line)
        if m:
            ph = m.group(1).decode()
            counts[ph] = counts.get(ph, 0) + 1
    err = proc.stderr.read().decode()
    maxrss = max(maxrss, peak_kb(proc.pid))
    proc.wait()
    return proc.returncode, counts, size, maxrss, err


def main():
    global BOUND_KB, GROWTH_KB
    tool, gen, work = sys.argv[1:4]
    if len(sys.argv) == 6:
        BOUND_KB, GROWTH_KB = int(sys.argv[4]), int(sys.argv[5])
    fails = []
    rss = {}
    for n in (250000, 1000000):
        trace = os.path.join(work, "timeline_big_%d.json" % n)
        with open(trace, "w") as f:
            subprocess.run([gen, "--events", str(n)], stdout=f, check=True)
        events = 0
        with open(trace, "rb") as f:
            for line in f:
                if line.startswith(b'{"type":"event"'):
                    events += 1
        rc, counts, size, maxrss, err = convert(tool, trace)
        os.unlink(trace)
        rss[n] = maxrss
        total = sum(counts.values())
        print("%d trace events: exit %d, %d timeline events (%s), %.1f MiB out, max RSS %d KiB"
              % (events, rc, total, " ".join("%s=%d" % kv for kv in sorted(counts.items())),
                 size / 2**20, maxrss))
        if rc != 0:
            fails.append("exit status %d: %s" % (rc, err))
        if events < n or counts.get("i", 0) != events:
            fails.append("%d instants for %d trace events" % (counts.get("i", 0), events))
        if counts.get("b", 0) != counts.get("e", 0) or counts.get("b", 0) == 0:
            fails.append("slices: %d begins, %d ends" % (counts.get("b", 0), counts.get("e", 0)))
        if counts.get("s", 0) != counts.get("f", 0) or counts.get("s", 0) == 0:
            fails.append("arrows: %d starts, %d ends" % (counts.get("s", 0), counts.get("f", 0)))
        want = ("closuretrace timeline: wrote %d events (%d closure slices, %d operations, "
                "%d closure_sync slices, %d arrows) to standard output\n"
                % (total, counts.get("b", 0), counts.get("i", 0), counts.get("X", 0),
                   counts.get("s", 0)))
        if err != want:
            fails.append("stderr %r, expected %r" % (err, want))
    if rss[1000000] > BOUND_KB:
        fails.append("max RSS %d KiB for 1 M events, bound %d KiB" % (rss[1000000], BOUND_KB))
    if rss[1000000] - rss[250000] > GROWTH_KB:
        fails.append("max RSS grew by %d KiB from 250 k to 1 M events"
                     % (rss[1000000] - rss[250000]))
    for f in fails:
        print("FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
