#!/usr/bin/env bash
# The newest bcachefs-tools' closure names (issue 40 item 6): bcachefs_names.c includes <closure.h>
# and then bcachefs_fs/closure.h, shaped like bcachefs's fs/closure.h (closure_wait and three more
# defined as the bch2_ names), and calls each name last in its function.
#   bcachefs_names.sh compile INCLUDE_DIR CONFIG_INCLUDE_DIR SOURCE CC...
#     compiled by each CC (gcc, clang) with -O2 -Wall -Wextra -Werror, as gnu11 and as c11
#     -pedantic: no diagnostic; and (x86-64) every call to a closure function is a call, not the
#     jump of a tail call that would record the caller's caller.
#   bcachefs_names.sh check CLOSURETRACE PROG SOURCE
#     closuretrace check (root, BPF): each call recorded at its own line; the two closures left
#     waiting on a waitlist nobody wakes, one through closure_wait and one through
#     bch2_closure_wait, are errors at those lines.
set -uo pipefail
mode=$1
shift
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

compile() {
	local inc=$1 cfg=$2 src=$3 cc std obj
	shift 3
	for cc in "$@"; do
		for std in "gnu11" "c11 -pedantic"; do
			obj=$tmp/names.o
			rm -f "$obj"
			# shellcheck disable=SC2086 # std carries its own flag
			"$cc" -std=$std -O2 -Wall -Wextra -Werror -c -I"$inc" -I"$cfg" "$src" -o "$obj" \
				2>err.txt || fail "$cc -std=$std: $(head -20 err.txt)"
			[ -s err.txt ] && fail "$cc -std=$std: diagnostics: $(head -20 err.txt)"
			echo "ok: $cc -std=$std: no diagnostic"
			[ "$(uname -m)" = x86_64 ] || continue
			objdump -dr --no-show-raw-insn "$obj" >dis.txt || fail "objdump $obj"
			# Each call or jump to a closure function: the instruction, the function.
			awk '/^ +[0-9a-f]+:\t[a-z]/ { insn = $2 }
				/R_X86_64_(PLT32|PC32)\t(__)?(bch2_)?closure_/ && insn ~ /^(call|j)/ {
					sub(/[-+]0x[0-9a-f]+$/, "", $3); print insn, $3 }' dis.txt |
				sort -u >calls.txt
			grep '^j' calls.txt && fail "$cc -std=$std: a tail call to a closure function"
			for name in bch2_closure_wait __bch2_closure_wake_up bch2_closure_sync_unbounded \
				bch2_closure_return_sync; do
				grep -qx "call $name" calls.txt || fail "$cc -std=$std: no call to $name: $(cat calls.txt)"
			done
			grep -Eq ' (closure_wait|closure_return_sync|closure_sync_unbounded)$' calls.txt &&
				fail "$cc -std=$std: a plain name called, not its bch2_ name: $(cat calls.txt)"
			echo "ok: $cc -std=$std: $(wc -l <calls.txt) closure functions, each only called"
		done
	done
}

check() {
	local ct=$1 prog=$2 src=$3 want got rc shown
	skip_without_bpf
	line_of() { grep -n "/\* $1 \*/" "$src" | cut -d: -f1; }
	"$ct" check --keep-trace t.json -- "$prog" >out.txt 2>err.txt || fail "check: $(cat err.txt)"
	grep -qx 'bcachefs_names: ok' out.txt || fail "the program failed: $(cat out.txt err.txt)"
	grep -Eqx 'closuretrace: no leaks; [0-9]+ events, 0 lost' err.txt || fail "check: $(cat err.txt)"
	# Every event recorded in the functions that call through the names, at the call's line.
	got=$(python3 - t.json <<'PY'
import json, sys
syms, events = {}, []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "sym":
        syms[r["addr"]] = r
    elif r["type"] == "event":
        events.append(r)
callers = ("wait_for_memory", "wait_open_coded", "wake_flush_waiters", "flush_all", "trans_put",
           "journal_wait")
for e in events:
    s = syms.get(e.get("ip"), {})
    if s.get("func") in callers:
        print(e["ev"], "%s:%s" % (s["func"], s.get("line")))
PY
)
	want="wait wait_for_memory:$(line_of WAIT_PLAIN)
wake wake_flush_waiters:$(line_of WAKE)
wait journal_wait:$(line_of WAIT_RESULT)
wait wait_open_coded:$(line_of WAIT_BCH2)
sync_begin flush_all:$(line_of SYNC_UNBOUNDED)
sync_end flush_all:$(line_of SYNC_UNBOUNDED)
continue_at trans_put:$(line_of RETURN_SYNC)
finish trans_put:$(line_of RETURN_SYNC)
put trans_put:$(line_of RETURN_SYNC)"
	[ "$got" = "$want" ] || fail "the calls' sites differ; got:
$got
expected:
$want"
	echo "ok: closure_wait, bch2_closure_wait, __closure_wake_up, closure_sync_unbounded and closure_return_sync recorded at their callers' lines"

	"$ct" check -- "$prog" leak >out.txt 2>err.txt
	rc=$?
	[ $rc = 1 ] || fail "check of leak exited $rc, not 1: $(cat err.txt)"
	shown=$(shown_source "$src" "$(dirname "$prog")")
	want="$shown:$(line_of WAIT_PLAIN): error: closure stuck: waits on a waitlist that was never woken
$shown:$(line_of INIT_PLAIN): note: the stuck closure (leak ($shown:$(line_of INIT_PLAIN))) was initialised here, in leak
$shown:$(line_of WAIT_BCH2): error: closure stuck: waits on a waitlist that was never woken
$shown:$(line_of INIT_BCH2): note: the stuck closure (leak ($shown:$(line_of INIT_BCH2))) was initialised here, in leak"
	got=$(grep -E '^[^ ]+: (error|note): ' err.txt | grep -v '^closuretrace: ')
	[ "$got" = "$want" ] || fail "diagnostics differ; got:
$got
expected:
$want"
	grep -Eqx 'closuretrace: 2 errors: 2 closures leaked or stuck; [0-9]+ events, 0 lost' err.txt ||
		fail "summary: $(cat err.txt)"
	echo "ok: the waits through closure_wait and bch2_closure_wait blamed at their lines"
}

scratch
case $mode in
compile) compile "$@" ;;
check) check "$@" ;;
*) fail "unknown mode $mode" ;;
esac
exit $status
