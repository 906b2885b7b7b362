#!/usr/bin/env bash
# make demo: the main job end to end on the bundled demo (given the build folder as $1).
# blockio submits block-I/O requests made of closures (examples/blockio.c); --leak takes one
# reference that is never put, so one request and the closures above it never finish.
# closuretrace records it to the default trace (closuretrace.json, which every command reads when
# given no -i: `closuretrace graph > tree.svg` works after it), draws the closure tree to demo.svg,
# writes the timeline for Perfetto to demo.timeline.json and reports the leak.
set -euo pipefail
build=${1:-build}
cmake --build "$build" -j "$(nproc)" --target blockio closuretrace >/dev/null
here=$(cd "$(dirname "$0")/.." && pwd)
ct=$build/cli/closuretrace
demo=("$build/examples/blockio" --requests 100 --bios 4 --leak)

echo "== closuretrace record -- ${demo[*]}"
"$ct" record -- "${demo[@]}"
echo
echo "== closuretrace graph -o demo.svg"
"$ct" graph -o demo.svg
echo "wrote demo.svg (leaked closures in red, the closures they keep alive in orange)"
echo
echo "== closuretrace timeline -o demo.timeline.json"
"$ct" timeline -o demo.timeline.json
echo "open demo.timeline.json at https://ui.perfetto.dev (Open trace file) or in chrome://tracing (Load)"
echo
echo "== closuretrace report"
"$ct" report
echo
echo "The planted leak, which the report must blame:"
grep -n 'LEAK:' "$here/examples/blockio.c" | sed -e 's|^|  examples/blockio.c:|' -e 's|:[[:space:]]*|: |2'
