#!/usr/bin/env bash
# Folding at scale, on generated traces (viz_tracegen):
# - 20 requests that each leak a bio: the 20 requests counted in one orange node, their 20 leaked
#   bios in one red node of their own (a root cause never hides in an orange fold, nor is one of
#   them drawn apart from the others);
# - 2,000 finished requests: one counted node, whatever the number;
# - 150,000 closures, one request in 1,000 leaking: graph keeps only a sample of the finished
#   ones (issue 37: memory follows what is alive), its peak RSS under RSS_KB, and its counts add
#   up to every closure of the trace, as report counts them.
#   fold_many.sh CLOSURETRACE VIZ_TRACEGEN [RSS_KB]
set -u
tool=$1 gen=$2 rss_kb=${3:-49152}
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1

"$gen" --closures 60 --fanout 2 --leak-every 1 >"$tmp/leaky.json"
"$tool" graph -T dot -i "$tmp/leaky.json" >"$tmp/leaky.dot" || fail "graph exit $?"
nodes=$(grep -cE '^	[cf][0-9]+	\[' "$tmp/leaky.dot")
[ "$nodes" = 2 ] || fail "leaky: $nodes nodes, expected 2 (×20 requests, their 20 leaks)"
grep -q 'label="×20 submit_request -> request_done\\ninit src/req.c:20\\ncontinuing at request_done on wq 0x7f00000a0000\\noldest alive 24.0 µs at \\$' \
	"$tmp/leaky.dot" || fail "leaky: no '×20 submit_request' node"
grep -q '^the end\\nkept alive by unfinished children\\n(+40 closures below)",$' "$tmp/leaky.dot" ||
	fail "leaky: the '×20' node does not count the 40 closures below"
grep -q 'label="×20 LEAKED below them, first like 4242:0x7f0000[0-9a-f]*#1\\nsubmit_bio\\ninit src/bio.c:10\\nLEAKED: holds 1 ref\\nblame: src/bio.c:30 \\$' \
	"$tmp/leaky.dot" || fail "leaky: the 20 leaked bios are not drawn apart"
[ "$(grep -c 'fillcolor="#ffd8d8"' "$tmp/leaky.dot")" = 1 ] || fail "leaky: not 1 red node (the 20 leaks)"
"$tool" graph -T dot --no-fold -i "$tmp/leaky.json" >"$tmp/all.dot"
nodes=$(grep -cE '^	[cf][0-9]+	\[' "$tmp/all.dot")
[ "$nodes" = 60 ] || fail "--no-fold: $nodes nodes, expected 60"

"$gen" --closures 18000 --fanout 8 --leak-every 0 >"$tmp/fine.json"
"$tool" graph -T dot -i "$tmp/fine.json" >"$tmp/fine.dot"
nodes=$(grep -cE '^	[cf][0-9]+	\[' "$tmp/fine.dot")
[ "$nodes" = 1 ] || fail "finished: $nodes nodes, expected 1"
grep -q '×2000 submit_request -> request_done' "$tmp/fine.dot" || fail "finished: no ×2000 node"
grep -q '(+16000 closures below)' "$tmp/fine.dot" || fail "finished: children not counted"

"$gen" --closures 150000 --fanout 8 --leak-every 1000 >"$tmp/big.json"
read -r rc kb < <(peak "$tool" graph -T dot -i "$tmp/big.json")
[ "$rc" = 0 ] || fail "big: graph exit $rc: $(head -c 300 "$tmp/err")"
[ "$kb" -lt "$rss_kb" ] || fail "big: graph peaked at $kb kB, the bound is $rss_kb kB"
mv "$tmp/out" "$tmp/big.dot"
closures=$("$tool" report -i "$tmp/big.json" | sed -n 's/^closures: \([0-9]*\) .*/\1/p')
# Every node's count (×N, else 1) and what it says is below it, summed, is every closure.
drawn=$(python3 - "$tmp/big.dot" <<'PY'
import re, sys
dot = open(sys.argv[1]).read().replace("\\\n", "")
total = 0
for label in re.findall(r'label="((?:[^"\\]|\\.)*)"', dot):
    if label.startswith("closuretrace:") or "LEAKED below them" in label:
        continue
    m = re.match(r"×(\d+) ", label)
    total += int(m.group(1)) if m else 1
    b = re.search(r"\(\+(\d+) closures? below\)", label)
    total += int(b.group(1)) if b else 0
print(total)
PY
)
[ -n "$closures" ] && [ "$drawn" = "$closures" ] ||
	fail "big: the picture counts $drawn closures, report $closures"
grep -q 'finished, p50 ' "$tmp/big.dot" || fail "big: no finished fold"
echo "ok: graph of $closures closures: $drawn counted in the picture, peak $kb kB"
exit $status
