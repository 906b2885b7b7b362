#!/usr/bin/env bash
# The EXIT STATUS sections of report(1), explain(1), graph(1) and timeline(1), for the cases the
# goldens do not hold: bad usage (an unknown option, a missing or extra argument) is 2 with a
# message and nothing on standard output; --help is 0.
#   exit_status.sh CLOSURETRACE FIXTURES
set -u
tool=$1 fixtures=$2
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
keep_going=1
scratch
cd "$fixtures" || exit 1
# expect RC ARGS...: exit status RC; on 2, a message on standard error and no output.
expect() {
	local want=$1 rc out err
	shift
	out=$("$tool" "$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
	[ "$rc" = "$want" ] || fail "closuretrace $*: exit $rc, expected $want"
	if [ "$want" = 2 ]; then
		[ -n "$err" ] || fail "closuretrace $*: exit 2 without a message"
		[ -z "$out" ] || fail "closuretrace $*: output on a usage error"
	fi
}
for cmd in report explain graph timeline; do
	expect 0 "$cmd" --help
	expect 2 "$cmd" --bogus -i fold.json
	expect 2 "$cmd" -i
done
expect 2 report -i fold.json extra
expect 2 explain -i fold.json
expect 2 explain -i fold.json 0x7f0000030000 extra
expect 2 graph -T dot -i fold.json extra
expect 2 timeline -i fold.json extra
[ $status = 0 ] && echo "ok: bad usage is 2 for report, explain, graph and timeline"
exit $status
