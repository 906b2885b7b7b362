#!/usr/bin/env bash
# The pictures in docs/, made again from the build given ($1): docs/demo.svg (make demo's tree:
# examples/blockio with its planted leak) and docs/graph-live.png (a busy blockio recorded with
# record -p -d 2 while it runs). Paths under this checkout are shown as a user's,
# /home/me/closuretrace/. tests/suites/scripts/demo_test.sh checks that demo.svg's words are the tool's
# words now: run this after changing what graph writes. Needs root (BPF), as the demo does.
set -euo pipefail
build=$(realpath "${1:-build}")
here=$(cd "$(dirname "$0")/.." && pwd)
ct=$build/cli/closuretrace
tmp=$(mktemp -d)
bpid=
trap '[ -n "$bpid" ] && kill "$bpid" 2>/dev/null; rm -rf "$tmp"' EXIT
# (Graphviz writes a '-' of a path in an SVG as "&#45;")
shown() { sed -e "s|$here/|/home/me/closuretrace/|g" -e "s|${here//-/\&#45;}/|/home/me/closuretrace/|g"; }

(cd "$tmp" && bash "$here/scripts/demo.sh" "$build" >demo.out 2>&1) ||
	{ tail -20 "$tmp/demo.out" >&2; exit 1; }
shown <"$tmp/demo.svg" >"$here/docs/demo.svg"
echo "wrote docs/demo.svg"

"$build/examples/blockio" --requests 200000 >/dev/null &
bpid=$!
sleep 1
(cd "$tmp" && "$ct" record -p "$bpid" -d 2 -o live.json &&
	"$ct" graph -i live.json -T dot) | shown | dot -Tpng -o "$here/docs/graph-live.png"
echo "wrote docs/graph-live.png"
