#!/usr/bin/env bash
# Pictures that stay readable at any size (issue 11, item 3), on generated recordings that stopped
# while the process ran:
# - 50,000 closures in flight under 4 requests draw 5 nodes: unfinished siblings alike (kind,
#   verdict, state) fold as finished ones do (×N, oldest age), one request drawn with its tree and
#   "×3 more like" it; the picture is small (PNG under 3000 x 3000 px);
# - 30 closures of 30 kinds at the top, the first with 30 children of 30 kinds: 12 drawn per
#   level, the rest in a "+18 more" node, and levels of more than 6 in rows of 4.
#   readable.sh CLOSURETRACE GEN_HOSTILE_PY
set -u
tool=$1 gen=$2
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1
nodes() { grep -cE '^	[cf][0-9]+	\[' "$1"; }

python3 "$gen" busy 50000 >"$tmp/busy.json"
"$tool" graph -T dot -i "$tmp/busy.json" >"$tmp/busy.dot" || fail "graph busy: exit $?"
[ "$(nodes "$tmp/busy.dot")" = 5 ] || fail "busy: $(nodes "$tmp/busy.dot") nodes, expected 5"
for want in \
	'label="submit_request -> request_done\ninit busy.c:20\n41:0x100000#1\ncontinuing at request_done on wq 0x7000\nalive 501.0 µs at the end\nin flight (the recording was cut short)"' \
	'label="×6250 submit_bio\ninit busy.c:40\nrunning\noldest alive 500.0 µs at the end\nin flight (the recording was cut short)"' \
	'label="×6250 submit_bio -> bio_done\ninit busy.c:40\ncontinuing at bio_done on wq 0x7000\noldest alive 500.0 µs at the end\nin flight (the recording was cut short)"' \
	'label="×100 submit_bio\ninit busy.c:40\nfinished, p50 5 ns, max 5 ns"' \
	'label="×3 more like 41:0x100000#1\nsubmit_request -> request_done\ncontinuing at request_done on wq 0x7000\noldest alive 501.0 µs at the end\nin flight (the recording was cut short)\n(+37500 closures below)"'; do
	# dot continues long strings on the next line after a backslash
	python3 -c 'import sys; print(open(sys.argv[1]).read().replace("\\\n", ""))' "$tmp/busy.dot" |
		grep -qF "$want" || fail "busy: no node $want"
done
# In flight is drawn apart from leaks: blue, not red.
grep -q 'color="#3465a4"' "$tmp/busy.dot" || fail "busy: no in-flight (blue) node"
"$tool" graph -T png -i "$tmp/busy.json" -o "$tmp/busy.png" || fail "graph -T png busy: exit $?"
read -r w h < <(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack(">II", d[16:24]))' "$tmp/busy.png")
[ "$w" -lt 3000 ] && [ "$h" -lt 3000 ] || fail "busy: a ${w}x${h} px picture"

python3 "$gen" wide 30 >"$tmp/wide.json"
"$tool" graph -T dot -i "$tmp/wide.json" >"$tmp/wide.dot" || fail "graph wide: exit $?"
[ "$(nodes "$tmp/wide.dot")" = 26 ] || fail "wide: $(nodes "$tmp/wide.dot") nodes, expected 26"
[ "$(grep -cF 'label="+18 more closures here\n--no-fold draws every one"' "$tmp/wide.dot")" = 2 ] ||
	fail "wide: expected two '+18 more' nodes"
# Two levels of 13 nodes in rows of 4: 9 invisible edges each rank the rows.
[ "$(grep -c 'style=invis' "$tmp/wide.dot")" = 18 ] ||
	fail "wide: $(grep -c 'style=invis' "$tmp/wide.dot") row edges, expected 18"
exit $status
