#!/usr/bin/env python3
"""Run the bpftrace one-liner of docs/probes.md for real and check its counts against the demo's.

usage: bpftrace_counts.py static|shared BUILD_DIR SOURCE_DIR [BLOCKIO ARGS...]

The bpftrace program is taken from docs/probes.md ("A bpftrace one-liner") as written there; only
the ./build/ paths are replaced. It counts every closure probe that blockio fires, and the counts
must equal, probe by probe, the ones `blockio --counts` derives from its own bookkeeping.

static: blockio-static, every probe in one file, run with `bpftrace -c` as the document says.
shared: blockio and libclosure.so. bpftrace 0.17 cannot attach -c to a library that the process
has not loaded yet, so, as the document says, it attaches by path and the program runs afterwards.
Tracing by path sees every process that runs the file, so the test traces private copies of the
program and the library, used by no other process.

Exit 0 on a match, 1 on a mismatch, 77 when not root or BPF is unavailable (a failure when
CLOSURETRACE_NO_SKIP=1).
"""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROBES = ["init", "get", "put", "sub", "continue_at", "run", "finish", "destructor", "wait",
          "wake", "sync_begin", "sync_end"]
# Fired only while traced (module: twice per loaded object; batch: a buffer of records handed over
# while a tracer arms it) or on a broken rule (bug).
NOT_COUNTED = {"module", "batch"}
ATTACH_TIMEOUT_S = 300  # a bound on a hang, not a measurement (attach took >60 s at load 20)


def skip(reason):
    if os.environ.get("CLOSURETRACE_NO_SKIP") == "1":
        print(f"FAIL: {reason} (CLOSURETRACE_NO_SKIP=1)")
        sys.exit(1)
    print(f"SKIP: {reason}")
    sys.exit(77)


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def check_environment():
    if os.geteuid() != 0:
        skip("bpftrace needs root")
    for tool in ("bpftrace", "bpftool", "readelf"):
        if not shutil.which(tool):
            skip(f"{tool} is not installed (scripts/deps.sh)")
    probe = subprocess.run(["bpftrace", "-e", "BEGIN { exit(); }"], capture_output=True,
                           text=True, timeout=ATTACH_TIMEOUT_S)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        skip(f"BPF is unavailable: bpftrace says: {last}")


def one_liners(source_dir):
    """The -e programs of the bpftrace commands in the document's one-liner section."""
    path = os.path.join(source_dir, "docs", "probes.md")
    with open(path) as f:
        text = f.read()
    section = text.split("## A bpftrace one-liner", 1)
    if len(section) != 2:
        fail(f"{path}: no '## A bpftrace one-liner' section")
    programs = []
    for line in section[1].split("\n## ", 1)[0].splitlines():
        if line.startswith("bpftrace "):
            words = shlex.split(line)
            programs.append(words[words.index("-e") + 1])
    return programs


def the_program(programs, static):
    """The static one names blockio-static; the shared one names blockio and libclosure.so."""
    for program in programs:
        if ("blockio-static" in program) == static:
            return program
    fail(f"docs/probes.md has no bpftrace one-liner for the {'static' if static else 'shared'} demo")


def with_paths(program, paths):
    for written, real in paths.items():
        if written not in program:
            fail(f"the one-liner does not name {written}: {program}")
        program = program.replace(written, real)
    return program


def probe_sites(*files):
    """How many closure probe sites bpftrace attaches to in these files: one uprobe each."""
    out = subprocess.run(["readelf", "-n", *files], capture_output=True, text=True,
                         check=True).stdout
    return len(re.findall(r"Provider: closure\n\s+Name: \S+", out))


def uprobes_of(pid):
    out = subprocess.run(["bpftool", "-j", "perf", "list"], capture_output=True, text=True,
                         check=True).stdout
    return sum(1 for e in json.loads(out or "[]")
               if e.get("pid") == pid and e.get("fd_type") == "uprobe")


def wait_attached(bpftrace, sites):
    """Until bpftrace holds a uprobe on every site (it prints nothing when it is done)."""
    deadline = time.monotonic() + ATTACH_TIMEOUT_S
    while uprobes_of(bpftrace.pid) < sites:
        if bpftrace.poll() is not None:
            fail(f"bpftrace exited ({bpftrace.returncode}) before attaching")
        if time.monotonic() > deadline:
            bpftrace.kill()
            fail(f"bpftrace attached {uprobes_of(bpftrace.pid)} of {sites} probe sites "
                 f"after {ATTACH_TIMEOUT_S} s")
        time.sleep(0.05)


def bpftrace_counts(json_path):
    """{probe name: count}, summing the files a probe name occurs in."""
    counts = {}
    with open(json_path) as f:
        for line in f:
            record = json.loads(line)
            if record.get("type") != "map":
                continue
            for key, n in record["data"].get("@", {}).items():
                name = key.rsplit(":", 1)[1]
                counts[name] = counts.get(name, 0) + n
    return counts


def demo_counts(stdout):
    counts = {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] in PROBES and words[1].isdigit():
            counts[words[0]] = int(words[1])
    if list(counts) != PROBES:
        fail(f"blockio --counts printed {list(counts)}, not {PROBES}:\n{stdout}")
    return counts


def run_static(build, program, args, out_json):
    exe = os.path.join(build, "examples", "blockio-static")
    program = with_paths(program, {"./build/examples/blockio-static": exe})
    command = " ".join([exe, *args])
    result = subprocess.run(["bpftrace", "-f", "json", "-o", out_json, "-e", program, "-c",
                             command], capture_output=True, text=True, timeout=300)
    return result.stdout, result.stderr


def run_shared(build, program, args, out_json, tmp):
    # Private copies: the program, and the library under the name the program asks for.
    exe = shutil.copy(os.path.join(build, "examples", "blockio"), os.path.join(tmp, "blockio"))
    lib = shutil.copy(os.path.realpath(os.path.join(build, "lib", "libclosure.so")),
                      os.path.join(tmp, "libclosure.so.0"))
    program = with_paths(program, {"./build/examples/blockio:": exe + ":",
                                   "./build/lib/libclosure.so": lib})
    bpftrace = subprocess.Popen(["bpftrace", "-f", "json", "-o", out_json, "-e", program],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_attached(bpftrace, probe_sites(exe, lib))
    env = dict(os.environ, LD_LIBRARY_PATH=tmp)  # searched before the program's RUNPATH
    demo = subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=300)
    bpftrace.send_signal(signal.SIGINT)
    _, bt_err = bpftrace.communicate(timeout=ATTACH_TIMEOUT_S)
    if demo.returncode != 0:
        fail(f"blockio exited {demo.returncode}:\n{demo.stderr}")
    return demo.stdout, demo.stderr + bt_err


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("static", "shared"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, build, source, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    check_environment()
    program = the_program(one_liners(source), static=mode == "static")
    args = [*args, "--counts"]
    with tempfile.TemporaryDirectory(prefix="closuretrace-bpftrace-") as tmp:
        out_json = os.path.join(tmp, "bpftrace.json")
        if mode == "static":
            stdout, stderr = run_static(build, program, args, out_json)
        else:
            stdout, stderr = run_shared(build, program, args, out_json, tmp)
        # bpftrace 0.17 complains on detach where tracefs is not mounted; harmless here.
        stderr = "\n".join(line for line in stderr.splitlines()
                           if "uprobe_events" not in line and "failed to detach" not in line)
        if "Sanitizer" in stderr:
            fail(f"blockio failed under the sanitizer:\n{stderr}")
        if not os.path.exists(out_json) or not os.path.getsize(out_json):
            fail(f"bpftrace wrote no output:\n{stderr}")
        traced = bpftrace_counts(out_json)
    expected = demo_counts(stdout)
    print(f"one-liner (docs/probes.md): {program}")
    print(f"{'probe':<12} {'blockio':>8} {'bpftrace':>8}")
    mismatches = []
    for name in PROBES:
        print(f"{name:<12} {expected[name]:>8} {traced.get(name, 0):>8}")
        if traced.get(name, 0) != expected[name]:
            mismatches.append(name)
    unexpected = sorted(set(traced) - set(PROBES) - NOT_COUNTED)
    if unexpected:
        fail(f"probes that should not have fired: {', '.join(unexpected)}\n{stderr}")
    if mismatches:
        fail(f"bpftrace and blockio --counts differ on: {', '.join(mismatches)}\n{stderr}")
    print(f"PASS: {mode} {' '.join(args)}: bpftrace's counts equal blockio's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
