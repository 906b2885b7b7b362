#!/usr/bin/env python3
"""Every JSON output holds the same string for the same hostile name (docs/trace-format.md,
"Strings and bytes that are not UTF-8"), and each is valid JSON.
  json_strings.py KIND FILE [KIND FILE]...
KIND: trace (the trace writer's: the bytes themselves, read back with surrogateescape), report
(--json), timeline, sarif, rows (export's, one JSON object a line), fleet-top-leaks and
fleet-first-leak-build (fleet --json). Each FILE is valid UTF-8 and valid JSON (strict: no raw
control character in a string); in every output but the trace, no string holds a character a
terminal obeys or a lone surrogate; the name is the text stderr shows for its bytes, SHOWN below,
written as the same JSON string in every output.
"""
import json
import sys

# test_json_string.c's hostile name.
HOSTILE = (b'q"b\\s' b"\x01\x1b[2J\x7f" b"\xc2\x85" b"\xe2\x80\xae" b"\xe9" b"\xc0\xaf"
           b"\xe0\x80\xaf" b"\xed\xa0\x80" b"\xed\xb3\xa9" b"\xf4\x90\x80\x80" b"\xff" b"\xe2\x82"
           b" caf\xc3\xa9 \xf0\x9f\x98\x80 " b"\\udce9 \\u001b" b"\t\n_end")
EXE = b"/opt/" + HOSTILE


def obeyed(o):
    """A character a terminal obeys or that reorders the text (trace_text.h)."""
    return (o < 0x20 or 0x7f <= o <= 0x9f or o in (0x61c, 0x200e, 0x200f)
            or 0x202a <= o <= 0x202e or 0x2066 <= o <= 0x2069)


def shown(data):
    """The text stderr shows for bytes: a byte that is not UTF-8 as \\udcXX, a character a
    terminal obeys as \\uXXXX, the rest itself (Python's strict UTF-8 decoder decides)."""
    out = []
    for ch in data.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xdc80 <= o <= 0xdcff or obeyed(o):
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    return "".join(out)


SHOWN, SHOWN_EXE = shown(HOSTILE), shown(EXE)
failures = 0


def check(what, ok, detail=""):
    global failures
    if ok:
        print("ok: %s" % what)
    else:
        print("FAIL %s%s" % (what, ": " + detail if detail else ""))
        failures += 1


def strings(v):
    """Every string in a JSON value, keys too."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)


def load(kind, path):
    """The file's JSON values (one document, or one a line)."""
    raw = open(path, "rb").read()
    text = raw.decode("utf-8")  # strict: the file is valid UTF-8
    if kind in ("report", "timeline", "sarif"):
        return text, [json.loads(text)]
    # Lines end at "\n" only: splitlines() would cut at the trace's raw U+0085 too.
    return text, [json.loads(line) for line in text.split("\n") if line]


def fields(kind, docs):
    """(where, value) of each string that is the name (or the program's path)."""
    got = []
    if kind == "report":
        d = docs[0]
        got += [("leaks[0].function", d["leaks"][0]["function"]),
                ("leaks[0].init.function", d["leaks"][0]["init"]["function"]),
                ("kinds[0].init.function", d["kinds"][0]["init"]["function"]),
                ("kinds[0].init.site", d["kinds"][0]["init"]["site"])]
    elif kind == "timeline":
        for e in docs[0]["traceEvents"]:
            if e["ph"] == "M" and e["name"] == "process_name":
                got.append(("process_name", e["args"]["name"]))
            if e["ph"] == "i" and e["name"] == "init":
                got.append(("init's site", e["args"]["site"]))
    elif kind == "sarif":
        r = docs[0]["runs"][0]["results"][0]
        for k in ("locations", "relatedLocations"):
            got.append((k, r[k][0]["logicalLocations"][0]["name"]))
    else:  # rows, fleet's
        for i, row in enumerate(docs):
            for key in ("function", "site", "program"):
                if key in row:
                    got.append(("row %d %s" % (i, key), row[key]))
    return got


def check_output(kind, path):
    try:
        text, docs = load(kind, path)
    except ValueError as e:
        check("%s: valid UTF-8 JSON" % kind, False, str(e))
        return
    check("%s: valid UTF-8 JSON (%d values)" % (kind, len(docs)), bool(docs))
    bad = sorted({"U+%04X" % ord(c) for d in docs for s in strings(d) for c in s
                  if obeyed(ord(c)) or 0xd800 <= ord(c) <= 0xdfff})
    check("%s: no control character or lone surrogate in a string" % kind, not bad,
          ", ".join(bad))
    got = fields(kind, docs)
    check("%s: the name is found" % kind, len(got) >= 2, repr(got))
    for where, value in got:
        want = SHOWN_EXE if where.endswith("program") else SHOWN
        check("%s: %s is the name as shown" % (kind, where), value == want,
              "%r, expected %r" % (value, want))
    # The same JSON string in every output: the text written, not only the value read back.
    token = json.dumps(SHOWN, ensure_ascii=False)
    check("%s: the name written as %s" % (kind, token[:24] + '..."'), token in text)


def check_trace(path):
    """The trace carries the bytes: read back with surrogateescape, they are the same."""
    try:
        _, docs = load("trace", path)
    except ValueError as e:
        check("trace: valid UTF-8 JSON", False, str(e))
        return
    header, sym = docs[0], docs[1]
    back = {"exe": header["exe"].encode("utf-8", "surrogateescape"),
            "cmd[1]": header["cmd"][1].encode("utf-8", "surrogateescape"),
            "func": sym["func"].encode("utf-8", "surrogateescape")}
    for key, want in (("exe", EXE), ("cmd[1]", HOSTILE), ("func", HOSTILE)):
        check("trace: %s reads back to the same bytes" % key, back[key] == want,
              "%r, expected %r" % (back[key], want))


args = sys.argv[1:]
for kind, path in zip(args[0::2], args[1::2]):
    if kind == "trace":
        check_trace(path)
    else:
        check_output(kind, path)
sys.exit(1 if failures else 0)
