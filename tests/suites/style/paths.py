#!/usr/bin/env python3
"""Every file path the sources and documents name exists: a comment or a page that says where a
thing lives says it truly, and a file that moves takes its mentions with it.
A path is FOLDER/.../FILE.EXT in the text of a C, shell, Python, CMake, Markdown, text or man page
file (not under .git or build*): one whose first folder is a folder of the tree, or of the folder
of the file that names it. It is found from the top of the tree or from that file's folder, and a
`*` in it as a glob. Not checked: a path inside <...> (a system header), after `/`, `$` or `}`
(under another folder: the build's, an install prefix's, a variable's), a placeholder (a
capitalised word such as NAME), and the few in NOT_OURS.
paths.py SOURCE_DIR: prints each mention of a path that does not exist and exits 1."""
import glob
import os
import re
import sys

SUFFIXES = (".c", ".h", ".sh", ".py", ".md", ".txt", ".1", ".cmake", ".in")
NAMES = ("CMakeLists.txt", "Makefile")
PATH = re.compile(r"(?<![\w./$}<-])((?:[\w*.-]+/)+[\w*.-]*\.\w+)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")
# Paths that are not of the source tree although their first folder is; each with why.
NOT_OURS = {
    # Where make install puts the CMake package (tests/suites/install/release.sh checks the prefix).
    "lib/cmake/closure/closuretrace.cmake",
}


def tree(src, d):
    """The folders of d that are the tree's: not hidden, and at the top not a build's."""
    return sorted(f for f in os.listdir(d) if os.path.isdir(os.path.join(d, f))
                  and not f.startswith(".") and not (d == src and f.startswith("build")))


def sources(src):
    """Each file whose text is checked, relative to src."""
    for root, dirs, files in os.walk(src):
        dirs[:] = tree(src, root)
        for f in sorted(files):
            if f.endswith(SUFFIXES) or f in NAMES:
                yield os.path.relpath(os.path.join(root, f), src)


def stale(src, rel, path, stems, tops):
    """True when path, named in rel, names no file of the tree."""
    if path in NOT_OURS:
        return False
    parts = path.split("/")
    if any(PLACEHOLDER.match(p.split(".")[0]) and p.split(".")[0] not in stems for p in parts):
        return False
    here = os.path.dirname(rel)
    bases = [""] if parts[0] in tops else []
    if here and parts[0] not in (".", "..") and os.path.isdir(os.path.join(src, here, parts[0])):
        bases.append(here)
    return bool(bases) and not any(glob.glob(os.path.join(src, b, path)) for b in bases)


def main():
    src = sys.argv[1]
    files = list(sources(src))
    stems = {os.path.basename(f).split(".")[0] for f in files}
    tops = tree(src, src)
    bad = []
    for rel in files:
        with open(os.path.join(src, rel), errors="replace") as f:
            for n, line in enumerate(f, 1):
                for m in PATH.finditer(line):
                    if stale(src, rel, m.group(1), stems, tops):
                        bad.append("%s:%d: %s does not exist" % (rel, n, m.group(1)))
    for b in bad:
        print(b)
    print("%d files read; %d paths named that do not exist" % (len(files), len(bad)))
    return 1 if bad else 0


sys.exit(main())
