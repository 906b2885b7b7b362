#!/usr/bin/env bash
# bcachefs-tools, unchanged, on libclosure: its C part is built twice from the tarball in
# ../shared/third_party/ (stock, and with include/linux/closure.h replaced by one line that
# includes <closure/closure.h> and linux/closure.c removed, no other edit), both builds format,
# fsck and show-super a file-backed image with the same results, and closuretrace records,
# reports, draws and checks the libclosure build: every closure finishes, check passes. With the
# references inject.patch takes and never puts (CT_INJECT_JOURNAL, CT_INJECT_FS; both trees carry
# its lines, inert without the variables), check --timeout names the injected get first. Under
# valgrind's memcheck, format on libclosure has no error that stock does not have.
#   bcachefs_test.sh BUILD_DIR SOURCE_DIR
# Everything it makes stays in BUILD_DIR/tests/suites/integration/bcachefs (reused by the next run).
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
here="$src/tests/suites/integration/bcachefs"
. "$src/tests/common.sh"
. "$here/build.sh" # both builds, in $work: stock/bcachefs and libclosure/bcachefs

# Each build runs the same commands on its own image; their outputs must match but for what
# varies between any two runs (UUIDs, times, the journal sequence numbers a clean shutdown ends at).
normalise() {
	sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g' \
		-e 's/[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]+ [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}/TIME/' \
		-e 's/journal seq [0-9]+/journal seq N/' -e 's/replaying entries [0-9]+-[0-9]+/replaying entries N-N/' \
		-e 's/^(Sequence number):.*/\1: N/'
}
run_all() { # run_all TREE: format, fsck -f -y, fsck -n, show-super, each's status and output
	local bin="$work/$1/bcachefs" out="$work/$1.results"
	mkdir -p "$1.run" && (
		cd "$1.run" || exit 1
		rm -f img && truncate -s 512M img
		for cmd in "format img" "fsck -f -y img" "fsck -n img" "show-super img"; do
			echo "== bcachefs $cmd"
			# shellcheck disable=SC2086 # the words of cmd
			timeout 120 "$bin" $cmd 2>&1 </dev/null
			echo "== exit $?"
		done
	) | normalise >"$out"
}
run_all stock
run_all libclosure
for r in stock libclosure; do
	[ "$(grep -c '^== exit 0$' $r.results)" = 4 ] || fail "$r: not every command exited 0: $(cat $r.results)"
done
grep -q '^initializing new filesystem$' libclosure.results || fail "format said nothing of a new filesystem"
grep -q '^check_nlinks... done$' libclosure.results || fail "fsck -f did not run its passes"
diff -u stock.results libclosure.results >results.diff || fail "results differ: $(cat results.diff)"
echo "ok: stock and libclosure builds: format, fsck -f -y, fsck -n, show-super agree"

# Traced: record format, then fsck, of a fresh image; report, graph; check fsck and format.
bin="$work/libclosure/bcachefs"
rm -f traced.img && truncate -s 512M traced.img
"$ct" record -o format.json -- "$bin" format -q traced.img >record.out 2>&1 || fail "record format: $(cat record.out)"
"$ct" record -o fsck.json -- "$bin" fsck -f -y traced.img >>record.out 2>&1 || fail "record fsck: $(cat record.out)"
for t in format fsck; do
	"$ct" report -i $t.json >$t.report 2>report.err || fail "report of $t: $(cat report.err)"
	# "closures: N (N finished, 0 unfinished: ...)": every closure finished, and there were some.
	line=$(grep '^closures: ' $t.report)
	[[ $line =~ ^closures:\ ([0-9]+)\ \(([0-9]+)\ finished,\ 0\ unfinished ]] ||
		fail "$t: not every closure finished: $line"
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[1]}" -gt 20 ] ||
		fail "$t: $line"
	grep -q '^leaks: none$' $t.report || fail "$t: report found leaks: $(cat $t.report)"
	grep -q '__bch2_trans_get (libbcachefs/btree_iter.c:[0-9]*)' $t.report ||
		fail "$t: no btree transaction closures named with their file:line: $(cat $t.report)"
	echo "ok: $t traced: $line"
done
# The journal write continues on bcachefs' own workqueue (continue_at with its workqueue_struct):
# it ran, on a thread of bcachefs, with that workqueue in the run event.
grep -q 'bch2_journal_buf_put_final -> bch2_journal_write (libbcachefs/journal.c:[0-9]*)$' format.report ||
	fail "no journal write continuation in format's report: $(cat format.report)"
runs=$(grep -c '"ev":"run".*"wq":"0x[0-9a-f]*[1-9a-f][0-9a-f]*"' format.json)
[ "$runs" -gt 0 ] || fail "no continuation ran on a workqueue in format's trace"
echo "ok: $runs continuations of format ran on bcachefs' own workqueues"

"$ct" graph -i format.json -o format.svg 2>graph.err || fail "graph: $(cat graph.err)"
xmllint --noout format.svg || fail "format.svg is not well-formed"
grep -q '__bch2_trans_get' format.svg && grep -q 'bch2_fs_alloc' format.svg ||
	fail "format.svg does not show bcachefs' closures"
# Every bcachefs closure is a root: the picture shows kinds, one node each (roots of a kind fold
# into one counted node), not a grid of boxes (those that waited on a waitlist go in its cluster,
# indented further); the transactions' node counts as the report does.
"$ct" graph -T dot -i format.json -o format.dot 2>graph.err || fail "graph -T dot: $(cat graph.err)"
kinds=$(sed -n '/^closures by kind/,/^$/p' format.report | grep -cE '^ +[0-9]+ +[0-9]+ ')
nodes=$(grep -cE '^	+[cf][0-9]+	\[' format.dot)
[ "$nodes" = "$kinds" ] || fail "format's graph has $nodes nodes for $kinds kinds: $(cat format.dot)"
trans=$(awk '/ __bch2_trans_get \(/ {print $1}' format.report)
grep -q "label=\"×$trans __bch2_trans_get\\\\ninit " format.dot ||
	fail "no ×$trans __bch2_trans_get node: $(cat format.dot)"
echo "ok: graph of format drawn: $nodes nodes for $kinds kinds, ×$trans __bch2_trans_get"

for cmd in "fsck -f -y traced.img" "format -q traced.img"; do
	# shellcheck disable=SC2086 # the words of cmd
	"$ct" check -- "$bin" $cmd >check.out 2>check.err
	st=$?
	[ $st = 0 ] || fail "check -- bcachefs $cmd exited $st: $(cat check.err)"
	last=$(tail -1 check.err)
	[[ $last =~ ^closuretrace:\ no\ leaks\;\ [0-9]+\ events,\ 0\ lost$ ]] ||
		fail "check -- bcachefs $cmd: $last"
	echo "ok: check -- bcachefs $cmd: $last"
done

# The root of a hang on real code (issue 40 item 1): the first error is the injected get, where
# the fix goes; what waits behind it is a note. The journal write is the first of its kind (none
# finished to compare with) and what waits for journal space sleeps on a waitlist.
injected() { # injected VARIABLE FILE: the line of the get the variable turns on
	echo $(($(grep -n "getenv(\"$1\")" "$work/libclosure/libbcachefs/$2" | cut -d: -f1) + 1))
}
check_injected() { # check_injected VARIABLE COMMAND...: check --timeout 10, 124; errors in inj.err
	"$ct" check --timeout 10 -- env "$1=1" "$bin" "${@:2}" >inj.out 2>inj.err </dev/null
	st=$?
	[ $st = 124 ] || fail "check -- $1 bcachefs ${*:2} exited $st: $(cat inj.err)"
	grep -E '^[^ ]+: (error|note): ' inj.err | grep -v '^closuretrace: ' >inj.diag
}
journal=$(injected CT_INJECT_JOURNAL journal_io.c) fs=$(injected CT_INJECT_FS super.c)
rm -f inj.img && truncate -s 512M inj.img
check_injected CT_INJECT_JOURNAL format -q inj.img
[ "$(grep -c ': error: ' inj.diag)" = 1 ] &&
	[ "$(head -1 inj.diag)" = "libbcachefs/journal_io.c:$journal: error: closure never finished, the root of a hang: took 1 reference, 1 not put back" ] ||
	fail "format with CT_INJECT_JOURNAL: the error is not the injected get: $(cat inj.err)"
grep -Eqx 'libbcachefs/journal.c:[0-9]+: note: [0-9]+ stuck closures? waits? here, on a waitlist \(closure_wait\)' inj.diag &&
	grep -Eqx 'closuretrace: note: [0-9]+ stuck closures? waits? behind it: quiet for [0-9.]+ s before the process was ended' inj.err ||
	fail "format with CT_INJECT_JOURNAL: the waiters on journal space are not notes: $(cat inj.err)"
echo "ok: check -- bcachefs format, CT_INJECT_JOURNAL: $(head -1 inj.diag)"
rm -f inj.img && truncate -s 512M inj.img && "$bin" format -q inj.img >/dev/null 2>&1 || fail "format inj.img"
check_injected CT_INJECT_JOURNAL fsck -f -y inj.img
[ "$(head -1 inj.diag)" = "libbcachefs/journal_io.c:$journal: error: closure never finished, the root of a hang: took 1 reference, 1 not put back" ] ||
	fail "fsck with CT_INJECT_JOURNAL: the first error is not the injected get: $(cat inj.err)"
echo "ok: check -- bcachefs fsck, CT_INJECT_JOURNAL: $(head -1 inj.diag)"
rm -f inj.img && truncate -s 512M inj.img
check_injected CT_INJECT_FS format -q inj.img
[ "$(grep -c ': error: ' inj.diag)" = 1 ] &&
	[ "$(head -1 inj.diag)" = "libbcachefs/super.c:$fs: error: closure stuck: inside closure_sync at exit, waiting for 1 reference: took 1 reference, 1 not put back" ] &&
	grep -Eqx 'libbcachefs/super.c:[0-9]+: note: it waits here, inside closure_sync' inj.diag ||
	fail "format with CT_INJECT_FS: the error is not the injected get, the sync a note: $(cat inj.err)"
echo "ok: check -- bcachefs format, CT_INJECT_FS: $(head -1 inj.diag)"

# Under memcheck, format on libclosure reports nothing that stock does not (stock has its own:
# a pwrite of a superblock from a too-short buffer). It did: every superblock read-back as
# uninitialised in bch2_write_super, the aio control block valgrind reads being dead stack that
# libclosure's deeper sleep overwrote (lib/sleep.c, docs/design.md). An error is its kind and its
# first frame; each build formats its own image. Within 2 GB of address space: an overwritten I/O
# vector can make valgrind mark gigabytes.
command -v valgrind >/dev/null || skip_or_fail "no valgrind (scripts/deps.sh installs it)"
memcheck_errors() { # memcheck_errors TREE: the sorted kinds and first frames of format's errors
	rm -f "$1.vg.img" && truncate -s 512M "$1.vg.img"
	(
		ulimit -v 2000000
		timeout 300 valgrind -q --error-limit=no "$work/$1/bcachefs" format "$1.vg.img" \
			>"$1.vg.out" 2>"$1.vg.err" </dev/null
	) || fail "$1: format under valgrind failed: $(tail -20 "$1.vg.err")"
	grep -q '^initializing new filesystem$' "$1.vg.out" || fail "$1: format under valgrind: $(cat "$1.vg.out")"
	# "==PID== KIND" then "==PID==    at 0x...: FRAME"; "Thread N:" lines name the thread only.
	sed -E -n 's/^==[0-9]+== //p' "$1.vg.err" | awk '
		/^Thread [0-9]+:$/ { next }
		/^[^ ]/ { kind = $0; next }
		/^ +at 0x[0-9A-F]+: / && kind != "" { sub(/^ +at 0x[0-9A-F]+: /, ""); print kind " at " $0; kind = "" }
	' | sort -u >"$1.vg.errors"
}
memcheck_errors stock
memcheck_errors libclosure
grep -q 'Syscall param pwrite64(buf) points to unaddressable byte' stock.vg.errors ||
	fail "stock's own memcheck error is not there (is memcheck reporting?): $(cat stock.vg.err)"
extra=$(comm -13 stock.vg.errors libclosure.vg.errors)
[ -z "$extra" ] || fail "format on libclosure has memcheck errors stock does not: $extra
$(cat libclosure.vg.err)"
echo "ok: format under memcheck: libclosure's errors are stock's ($(wc -l <stock.vg.errors) kinds)"
exit 0
