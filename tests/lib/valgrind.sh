#!/usr/bin/env bash
# libclosure is clean under valgrind's memcheck: no uninitialised read (a fresh closure's debug
# magic, in a CLOSURE_DEBUG build), no invalid access, no definite leak, with no suppression file.
# A control program with an uninitialised read first proves that this valgrind reports one.
# helgrind and DRD are not run: they model pthreads, not the C11 atomics and futexes that are
# libclosure's own synchronisation, so any program whose threads hand a closure over by its count
# alone (kernel_style's helper thread puts its reference) looks racy to them whenever the
# scheduling does not happen to order it otherwise: DRD reported kernel_style's put under load in
# a fresh-clone CI (closure.c's read of cl->fn after the acquire load). ThreadSanitizer, which
# follows the atomics, checks the library's threads (make test-tsan).
#   valgrind.sh CC PROGRAM [ARGS...]...  (programs separated by --)
set -uo pipefail
cc=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
memcheck() {
	valgrind -q --fair-sched=yes --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite "$@" >"$tmp/out" 2>"$tmp/err"
}

printf '#include <stdlib.h>\nint main(void) { int *p = malloc(sizeof(int)); if (*p == 42) return 3; return 0; }\n' >"$tmp/control.c"
"$cc" -g -O0 "$tmp/control.c" -o "$tmp/control" || fail "cannot build the control program"
memcheck "$tmp/control"
rc=$?
[[ $rc == 99 ]] || fail "valgrind exits $rc on the control program, expected 99: $(cat "$tmp/err")"
grep -q 'Conditional jump or move depends on uninitialised value' "$tmp/err" ||
	fail "valgrind does not report the control's uninitialised read: $(cat "$tmp/err")"
echo "ok: the control's uninitialised read is reported (exit 99)"


while (($#)); do
	cmd=()
	while (($#)) && [[ $1 != -- ]]; do
		cmd+=("$1")
		shift
	done
	(($#)) && shift
	memcheck "${cmd[@]}"
	rc=$?
	[[ $rc == 0 ]] || fail "${cmd[*]}: exit $rc under memcheck: $(head -40 "$tmp/err")"
	[[ -s $tmp/err ]] && fail "${cmd[*]}: memcheck said: $(head -40 "$tmp/err")"
	echo "ok: clean under memcheck: ${cmd[*]##*/}"
done
