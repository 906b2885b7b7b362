#!/usr/bin/env bash
# Issue 40 item 2: blame does not depend on the order the puts came back in. extra_get.json's
# dev closure takes gets at dev.c:20 and dev.c:30, then one put (dev.c:40) gives back one of
# them; the same trace with the two gets swapped must blame the same sites, "sure: low".
#   blame_order.sh CLOSURETRACE FIXTURES
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ct=$1 fixtures=$2
scratch
cp "$fixtures/extra_get.json" a.json
# The same events, the two gets' call sites exchanged.
sed -e '/"cl":"0x7f0000002000"/s/"ip":"0x702100"/"ip":"SWAP"/' \
	-e '/"cl":"0x7f0000002000"/s/"ip":"0x702200"/"ip":"0x702100"/' \
	-e '/"cl":"0x7f0000002000"/s/"ip":"SWAP"/"ip":"0x702200"/' a.json >b.json
cmp -s a.json b.json && fail "the swap changed nothing"
for t in a b; do
	"$ct" explain -i "$t.json" 0x7f0000002000 >"$t.txt" || fail "explain $t: $(cat "$t.txt")"
	grep -oE '(blame|also): +src/dev\.c:[0-9]+' "$t.txt" | sed -E 's/(blame|also): +//' | sort >"$t.sites"
	grep -q '^  sure: low (no finished closure of its kind to compare with; the puts do not tell which' "$t.txt" ||
		fail "$t: not sure: low: $(cat "$t.txt")"
done
printf '%s\n' src/dev.c:20 src/dev.c:30 >want.sites
diff -u want.sites a.sites || fail "blamed sites"
diff -u a.sites b.sites || fail "the blame depends on the order of the gets"
echo "ok: dev.c:20 and dev.c:30 blamed, sure: low, in either order"
