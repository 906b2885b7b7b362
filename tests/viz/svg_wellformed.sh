#!/usr/bin/env bash
# The pictures of every fixture are well-formed (xmllint), hostile file names included, and each
# output format comes out as what it claims to be.
set -u
tool=$1 fixtures=$2
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
keep_going=1
scratch
for f in "$fixtures"/*.json; do
	name=$(basename "$f" .json)
	"$tool" graph -i "$f" -o "$tmp/$name.svg" 2>/dev/null
	rc=$?
	case $name in
	malformed | bad_field | bad_name | newer_version)
		[ "$rc" = 2 ] || { echo "FAIL $name: graph exit $rc, expected 2"; status=1; }
		continue ;;
	esac
	[ "$rc" = 0 ] || { echo "FAIL $name: graph exit $rc"; status=1; continue; }
	xmllint --noout "$tmp/$name.svg" || { echo "FAIL $name: SVG not well-formed"; status=1; }
	grep -q '<svg' "$tmp/$name.svg" || { echo "FAIL $name: no <svg> element"; status=1; }
done
# The hostile names arrive in the SVG as text, escaped, not as markup.
grep -qF 'init src/&lt;gen&gt;&amp;&#39;q&#39;&quot;\n\\x.c:7' "$tmp/hostile_names.svg" ||
	{ echo "FAIL hostile_names: file name not escaped as text"; status=1; }
grep -qF '&#45;&gt; f\G\N\l<' "$tmp/hostile_names.svg" ||
	{ echo "FAIL hostile_names: backslashes in a name were interpreted"; status=1; }
"$tool" graph -i "$fixtures/leak_under_children.json" -T png -o "$tmp/x.png" &&
	[ "$(head -c 8 "$tmp/x.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	{ echo "FAIL: -T png did not write a PNG"; status=1; }
"$tool" graph -i "$fixtures/leak_under_children.json" -T pdf -o "$tmp/x.pdf" &&
	[ "$(head -c 5 "$tmp/x.pdf")" = "%PDF-" ] || { echo "FAIL: -T pdf did not write a PDF"; status=1; }
exit $status
