#!/bin/bash
# kernel_test.sh MODE PORT PROG SRCDIR CLOSURETRACE: one port of tests/suites/kernel, plain (MODE
# run) or under closuretrace check (MODE check, root and BPF; elsewhere SKIP, exit 77, unless
# CLOSURETRACE_NO_SKIP=1). Asserts exit statuses, output and diagnostics exactly.
set -u
MODE=$1 PORT=$2 PROG=$3 SRC=$4 CT=$5
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common.sh" # skip_without_bpf
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

fail() {
	echo "FAIL [$MODE $PORT]: $*"
	for f in out err; do
		[ -s $f ] && { echo "--- $f:"; cat $f; }
	done
	exit 1
}

# The line of a source file that carries a marker comment.
line_of() {
	grep -n "/\* $2 \*/" "$SRC/$1" | cut -d: -f1
}

# What each port prints when its own checks hold.
case $PORT in
writeback) WANT='^writeback: 200 extents written back in 2 passes, 1 read error retried$' ;;
journal) WANT='^journal: [0-9]+ keys from 4 threads in [0-9]+ journal writes, [0-9]+ waits for room$' ;;
btree_write) WANT='^btree_write: 32 nodes written 4 times, 1 write error, superblocks at seq 2$' ;;
request_read) WANT='^request_read: 400 reads, [0-9]+ extent hits, [0-9]+ misses, [0-9]+ inserted$' ;;
bcachefs_journal_read) WANT='^bcachefs_journal_read: 96 jsets from 3 devices; a bad bucket: -EIO, 80 read; 200 transactions put$' ;;
uuid_write) WANT='^uuid_write: 16 UUID writes to 2 devices, 1 write error$' ;;
btree_write_forget_put) WANT= ;;
*) fail "unknown port" ;;
esac

expect_rc() {
	[ "$RC" = "$1" ] || fail "exit status $RC, expected $1"
}

expect_output() {
	[ "$(wc -l <out)" = 1 ] && grep -Eq "$WANT" out || fail "output does not match $WANT"
}

# btree_write_forget_put: its own check finds the cache set never freed, at the kcheck's line.
expect_not_freed() {
	local line
	line=$(grep -n 'cache set still referenced after unregister' "$SRC/btree_write.c" | cut -d: -f1)
	grep -qx ".*btree_write.c:$line: cache set still referenced after unregister: not freed" err ||
		fail "the port did not report its cache set unfreed"
	[ ! -s out ] || fail "output on a failed run"
}

diagnostics() {
	grep -E '^[^ ]+: (error|note): ' err
}

summary() {
	grep '^closuretrace: ' err | grep -v ': error: ' | head -1
}

case $MODE in
run)
	"$PROG" >out 2>err </dev/null
	RC=$?
	if [ "$PORT" = btree_write_forget_put ]; then
		expect_rc 1
		expect_not_freed
	else
		expect_rc 0
		expect_output
		[ ! -s err ] || fail "stderr on a clean run"
	fi
	;;
check)
	skip_without_bpf
	"$CT" check -- "$PROG" >out 2>err </dev/null
	RC=$?
	if [ "$PORT" = btree_write_forget_put ]; then
		# The port exits 1 itself (its cache set is not freed); check blames the one put.
		expect_rc 1
		expect_not_freed
		# Exactly one error, at the put the error path skips; the notes name the io closure's
		# init in __bch_btree_node_write and the cache set it keeps alive.
		f=$(shown_source "$SRC/btree_write.c" "$(dirname "$PROG")")
		want="$f:$(line_of btree_write.c BUG-SITE): error: closure leaked: put 0 references back; the finished closures of its kind put 1 here
$f:$(line_of btree_write.c INIT-IO): note: the leaked closure (__bch_btree_node_write -> btree_node_write_done) was initialised here, in __bch_btree_node_write
$f:$(line_of btree_write.c INIT-CACHE-SET): note: it keeps alive its parent (bch_cache_set_alloc), initialised here"
		[ "$(diagnostics | grep -c ': error: ')" = 1 ] || fail "expected exactly one error"
		# How many puts its finished siblings made at that line is an average: 1, or just under
		# when one's put reached the trace after its finish (set aside). Compare it apart.
		puts=$(diagnostics | sed -n 's/.*the finished closures of its kind put \([0-9.]*\) here$/\1/p')
		awk -v p="$puts" 'BEGIN { exit !(p > 0.9 && p <= 1) }' || fail "siblings' puts: '$puts'"
		want=${want/put 1 here/put $puts here}
		[ "$(diagnostics)" = "$want" ] || fail "diagnostics differ; expected:
$want"
		[[ "$(summary)" =~ ^closuretrace:\ 1\ error:\ 1\ closure\ leaked\ or\ stuck\;\ [0-9]+\ events,\ 0\ lost$ ]] ||
			fail "summary '$(summary)'"
	else
		expect_rc 0
		expect_output
		[ -z "$(diagnostics)" ] || fail "diagnostics on a clean port"
		[[ "$(summary)" =~ ^closuretrace:\ no\ leaks\;\ [0-9]+\ events,\ 0\ lost$ ]] ||
			fail "summary '$(summary)'"
	fi
	;;
*) fail "unknown mode" ;;
esac
echo "ok: $MODE $PORT"
