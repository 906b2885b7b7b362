#!/usr/bin/env bash
# usage: blockio_counts.sh BLOCKIO BLOCKIO_STATIC
# blockio --counts is what the bpftrace tests compare against, so it must not depend on timing:
# the same for any number of threads and any plug batch, shared or static. And --leak must change
# it by exactly one leaked bio: one more get; that bio, its request and the root never return, so
# each loses its return (continue_at), its run, its finish and the put on its parent; the request
# also its destructor.
set -euo pipefail
shared=$1 static=$2
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

base=$("$shared" --requests 30 --bios 3 --counts)
echo "$base"
for variant in "$shared --threads 1 --plug 1" "$shared --threads 16 --plug 30" \
	"$static --threads 2 --plug 7"; do
	# shellcheck disable=SC2086
	got=$($variant --requests 30 --bios 3 --counts)
	[ "$got" = "$base" ] || fail "'$variant' counts differ:"$'\n'"$got"
done

leak=$("$shared" --requests 30 --bios 3 --counts --leak 2>/dev/null)
delta=$(paste <(echo "$base") <(echo "$leak") | awk '$1 != $3 { exit 1 } { printf "%s %+d\n", $1, $4 - $2 }') ||
	fail "--leak printed other probes:"$'\n'"$leak"
expected="init +0
get +1
put -3
sub +0
continue_at -3
run -3
finish -3
destructor -1
wait +0
wake +0
sync_begin +0
sync_end +0"
[ "$delta" = "$expected" ] || fail "--leak changed the counts by:"$'\n'"$delta"
echo "PASS: counts independent of threads and batching; --leak costs exactly one bio"
