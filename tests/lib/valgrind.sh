#!/usr/bin/env bash
# libclosure is clean under valgrind's memcheck: no uninitialised read (a fresh closure's debug
# magic, in a CLOSURE_DEBUG build), no invalid access, no definite leak, with no suppression file.
# A control program with an uninitialised read first proves that this valgrind reports one.
# helgrind and DRD model pthreads, not C11 atomics and futexes, libclosure's own synchronisation:
# they apply where a program's closures pass through the workqueue and its own threads' joins
# (kernel_style, the first program given, is clean under both, after a racy control that both
# must report), not to the library's lock-free paths in general; ThreadSanitizer covers those
# (make test-tsan).
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

printf '#include <pthread.h>\nstatic int n;\nstatic void *bump(void *a) { n++; return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, bump, 0); n++; pthread_join(t, 0); return 0; }\n' >"$tmp/race.c"
"$cc" -g -O0 -pthread "$tmp/race.c" -o "$tmp/race" || fail "cannot build the racy control"
first=${1:-}
for tool in helgrind drd; do
	valgrind -q --tool=$tool --error-exitcode=99 "$tmp/race" >/dev/null 2>"$tmp/err"
	rc=$?
	[[ $rc == 99 ]] || fail "$tool exits $rc on the racy control, expected 99: $(cat "$tmp/err")"
	valgrind -q --tool=$tool --fair-sched=yes --error-exitcode=99 "$first" >/dev/null 2>"$tmp/err"
	rc=$?
	[[ $rc == 0 && ! -s $tmp/err ]] || fail "${first##*/} under $tool: exit $rc: $(head -40 "$tmp/err")"
	echo "ok: $tool reports the control's race, and nothing in ${first##*/}"
done

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
