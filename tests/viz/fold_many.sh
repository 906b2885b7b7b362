#!/usr/bin/env bash
# Folding at scale, on generated traces (viz_tracegen):
# - 20 requests that each leak a bio: one request drawn with its children, the 19 others counted,
#   their 19 leaked bios in a red node of their own (a root cause never hides in an orange fold);
# - 2,000 finished requests: one counted node, whatever the number.
set -u
tool=$1 gen=$2
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1

"$gen" --closures 60 --fanout 2 --leak-every 1 >"$tmp/leaky.json"
"$tool" graph -T dot -i "$tmp/leaky.json" >"$tmp/leaky.dot" || fail "graph exit $?"
nodes=$(grep -cE '^	[cf][0-9]+	\[' "$tmp/leaky.dot")
[ "$nodes" = 5 ] || fail "leaky: $nodes nodes, expected 5 (request, its leaked and finished bio, ×19, their 19 leaks)"
grep -q 'label="×19 more like 0x7f0000100100#1\\nsubmit_request -> request_done\\ncontinuing at request_done on wq 0x7f00000a0000\\noldest alive 22.8 \\$' \
	"$tmp/leaky.dot" || fail "leaky: no '×19 more like' node"
grep -q '^µs at the end\\nkept alive by unfinished children\\n(+38 closures below)",$' "$tmp/leaky.dot" ||
	fail "leaky: the '×19 more like' node does not count the 38 closures below"
grep -q 'label="×19 LEAKED below them, first like 0x7f0000[0-9a-f]*#1\\nsubmit_bio\\ninit src/bio.c:10\\nLEAKED: holds 1 ref\\nblame: src/bio.c:30 bio_\\$' \
	"$tmp/leaky.dot" || fail "leaky: the 19 leaked bios are not drawn apart"
[ "$(grep -c 'fillcolor="#ffd8d8"' "$tmp/leaky.dot")" = 2 ] || fail "leaky: not 2 red nodes (the leak, the 19 leaks)"
"$tool" graph -T dot --no-fold -i "$tmp/leaky.json" >"$tmp/all.dot"
nodes=$(grep -cE '^	[cf][0-9]+	\[' "$tmp/all.dot")
[ "$nodes" = 60 ] || fail "--no-fold: $nodes nodes, expected 60"

"$gen" --closures 18000 --fanout 8 --leak-every 0 >"$tmp/fine.json"
"$tool" graph -T dot -i "$tmp/fine.json" >"$tmp/fine.dot"
nodes=$(grep -cE '^	[cf][0-9]+	\[' "$tmp/fine.dot")
[ "$nodes" = 1 ] || fail "finished: $nodes nodes, expected 1"
grep -q '×2000 submit_request -> request_done' "$tmp/fine.dot" || fail "finished: no ×2000 node"
grep -q '(+16000 closures below)' "$tmp/fine.dot" || fail "finished: children not counted"
exit $status
