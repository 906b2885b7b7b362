#!/usr/bin/env python3
"""What the probes of a library are in one process, read from its memory:

    probe_state.py PID LIBRARY

prints "semaphores R raised of N, breakpoints B of S sites": the USDT semaphores of LIBRARY's
closure probes that are not 0 in process PID, and the probe sites that hold a breakpoint (int3)
there. The sites and semaphores are the ELF notes' (readelf -n), placed at the library's load
address in /proc/PID/maps; the values are read from /proc/PID/mem."""
import os
import re
import subprocess
import sys


def notes(library):
    """(site, semaphore) link-time addresses of each closure probe site of library."""
    out = subprocess.run(["readelf", "-n", library], check=True, capture_output=True,
                         text=True).stdout
    sites, provider = [], None
    for line in out.splitlines():
        m = re.match(r"\s*Provider: (\S+)", line)
        if m:
            provider = m.group(1)
        m = re.match(r"\s*Location: (0x[0-9a-f]+), Base: 0x[0-9a-f]+, Semaphore: (0x[0-9a-f]+)",
                     line)
        if m and provider == "closure":
            sites.append((int(m.group(1), 16), int(m.group(2), 16)))
    return sites


def load_base(pid, library):
    """Where the library's first page is mapped in process pid."""
    real = os.path.realpath(library)
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == real and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16)
    sys.exit(f"probe_state.py: {real} is not mapped in process {pid}")


def main():
    pid, library = int(sys.argv[1]), sys.argv[2]
    sites = notes(library)
    base = load_base(pid, library)
    semaphores = sorted({sem for _, sem in sites if sem})
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        def read(addr, n):
            mem.seek(base + addr)
            return mem.read(n)
        raised = sum(int.from_bytes(read(sem, 2), "little") != 0 for sem in semaphores)
        traps = sum(read(site, 1) == b"\xcc" for site, _ in sites)
    print(f"semaphores {raised} raised of {len(semaphores)}, "
          f"breakpoints {traps} of {len(sites)} sites")


main()
