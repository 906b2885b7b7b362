#!/usr/bin/env python3
"""fleet prints what the server answers shown as every name is (issue 38 item 3): a fake
ClickHouse server on 127.0.0.1 answers rows whose names hold ESC, BEL, a lone 0x9b (an 8-bit CSI),
bytes 0x80-0x9f, C1 as UTF-8, U+202E and a byte that is not UTF-8, as a server that stored a
hostile program's export would. The table, the --json rows (sent in pieces cut inside a row and
inside a character) and the server's error message reach the terminal as \\uXXXX and \\udcXX
escapes, exactly, with no raw control, C1 or bidi byte.
  answers_test.py CLOSURETRACE
"""
import http.server
import json
import subprocess
import sys
import threading
import time
import urllib.parse

CT = sys.argv[1]
HOSTILE = b"evil\x1b]2;PWNED\x07\x9b[2J\x85\xe2\x80\xae\xc2\x9b\xff.c"
SHOWN = r"evil\u001b]2;PWNED\u0007\udc9b[2J\udc85\u202e\u009b\udcff.c"
TSV = b"site\tclosures\n" + HOSTILE + b":3\t7\nplain.c:9\t12\n"
ROWS = (b'{"site":"' + HOSTILE + b':3","closures":7}\n'
        b'{"site":"\xe2\x80\xae\\u001b","closures":12}\n')
ERROR = b"Code: 60. DB::Exception: Table fleet.\x1b[31m\x9b\xe2\x80\xae doesn't exist.\n"
failures = 0


class Server(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        sql, db = q.get("query", [""])[0], q.get("database", [""])[0]
        if db == "broken":
            self.send_response(500)
            self.send_header("Content-Length", str(len(ERROR)))
            self.end_headers()
            self.wfile.write(ERROR)
            return
        if "JSONEachRow" not in sql:
            self.send_response(200)
            self.send_header("Content-Length", str(len(TSV)))
            self.end_headers()
            self.wfile.write(TSV)
            return
        # In pieces: one cut inside the first row, one inside U+202E's three bytes.
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        cut = ROWS.index(b"\xe2\x80\xae", 40) + 1
        for piece in (ROWS[:20], ROWS[20:cut], ROWS[cut:]):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            time.sleep(0.05)
        self.wfile.write(b"0\r\n\r\n")


def raw_bytes(data):
    """What a terminal could obey: C0 but newline, DEL, C1, bidi controls, bytes not UTF-8."""
    bad = []
    for ch in data.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if ((o < 0x20 and ch != "\n") or 0x7f <= o <= 0x9f or 0xdc80 <= o <= 0xdcff
                or o in (0x61c, 0x200e, 0x200f) or 0x202a <= o <= 0x202e
                or 0x2066 <= o <= 0x2069):
            bad.append("U+%04X" % o if o < 0xdc80 else "byte 0x%02x" % (o & 0xff))
    return bad


def run(what, args, want_rc, want_out, want_err):
    global failures
    p = subprocess.run([CT, "fleet"] + args, capture_output=True, timeout=60)
    ok = True
    for name, data in (("stdout", p.stdout), ("stderr", p.stderr)):
        bad = raw_bytes(data)
        if bad:
            print("FAIL %s: raw on %s: %s" % (what, name, ", ".join(bad)))
            ok = False
    got_out = p.stdout.decode("utf-8", "surrogateescape")
    got_err = p.stderr.decode("utf-8", "surrogateescape")
    if p.returncode != want_rc:
        print("FAIL %s: exit %d, expected %d" % (what, p.returncode, want_rc))
        ok = False
    if got_out != want_out:
        print("FAIL %s: stdout %r, expected %r" % (what, got_out, want_out))
        ok = False
    if got_err != want_err:
        print("FAIL %s: stderr %r, expected %r" % (what, got_err, want_err))
        ok = False
    if ok:
        print("ok: %s" % what)
    else:
        failures += 1
    return got_out


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d/fleet" % srv.server_address[1]

# The table: columns as wide as what is shown.
width = len(SHOWN) + 2
run("table", ["top-leaks", "--from", url], 0,
    "site".ljust(width) + "  closures\n"
    + (SHOWN + ":3").ljust(width) + "         7\n"
    + "plain.c:9".ljust(width) + "        12\n", "")

# --json: each row whole and shown; in JSON each escape means its character again, and the byte
# that is not UTF-8 reads as the trace's \udcXX.
out = run("--json rows in pieces", ["top-leaks", "--from", url, "--json"], 0,
          '{"site":"%s:3","closures":7}\n{"site":"\\u202e\\u001b","closures":12}\n' % SHOWN,
          "")
try:
    rows = [json.loads(line) for line in out.splitlines()]
except ValueError as e:
    rows = "not JSON: %s" % e
want = [{"site": HOSTILE.decode("utf-8", "surrogateescape") + ":3", "closures": 7},
        {"site": "\u202e\u001b", "closures": 12}]
if rows != want:
    print("FAIL --json: rows read back %r, expected %r" % (rows, want))
    failures += 1
else:
    print("ok: --json rows read back as the server's, each character itself")

# The server's own message.
broken = url.replace("/fleet", "/broken")
run("server error", ["top-leaks", "--from", broken], 3, "",
    "closuretrace fleet: %s: the server answered HTTP 500: Code: 60. DB::Exception: Table "
    "fleet.\\u001b[31m\\udc9b\\u202e doesn't exist.\n" % broken)
# The same with --json: the message on stderr, nothing of it on stdout among the rows.
run("server error, --json", ["top-leaks", "--from", broken, "--json"], 3, "",
    "closuretrace fleet: %s: the server answered HTTP 500: Code: 60. DB::Exception: Table "
    "fleet.\\u001b[31m\\udc9b\\u202e doesn't exist.\n" % broken)
srv.shutdown()
sys.exit(1 if failures else 0)
