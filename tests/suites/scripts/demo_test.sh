#!/usr/bin/env bash
# scripts/demo.sh (make demo) in a scratch folder: it records the default trace, draws demo.svg,
# writes demo.timeline.json and reports the planted leak at its line; then `closuretrace graph >
# tree.svg`, with no option, draws the same trace: a valid SVG with the leaked closure in it.
#   demo_test.sh SOURCE_DIR BUILD_DIR
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
src=$(realpath "$1") build=$(realpath "$2")
scratch
skip_without_bpf
ct=$build/cli/closuretrace

bash "$src/scripts/demo.sh" "$build" >demo.out 2>&1 || fail "make demo's script: $(tail -20 demo.out)"
for f in closuretrace.json demo.svg demo.timeline.json; do
	[ -s "$f" ] || fail "the demo did not write $f: $(ls)"
done
leak_line=$(grep -n 'LEAK:' "$src/examples/blockio.c" | head -1 | cut -d: -f1)
grep -q "blockio.c:$leak_line" demo.out || fail "the demo's report does not blame blockio.c:$leak_line: $(cat demo.out)"
echo "ok: the demo wrote closuretrace.json, demo.svg, demo.timeline.json; its report blames blockio.c:$leak_line"

"$ct" graph >tree.svg 2>err.txt || fail "closuretrace graph > tree.svg: exit $?: $(cat err.txt)"
xmllint --noout tree.svg 2>xml.txt || fail "tree.svg is not XML: $(cat xml.txt)"
grep -q '<svg' tree.svg && grep -q 'leaked' tree.svg || fail "tree.svg has no leaked closure: $(head -c 600 tree.svg)"
cmp -s tree.svg demo.svg || fail "tree.svg is not the demo's picture"
echo "ok: closuretrace graph > tree.svg after the demo: the demo's picture, the leak in it"
