#!/usr/bin/env bash
# Joining a running program (issue 35 item 2): a process holding 1,000,000 closures made before the
# recording (tests/suites/bench/hold_live), on the library as built. Printed with their goals, each
# the median of RUNS runs:
#   read      record -p's read of the live registry: every closure alive, as synthetic inits
#             (record -v says how long it took)                               goal <= 1 s
#   -d 3      record -p PID -d 3: the recorder's wall time                    goal <= 5 s
#             and the trace's span (the trailer's duration_ns)                goal <= 3.3 s
# Informational: exit 0 unless a run fails.
# Usage: attach.bench.sh BUILD_DIR [CLOSURES]
set -uo pipefail
NAME=attach.bench.sh
. "$(dirname "$0")/record_setup.sh"
live=${2:-1000000}
runs=${RUNS:-3}
holder=$build/tests/suites/bench/hold_live
[ -x "$holder" ] || { echo "$NAME: $holder not built" >&2; exit 1; }
"$holder" "$live" >"$tmp/ready" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for ((i = 0; i < 600; i++)); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
[ -s "$tmp/ready" ] || { echo "$NAME: hold_live never said ready" >&2; exit 1; }
for ((r = 0; r < runs; r++)); do
	/usr/bin/time -f "wall %e" "$ct" record -v -p "$pid" -d 3 -o "$tmp/t.json" 2>"$tmp/err" ||
		{ echo "$NAME: record failed: $(tail -3 "$tmp/err")" >&2; exit 1; }
	sed -n 's/^closuretrace: \([0-9]*\) closures alive at attach, read in \([0-9.]*\) s$/\1 \2/p' \
		"$tmp/err" >"$tmp/read"
	read -r n secs <"$tmp/read" || { echo "$NAME: no snapshot: $(cat "$tmp/err")" >&2; exit 1; }
	[ "$n" -ge "$live" ] || { echo "$NAME: $n of $live closures read" >&2; exit 1; }
	echo "$secs" >>"$tmp/reads"
	sed -n 's/^wall //p' "$tmp/err" >>"$tmp/walls"
	tail -1 "$tmp/t.json" | sed -n 's/.*"duration_ns":\([0-9]*\).*/\1/p' |
		awk '{ printf "%.3f\n", $1 / 1e9 }' >>"$tmp/spans"
done
printf 'attach: %d closures alive, record -p, median of %d runs\n' "$live" "$runs"
printf '  read of the live registry  %6.3f s  (goal <= 1 s)\n' "$(median <"$tmp/reads")"
printf '  record -p -d 3: wall       %6.3f s  (goal <= 5 s)\n' "$(median <"$tmp/walls")"
printf '  record -p -d 3: span       %6.3f s  (goal <= 3.3 s)\n' "$(median <"$tmp/spans")"
