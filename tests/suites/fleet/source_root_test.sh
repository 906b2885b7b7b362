#!/usr/bin/env bash
# One leak, one row (issue 39 item 7, issue 40): the same program (sr_leak.c) built in two
# checkouts, a/ compiled in place and b/ from a build folder beside its src/, shows its file the
# same way in check, report (and --json), graph, explain, timeline and the exported rows: relative
# to its source root (viz/source_path.h), src/sr_leak.c. Exported from both to one
# clickhouse-server (started here, as fleet_test.sh does), fleet top-leaks gives the leak one row.
#   source_root_test.sh CLOSURETRACE SR_LEAK_C INCLUDE_DIR CONFIG_INCLUDE_DIR LIBCLOSURE
# Root and BPF (elsewhere SKIP, exit 77, unless CLOSURETRACE_NO_SKIP=1).
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"
ct=$1 prog_src=$2 inc=$3 cfg=$4 lib=$5
here=$(dirname "${BASH_SOURCE[0]}")
scratch
skip_without_bpf
CH_DIR=$tmp/ch
. "$here/clickhouse.sh"
on_exit() { ch_stop_all; }

line_of() { grep -n "/\* $1 \*/" "$prog_src" | cut -d: -f1; }
LEAK=$(line_of LEAK) INIT=$(line_of INIT) PARENT=$(line_of PARENT)
F=src/sr_leak.c

mkdir -p a/src b/src b/build || fail "mkdir"
cp "$prog_src" a/src/sr_leak.c && cp "$prog_src" b/src/sr_leak.c || fail "cp"
cflags=(-g -O0 -I"$inc" -I"$cfg")
link=("$lib" -Wl,-rpath,"$(dirname "$lib")")
# a: DW_AT_comp_dir $tmp/a, the file src/sr_leak.c; b: DW_AT_comp_dir $tmp/b/build, the file by
# its absolute path. Either way the root is the checkout.
(cd a && cc "${cflags[@]}" src/sr_leak.c -o sr_leak "${link[@]}") || fail "cc a"
(cd b/build && cc "${cflags[@]}" "$tmp/b/src/sr_leak.c" -o sr_leak "${link[@]}") || fail "cc b"

for c in a b; do
	prog=$tmp/$c/sr_leak
	[ $c = b ] && prog=$tmp/b/build/sr_leak
	"$ct" check --keep-trace $c.json -- "$prog" >$c.out 2>$c.err
	[ $? = 1 ] || fail "check $c: $(cat $c.err)"
	grep -q "\"file\":\"$tmp/$c/src/sr_leak.c\",\"line\":$LEAK,\"dir\":\"$tmp/$c[/a-z]*\"" $c.json ||
		fail "$c: no sym record of LEAK with its compile folder: $(grep '"sym"' $c.json)"
	# check: exactly these diagnostics, the same for both checkouts.
	[ "$(grep -v '^closuretrace: ' $c.err)" = "$F:$LEAK: error: closure leaked: took 1 reference; the finished closures of its kind take 0 here
$F:$INIT: note: the leaked closure (request) was initialised here, in request
$F:$PARENT: note: it keeps alive its parent (main), initialised here" ] || fail "check $c: $(cat $c.err)"

	# report, report --json, explain, timeline and graph: the same form, the checkout nowhere.
	"$ct" report -i $c.json >$c.report || fail "report $c"
	grep -qF "    blame: $F:$LEAK (request): took 1 reference" $c.report || fail "report $c: $(cat $c.report)"
	grep -qF " request ($F:$INIT)" $c.report || fail "report $c's kinds: $(cat $c.report)"
	"$ct" report --json -i $c.json >$c.report.json || fail "report --json $c"
	python3 - $c.report.json "$F:$LEAK" "$F:$INIT" <<'PY' || fail "report --json $c"
import json, sys
r = json.load(open(sys.argv[1]))
(leak,) = r["leaks"]
assert leak["blame"][0]["site"] == sys.argv[2], leak["blame"]
assert leak["init"]["site"] == sys.argv[3], leak["init"]
PY
	cl=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["leaks"][0]["closure"])' $c.report.json)
	"$ct" explain -i $c.json "$cl" >$c.explain || fail "explain $c $cl"
	head -1 $c.explain | grep -qF "request, init at $F:$INIT," || fail "explain $c: $(head -3 $c.explain)"
	"$ct" timeline -i $c.json -o $c.tl.json 2>/dev/null || fail "timeline $c"
	grep -qF "\"site\":\"$F:$LEAK\"" $c.tl.json || fail "timeline $c: no site $F:$LEAK"
	"$ct" graph -T dot -i $c.json >$c.dot || fail "graph $c"
	sed -e ':a' -e '/\\$/{N;s/\\\n//;ba}' $c.dot >$c.dot1
	grep -qF "init $F:$INIT" $c.dot1 || fail "graph $c: $(cat $c.dot1)"
	grep -qF "blame: $F:$LEAK" $c.dot1 || fail "graph $c's blame: $(cat $c.dot1)"
	for out in $c.err $c.report $c.report.json $c.explain $c.tl.json; do
		grep -qF "$tmp/$c/src" $out && fail "$out shows the checkout: $(grep -F "$tmp/$c/src" $out)"
	done
	# The graph says the root once, in its title, when every file shares it.
	[ "$(grep -cF "$tmp/$c/" $c.dot1)" -le 1 ] || fail "graph $c shows the checkout: $(grep -F "$tmp" $c.dot1)"
done
echo "ok: check, report, report --json, explain, timeline and graph show $F:$LEAK in both checkouts"

# Both exported, from a folder that is neither checkout: one row for the leak.
ch_start one || fail "clickhouse-server did not start"
U=http://127.0.0.1:$CH_PORT_one/fleet P=$CH_PORT_one
"$ct" export --create-schema --to "$U" >/dev/null || fail "create-schema"
(cd / && "$ct" export -i "$tmp/a.json" --to "$U" --host alpha) >/dev/null || fail "export a"
(cd / && "$ct" export -i "$tmp/b.json" --to "$U" --host beta) >/dev/null || fail "export b"
got=$(ch_query $P "SELECT host, site, source_root, init_site FROM fleet.diagnostics FINAL ORDER BY host FORMAT TSV")
[ "$got" = "alpha	$F:$LEAK	$tmp/a	$F:$INIT
beta	$F:$LEAK	$tmp/b	$F:$INIT" ] || fail "diagnostics rows: $got"
got=$(ch_query $P "SELECT DISTINCT kind, init_site, source_root FROM fleet.closures FINAL WHERE kind LIKE 'request %' ORDER BY source_root FORMAT TSV")
[ "$got" = "request ($F:$INIT)	$F:$INIT	$tmp/a
request ($F:$INIT)	$F:$INIT	$tmp/b" ] || fail "closures rows: $got"
"$ct" fleet top-leaks --from "$U" --json >top.json || fail "fleet top-leaks"
[ "$(cat top.json)" = "{\"site\":\"${F//\//\\/}:$LEAK\",\"function\":\"request\",\"leaked\":2,\"runs\":2,\"hosts\":2}" ] ||
	fail "top-leaks: $(cat top.json)"
echo "ok: fleet top-leaks: one row, $F:$LEAK, leaked 2 in 2 runs on 2 hosts"

# Tables made before source_root still take the rows, without it (docs/fleet.md).
"$ct" export --create-schema --to "${U%/fleet}/old" >/dev/null || fail "create-schema old"
for t in closures diagnostics; do
	ch_query $P "ALTER TABLE old.$t DROP COLUMN source_root" || fail "drop old.$t.source_root"
done
"$ct" export -i "$tmp/a.json" --to "${U%/fleet}/old" >/dev/null 2>old.err || fail "export to old tables: $(cat old.err)"
[ "$(ch_query $P "SELECT site FROM old.diagnostics FINAL FORMAT TSV")" = "$F:$LEAK" ] ||
	fail "old tables: $(ch_query $P "SELECT * FROM old.diagnostics FORMAT TSV")"
echo "ok: tables without source_root take the rows"
exit $status
