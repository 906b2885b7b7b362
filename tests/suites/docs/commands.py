#!/usr/bin/env python3
"""Every command shown in README.md and in the EXAMPLES sections of the man pages runs as shown.

usage: commands.py SOURCE_DIR BUILD_DIR

Commands are the lines of README's ```sh blocks, the "$ " lines of its ```console blocks, and the
lines of each man page's EXAMPLES section. Each runs in one scratch folder, in document order (a
record makes the trace the next report reads), with only these stand-ins: closuretrace is the
built one; ./app, ./io_test, ./blockio and build/examples/blockio the demo program; $(pidof ...)
a running examples/service (a CLOSURE_DEBUG build, so ps works); durations over a second one
second; an address a closure of the current trace; a trace named with -i that no command made
here, a copy of the newest. It must exit 0, or 1 for a check of a program
run with --leak, as the README's console block says. A command that cannot run here is in SKIP
with the test that covers it; a command neither run nor listed there fails the test, so a new one
in the docs is run from then on.
"""
import glob, os, re, shutil, subprocess, sys, tempfile

SKIP = {  # pattern of the command -> why it is not run here (and what runs it)
    r"^make (demo|test)\b": "the demo and the whole suite: CI runs both",
    r"^closuretrace (export|fleet)\b|--export ": "needs a ClickHouse server: fleet_single runs these",
    r"^bpftrace ": "tests/suites/probes runs the bpftrace lines of docs/probes.md "
                   "(README's must be among them)",
    r"^\./build/examples/blockio --requests 100$": "the other half of the bpftrace example",
    r"^closuretrace top -p ": "interactive: cli_top_interactive_* drive it in a terminal",
    r"^echo \$\?$": "the console block's status, checked with the check before it",
}


def man_examples(path):
    text = open(path).read()
    m = re.search(r"^\.SH EXAMPLES?\n(.*?)(?=^\.SH |\Z)", text, re.S | re.M)
    if not m:
        return []
    lines = []
    for line in m.group(1).splitlines():
        if line.startswith(".") or not line.strip():
            continue
        line = line.replace("\\-", "-").replace("\\(aq", "'").replace("\\e", "\\")
        if re.match(r"^(closuretrace|bpftrace|make|cmake|ctest) ", line):
            lines.append(line)
    return lines


def readme_commands(path):
    out, block = [], None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("```"):
            block = None if block else line[3:].strip()
            continue
        if block == "sh":
            out.append(line)
        elif block == "console" and line.startswith("$ "):
            out.append(line[2:])
    return [re.sub(r"\s+#.*$", "", l).strip() for l in out if l.strip()]


def main():
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    ct = os.path.join(build, "cli", "closuretrace")
    demo = os.path.join(build, "examples", "blockio")
    docs = [("README.md", readme_commands(os.path.join(src, "README.md")))]
    for page in sorted(glob.glob(os.path.join(src, "docs", "*.1"))):
        docs.append((os.path.relpath(page, src), man_examples(page)))
    probes_md = open(os.path.join(src, "docs", "probes.md")).read()

    if os.geteuid() != 0:
        if os.environ.get("CLOSURETRACE_NO_SKIP") == "1":
            print("FAIL: not root and CLOSURETRACE_NO_SKIP=1")
            return 1
        print("SKIP: record and top need root")
        return 77
    failures = list_help(ct, demo)
    tmp = tempfile.mkdtemp()
    service = subprocess.Popen([os.path.join(build, "examples", "service"), "--rate", "200"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ran, skipped = 0, 0
    try:
        for doc, commands in docs:
            for cmd in commands:
                why = next((w for p, w in SKIP.items() if re.search(p, cmd)), None)
                if cmd.startswith("bpftrace ") and cmd not in probes_md:
                    failures.append(f"{doc}: {cmd}: not one of docs/probes.md's tested one-liners")
                if why:
                    skipped += 1
                    continue
                run = cmd
                run = re.sub(r"(^|(?<=[ (]))closuretrace\b", ct, run)
                run = re.sub(r"(\./)?build/examples/blockio\b|\./app\b|\./io_test\b|\./blockio\b", demo, run)
                run = re.sub(r"\$\(pidof [a-z_]+\)", str(service.pid), run)
                run = re.sub(r"(--duration|-d) ([2-9]|[1-9][0-9]+)\b", r"\1 1", run)
                if re.search(r"0x[0-9a-f]{6,}", run):
                    addr = first_closure(tmp)
                    run = re.sub(r"0x[0-9a-f]{6,}(#[0-9]+)?", addr or "0x0", run)
                for named in re.findall(r"-i (\S+)", run):  # a trace a page names, made here
                    newest = newest_trace(tmp)
                    if newest and not os.path.exists(os.path.join(tmp, named)):
                        shutil.copy(newest, os.path.join(tmp, named))
                want = 1 if re.search(r"\bcheck\b.*--leak", cmd) else 0
                r = subprocess.run(["bash", "-o", "pipefail", "-c", run], cwd=tmp, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
                ran += 1
                if r.returncode != want:
                    failures.append(f"{doc}: {cmd}\n  ran: {run}\n  exit {r.returncode}, expected {want}: "
                                    f"{r.stderr.decode(errors='replace')[-800:]}")
                else:
                    print(f"ok: {doc}: {cmd}")
    finally:
        service.kill()
        service.wait()
        shutil.rmtree(tmp)
    if ran < 20:
        failures.append(f"only {ran} commands found and run: the extraction is broken")
    for f in failures:
        print("FAIL:", f)
    print(f"{ran} commands run, {skipped} covered elsewhere (SKIP), {len(failures)} failed")
    return 1 if failures else 0


def list_help(ct, demo):
    """list --help says what -v adds, and -v adds exactly that."""
    help_text = subprocess.run([ct, "list", "--help"], capture_output=True, text=True).stdout
    plain = subprocess.run([ct, "list", demo], capture_output=True, text=True).stdout.splitlines()
    verbose = subprocess.run([ct, "list", "-v", demo], capture_output=True, text=True).stdout.splitlines()
    extra = [l for l in verbose if l not in plain]
    if "the address of its first site" not in help_text:
        return [f"list --help does not say what -v adds: {help_text}"]
    if len(extra) != len(plain) or not all(re.match(r"^    first site 0x[0-9a-f]+ semaphore 0x[0-9a-f]+$", l) for l in extra):
        return [f"list -v adds other than one 'first site ... semaphore ...' line per probe: {extra[:3]}"]
    print(f"ok: list --help: -v adds the first site and semaphore of each of {len(plain)} probes")
    return []


def traces(folder):
    """The traces written in folder, newest first (not the timelines)."""
    found = [t for t in glob.glob(os.path.join(folder, "*.json")) if "timeline" not in t
             and '"cl":"' in open(t, errors="replace").read(1 << 20)]
    return sorted(found, key=os.path.getmtime, reverse=True)


def newest_trace(folder):
    found = traces(folder)
    return found[0] if found else None


def first_closure(folder):
    """A closure of the newest trace in folder."""
    for t in traces(folder):
        m = re.search(r'"cl":"(0x[0-9a-f]+)"', open(t, errors="replace").read(1 << 20))
        if m:
            return m.group(1)
    return None


if __name__ == "__main__":
    sys.exit(main())
