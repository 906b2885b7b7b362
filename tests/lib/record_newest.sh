#!/usr/bin/env bash
# CLASS(closure_stack) closures traced (root, BPF): test_kernel_newest makes stack closures by
# value and moves them before their first operation. Recorded from batches (the default), each is
# a stack closure initialised at its first use, where it ended up; recorded per operation, where
# an inline get comes before the library sees the closure, it is one first seen there. Either
# way every closure finishes and there is no leak (a false leak on correct code is a blocker).
#   record_newest.sh CLOSURETRACE TEST_KERNEL_NEWEST TEST_KERNEL_NEWEST_SOURCE
set -uo pipefail
ct=$1 prog=$2 src=$3
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
[ "$(id -u)" = 0 ] || fail "needs root for BPF and uprobes (BPF tests never skip)"
line_of() { grep -n "/\* $1 \*/" "$src" | cut -d: -f1; }
scoped=$(line_of FIRST_USE_SCOPED) moved=$(line_of FIRST_USE_MOVED)
[ -n "$scoped" ] && [ -n "$moved" ] || fail "markers missing in $src"
S=$(shown_source "$(realpath "$src")" "$(dirname "$prog")") # as report shows it

for mode in batches --per-op; do
	opt=()
	[ "$mode" = --per-op ] && opt=(--per-op)
	"$ct" record "${opt[@]}" -o t.json -- "$prog" >out.txt 2>err.txt || fail "$mode: record: $(cat err.txt out.txt)"
	grep -qx 'test_kernel_newest: ok' out.txt || fail "$mode: the program failed: $(cat out.txt)"
	"$ct" report -i t.json >report.txt 2>&1 || fail "$mode: report: $(cat report.txt)"
	grep -Eqx 'closures: 13 \(13 finished, 0 unfinished: 0 leaked, 0 kept alive by them; 0 stuck\)' report.txt ||
		fail "$mode: not every closure finished: $(cat report.txt)"
	grep -qx 'leaks: none' report.txt || fail "$mode: leaks: $(cat report.txt)"
	"$ct" check "${opt[@]}" -- "$prog" >out.txt 2>err.txt || fail "$mode: check: $(cat err.txt)"
	grep -Eq '^closuretrace: no leaks; [0-9]+ events, 0 lost$' err.txt || fail "$mode: check: $(cat err.txt)"
	echo "ok: $mode: 13 closures, all finished, no leak"
done
# From batches, both stack closures are initialised where they were first used.
"$ct" record -o t.json -- "$prog" >/dev/null 2>err.txt || fail "record: $(cat err.txt)"
"$ct" report -i t.json >report.txt 2>&1 || fail "report: $(cat report.txt)"
for site in "scoped_wait ($S:$scoped)" "test_class_closure_stack ($S:$moved)"; do
	grep -Eq "^ +1 +1 +0 .*  ${site//(/\\(}$" report.txt || fail "no finished stack closure at $site: $(cat report.txt)"
done
grep -q 'no init in the trace' report.txt && fail "a closure without its init: $(cat report.txt)"
echo "ok: moved stack closures initialised at their first use"
exit $status
