#!/usr/bin/env bash
# Hostile shapes of input (issue 12): every command ends, with bounded memory, and says why.
# - a parent chain 70,000 deep, every closure leaked: graph draws it in every mode (no recursion
#   over user data): its top, "… 69998 levels …" (one red node: they are leaked alike) and its
#   leaf, in -T dot too (issue 40 item 3); with --no-fold, -T dot has every level;
# - laid out (svg), 250,000 and 70,000 deep: elided likewise; with --no-fold, cut at 256 levels,
#   the leaked closures below in one red node, under 1 GB;
# - a line of 20 MB, and /dev/zero (no newline at all): "FILE:LINE: error: line longer than ...",
#   exit 2, with memory bounded by the line cap (16 MiB), not by the input.
#   hostile.sh CLOSURETRACE GEN_HOSTILE_PY
set -u
tool=$1 gen=$2
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1

python3 "$gen" deep 70000 >"$tmp/deep.json"
for mode in "" --leaks "--root 0x10"; do
	# shellcheck disable=SC2086
	"$tool" graph -T dot --no-fold $mode -i "$tmp/deep.json" >"$tmp/deep.dot" 2>"$tmp/err"
	rc=$?
	[ $rc = 0 ] || fail "graph --no-fold $mode of a 70,000-deep chain: exit $rc: $(head -c 300 "$tmp/err")"
	nodes=$(grep -cE '^	c[0-9]+	\[' "$tmp/deep.dot")
	[ "$nodes" = 70000 ] || fail "graph --no-fold $mode: $nodes nodes, expected 70000"
	edges=$(grep -cE '^	c[0-9]+ -> c[0-9]+' "$tmp/deep.dot")
	[ "$edges" = 69999 ] || fail "graph --no-fold $mode: $edges edges, expected 69999"
	# shellcheck disable=SC2086
	"$tool" graph -T dot $mode -i "$tmp/deep.json" >"$tmp/deep.dot" 2>"$tmp/err"
	rc=$?
	[ $rc = 0 ] || fail "graph $mode of a 70,000-deep chain: exit $rc: $(head -c 300 "$tmp/err")"
	nodes=$(grep -cE '^	[cf][0-9]+	\[' "$tmp/deep.dot")
	[ "$nodes" = 3 ] || fail "graph $mode: $nodes nodes, expected 3 (top, elision, leaf)"
	grep -q 'label="… 69998 levels …\\n41:0x20#1 to 41:0x1116f0#1\\n0x401000\\nLEAKED: 69998 refs held in all' \
		"$tmp/deep.dot" || fail "graph $mode: no elision node for 69998 levels"
	grep -q '^	c69999	\[color=red,$' "$tmp/deep.dot" || fail "graph $mode: the leaf is not drawn red"
done

# Laid out (svg): elided likewise. With --no-fold a chain is cut at 256 levels, one node saying
# how many closures are left out: 250,000 deep under 1 GB (it was 3.3 GB, then a crash inside
# libgvc), 70,000 deep likewise.
for n in 250000 70000; do
	python3 "$gen" deep $n >"$tmp/deep.json"
	read -r rc kb < <(peak "$tool" graph -T svg -i "$tmp/deep.json" -o "$tmp/deep.svg")
	[ "$rc" = 0 ] || fail "graph -T svg of a $n-deep chain: exit $rc: $(head -c 300 "$tmp/err")"
	grep -q ">… $((n - 2)) levels …<" "$tmp/deep.svg" ||
		fail "graph -T svg of a $n-deep chain: no elision of $((n - 2)) levels"
	read -r rc kb < <(peak "$tool" graph -T svg --no-fold -i "$tmp/deep.json" -o "$tmp/deep.svg")
	[ "$rc" = 0 ] || fail "graph -T svg --no-fold of a $n-deep chain: exit $rc: $(head -c 300 "$tmp/err")"
	[ "$kb" -lt 1048576 ] || fail "graph -T svg --no-fold of a $n-deep chain: peak memory ${kb} KB, over 1 GB"
	grep -q ">×$((n - 256)) LEAKED below, not drawn (deeper than 256 levels), first like " "$tmp/deep.svg" ||
		fail "graph -T svg --no-fold of a $n-deep chain: no cut node for $((n - 256)) closures: $(grep -o '[0-9]* LEAKED below[^<]*' "$tmp/deep.svg")"
	echo "ok: graph -T svg --no-fold of a $n-deep chain: peak $kb KB, cut at 256 levels"
done

python3 "$gen" longline 20000000 >"$tmp/long.json"
read -r rc kb < <(peak "$tool" report -i "$tmp/long.json")
[ "$rc" = 2 ] || fail "long line: exit $rc, expected 2"
grep -qx "$tmp/long.json:2: error: line longer than 16 MiB (16777216 bytes), the format's limit" \
	"$tmp/err" || fail "long line: message: $(head -c 300 "$tmp/err")"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "long line: more than one message: $(cat "$tmp/err")"

read -r rc kb < <(peak "$tool" report -i /dev/zero)
[ "$rc" = 2 ] || fail "/dev/zero: exit $rc, expected 2"
grep -qx "/dev/zero:1: error: line longer than 16 MiB (16777216 bytes), the format's limit" \
	"$tmp/err" || fail "/dev/zero: message: $(head -c 300 "$tmp/err")"
# The 16 MiB line buffer and the program; under ASan its shadow and quarantine on top.
[ "$kb" -lt 262144 ] || fail "/dev/zero: peak memory ${kb} KB, expected under 256 MB"
exit $status
