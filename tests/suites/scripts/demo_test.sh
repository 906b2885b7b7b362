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

# docs/demo.svg is the demo's picture as the tool draws it now (scripts/pictures.sh makes it): its
# words the same as this run's, counts, times and addresses aside.
python3 - "$src/docs/demo.svg" demo.svg <<'PY' || fail "docs/demo.svg says other words than graph now: run scripts/pictures.sh"
import html, re, sys
def words(path):
    texts = re.findall(r'<text[^>]*>([^<]*)</text>', open(path).read())
    shown = set()
    for t in texts:
        t = html.unescape(t)
        t = re.sub(r'0x[0-9a-f]+', '0x?', t)
        t = re.sub(r'\d+(\.\d+)?', 'N', t)
        t = re.sub(r'source files under .*', 'source files under DIR', t)
        t = re.sub(r'(/[^/\s]+)+/([^/\s]+)', r'\2', t)  # where the checkout is
        shown.add(t)
    return shown
docs, now = words(sys.argv[1]), words(sys.argv[2])
if docs != now:
    print("only in docs/demo.svg:", sorted(docs - now))
    print("only in graph's picture now:", sorted(now - docs))
    sys.exit(1)
PY
echo "ok: docs/demo.svg says what graph draws now"
