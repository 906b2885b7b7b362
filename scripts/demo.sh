#!/usr/bin/env bash
# make demo: build the demo and run it with its planted leak (given the build folder as $1).
# blockio submits block-I/O requests made of closures (examples/blockio.c); --leak takes one
# reference that is never put, so one request and the closures above it never finish. --counts
# prints how many times each closure probe fired, which is what a tracer must see.
set -euo pipefail
build=${1:-build}
cmake --build "$build" -j "$(nproc)" --target blockio >/dev/null

here=$(cd "$(dirname "$0")/.." && pwd)
demo=("$build/examples/blockio" --requests 100 --bios 4 --leak --counts)
echo "== ${demo[*]}"
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
counts=$("${demo[@]}" 2>"$errors")
sed 's/^/  /' "$errors"
echo
echo "The leaked reference, which a leak report must blame:"
grep -n 'LEAK:' "$here/examples/blockio.c" | sed -e 's|^|  examples/blockio.c:|' -e 's|:[[:space:]]*|: |2'
echo
echo "Closure probes the run fired (docs/probes.md):"
printf '  %-12s %8s\n' probe count
while read -r probe n; do
	printf '  %-12s %8d\n' "$probe" "$n"
done <<<"$counts"
