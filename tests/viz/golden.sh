#!/usr/bin/env bash
# One golden test: run closuretrace in the fixtures folder, compare its standard output, standard
# error and exit status with the expected ones exactly.
#   golden.sh CLOSURETRACE FIXTURES GOLDEN NAME RC ARGS...
# GOLDEN/NAME.out is the expected output; GOLDEN/NAME.err the expected error output (none: empty).
# UPDATE_GOLDEN=1 rewrites them (then read the diff before committing it).
set -u
tool=$1 fixtures=$2 golden=$3 name=$4 want_rc=$5
shift 5
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
cd "$fixtures" || exit 1
"$tool" "$@" >"$out" 2>"$err"
rc=$?
# The sanitizers' own summary lines are not ours to compare.
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$out" "$golden/$name.out"
	if [ -s "$err" ]; then cp "$err" "$golden/$name.err"; else rm -f "$golden/$name.err"; fi
fi
status=0
if [ "$rc" != "$want_rc" ]; then
	echo "FAIL $name: exit status $rc, expected $want_rc"
	status=1
fi
if ! diff -u "$golden/$name.out" "$out"; then
	echo "FAIL $name: standard output differs from $golden/$name.out"
	status=1
fi
want_err=/dev/null
[ -f "$golden/$name.err" ] && want_err="$golden/$name.err"
if ! diff -u "$want_err" "$err"; then
	echo "FAIL $name: standard error differs"
	status=1
fi
exit $status
