#!/usr/bin/env bash
# Every reader under the tool's memory limit (issue 37 item 1, issue 38 item 4): a 3,000,000-line
# .zst bomb (a few tens of KB; its lives would take about 2 GB) read with --max-memory 256M by
# report, report --json, explain, graph and timeline ends with the one error naming the limit and
# exit 2, near the limit, leaving no output and no temporary file; a wrong size is refused.
#   max_memory_test.sh CLOSURETRACE GEN_HOSTILE_PY
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ct=$1 gen=$2
scratch
python3 "$gen" bomb 3000000 | zstd -q -3 >bomb.json.zst || fail "cannot make the bomb"
says="closuretrace: out of memory (past the memory limit of 256 MiB; --max-memory raises it)"
for cmd in "report" "report --json" "explain 0x7f0000000000#2999999" "graph -o out.svg" \
	"timeline -o out.json"; do
	# shellcheck disable=SC2086 # the command's words
	read -r rc kb < <(peak "$ct" $cmd -i bomb.json.zst --max-memory 256M)
	[ "$rc" = 2 ] || fail "$cmd: exit $rc, not 2: $(head -c 300 "$tmp/err")"
	[ "$(tail -1 "$tmp/err")" = "$says" ] || fail "$cmd: said $(cat "$tmp/err")"
	[ "$kb" -lt $((320 << 10)) ] || fail "$cmd: peaked at $kb kB under a 256 MiB limit"
	[ -z "$(ls -A | grep -v '^bomb.json.zst$\|^out$\|^err$')" ] || fail "$cmd left files: $(ls -A)"
	echo "ok: $cmd: exit 2 at $kb kB, '$says'"
done
expect_usage() {
	"$ct" report -i bomb.json.zst --max-memory "$1" >out 2>err
	[ $? = 2 ] && [ "$(cat err)" = "closuretrace report: --max-memory needs a size from 16M (512M, 4G): $1; see 'closuretrace report --help'" ] ||
		fail "--max-memory $1: $(cat err)"
}
for bad in 1M 12X -5G ""; do expect_usage "$bad"; done
echo "ok: sizes under 16M or not sizes refused (exit 2)"
