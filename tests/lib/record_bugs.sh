#!/usr/bin/env bash
# The bug and destroy probes end to end, for real (root, BPF): for every bug code of the contract
# (lib/include/closure_probes.h), bug_workload breaks that rule under `closuretrace record`, and
# the trace must hold exactly one bug event, on the victim, named as the contract names it (bug 5
# was once written "unknown"). Then closure_debug_destroy must reach the trace as a destroy event.
#   record_bugs.sh CLOSURETRACE BUG_WORKLOAD BUG_WORKLOAD_SOURCE
set -uo pipefail
ct=$1 workload=$2 src=$3
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
[ "$(id -u)" = 0 ] || fail "needs root for BPF and uprobes (BPF tests never skip)"

names=$("$workload" list) || fail "bug_workload list"
[ -n "$names" ] || fail "no bug codes"
for name in $names; do
	"$ct" record -o t.json -- "$workload" "$name" >out.txt 2>err.txt
	grep -q "^closure BUG: " err.txt || fail "$name: the library did not abort with its line: $(cat err.txt)"
	victim=$(sed -n 's/^victim 0x//p' out.txt)
	[ -n "$victim" ] || fail "$name: no victim address: $(cat out.txt)"
	bugs=$(grep '"ev":"bug"' t.json)
	[ "$(printf '%s\n' "$bugs" | grep -c .)" = 1 ] || fail "$name: wanted one bug event, got: $bugs"
	printf '%s\n' "$bugs" | grep -q "\"cl\":\"0x$victim\"" || fail "$name: bug event not on 0x$victim: $bugs"
	printf '%s\n' "$bugs" | grep -q "\"bug\":\"$name\"" || fail "$name: bug event not named $name: $bugs"
	echo "ok: $name"
done

"$ct" record -o t.json -- "$workload" destroy >out.txt 2>err.txt || fail "destroy: record: $(cat err.txt)"
victim=$(sed -n 's/^victim 0x//p' out.txt)
events=$(grep '"type":"event"' t.json | grep -o '"ev":"[a-z_]*"' | paste -sd' ')
[ "$events" = '"ev":"init" "ev":"destroy"' ] || fail "destroy: events were: $events"
grep '"ev":"destroy"' t.json | grep -q "\"cl\":\"0x$victim\",\"remaining\":1,\"flags\":\"R\"" ||
	fail "destroy: $(grep '"ev":"destroy"' t.json)"
# The reader takes it, and its call site resolves to the closure_debug_destroy line.
line=$(grep -n 'closure_debug_destroy(&victim); /\* destroy mode \*/' "$src" | cut -d: -f1)
[ -n "$line" ] || fail "no destroy line in $src"
"$ct" explain -i t.json "0x$victim" >explain.txt 2>err.txt || fail "explain: $(cat err.txt)"
grep -Eq "^ +[0-9]+\.[0-9]{6} ms +[0-9]+ +destroy +1 R +.*bug_workload\.c:$line \(main\)\$" explain.txt ||
	fail "explain does not show the destroy at bug_workload.c:$line: $(cat explain.txt)"
echo "ok: destroy"
