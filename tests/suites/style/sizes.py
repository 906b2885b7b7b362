#!/usr/bin/env python3
"""The sizes the project keeps (docs/design.md, "Sizes"): no product function over 80 lines, no
product file over 800. Product code is the C of lib/, bpf/, process/, recorder/, trace/, viz/,
cli/ and common/ (not tests/, examples/ or the benchmarks). A function is counted in the kernel's layout,
which clang-format keeps: its opening brace alone at the start of a line, its closing brace alone
at the start of a line; its length is the lines between them, as clang-tidy's
readability-function-size counts them.
sizes.py SOURCE_DIR [--list]: prints each one over its limit and exits 1 (--list: every function
of 60 lines or more, longest first, and exits 0)."""
import os
import re
import sys

FUNCTION_MAX = 80
FILE_MAX = 800
DIRS = ("lib", "bpf", "process", "recorder", "trace", "viz", "cli", "common")
# Files kept over FILE_MAX, each with why; the list may only shrink.
FILE_EXCEPTIONS = {
    # The installed API: the comment that teaches closures comes first, then every declaration
    # with its contract; the newest kernel API (CLASS(closure_stack), issue 22) took it to 843.
    # Splitting it is a change of the public header, left to its owner (issue 20's note).
    "lib/include/closure.h": 900,
}


def functions(path):
    """(name, first line of the body, number of lines of the body) of each function of path."""
    lines = open(path, errors="replace").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            # The head ends on the line before; its name is the identifier before the first "("
            # of the head's first line (a head may run over several lines).
            j = i - 1
            while j > 0 and not re.match(r"^[A-Za-z_]", lines[j]):
                j -= 1
            m = re.match(r"^[^(]*?\b(\w+)\s*\(", lines[j])
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            if m:
                out.append((m.group(1), i + 2, k - i - 1))
            i = k
        i += 1
    return out


def main():
    src = sys.argv[1]
    listing = "--list" in sys.argv
    bad, rows = [], []
    for d in DIRS:
        for root, _, files in os.walk(os.path.join(src, d)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(root, f)
                rel = os.path.relpath(path, src)
                n = open(path, errors="replace").read().count("\n")
                if n > FILE_EXCEPTIONS.get(rel, FILE_MAX):
                    bad.append("%s: %d lines, over %d" % (rel, n, FILE_EXCEPTIONS.get(rel, FILE_MAX)))
                for name, line, length in functions(path):
                    rows.append((length, rel, line, name))
                    if length > FUNCTION_MAX:
                        bad.append("%s:%d: %s() is %d lines, over %d"
                                   % (rel, line, name, length, FUNCTION_MAX))
    if listing:
        for length, rel, line, name in sorted(rows, reverse=True):
            if length >= 60:
                print("%4d %s:%d %s" % (length, rel, line, name))
        return 0
    for b in bad:
        print(b)
    print("%d functions and their files read; %d over the limits" % (len(rows), len(bad)))
    return 1 if bad else 0


sys.exit(main())
