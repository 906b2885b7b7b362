#!/usr/bin/env python3
"""docs/fleet.md shows each query of sql/fleet/ as closuretrace fleet runs it: every file's text,
verbatim, under a heading of its name; and no heading names a query that does not exist.
docs_check.py SOURCE_DIR"""
import glob
import os
import re
import sys

src = sys.argv[1]
doc = open(os.path.join(src, "docs", "fleet.md")).read()
bad = []
names = set()
for path in sorted(glob.glob(os.path.join(src, "sql", "fleet", "*.sql"))):
    name = os.path.basename(path)[:-4]
    names.add(name)
    text = open(path).read().rstrip("\n")
    if "### %s\n\n```sql\n%s\n```" % (name, text) not in doc:
        bad.append("docs/fleet.md does not show sql/fleet/%s.sql as it is" % name)
for heading in re.findall(r"^### (\S+)$", doc, re.M):
    if heading not in names:
        bad.append("docs/fleet.md names a query that sql/fleet/ does not have: " + heading)
if len(names) < 4:
    bad.append("sql/fleet/ has %d queries, not 4" % len(names))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
