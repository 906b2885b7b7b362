#!/usr/bin/env bash
# What a new user meets first. A viewer run where there is no trace yet says so and hints to
# record one (only for the default closuretrace.json: a missing -i FILE is a plain error); a
# binary graph format is refused on a terminal (script(1) gives one) unless -o, and written to
# a pipe or a file as asked.
#   first_use.sh CLOSURETRACE FIXTURES
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ct=$1 fixtures=$2
scratch

hint="hint: no trace here to read; record one first: closuretrace record -- COMMAND (or record -p PID), or name one with -i TRACE"
missing="closuretrace.json: error: No such file or directory"
for cmd in report graph "explain 0x1" timeline; do
	# shellcheck disable=SC2086 # explain takes its address as a word of its own
	expect 2 "$missing
closuretrace ${cmd%% *}: $hint" "$ct" $cmd
	[[ -s out.txt ]] && fail "$cmd: output without a trace: $(cat out.txt)"
done
expect 2 "elsewhere.json: error: No such file or directory" "$ct" report -i elsewhere.json
echo "ok: report, graph, explain and timeline hint to record first; -i FILE does not"

in_terminal() { # in_terminal NAME ARGS...: closuretrace ARGS on a terminal; exit in NAME.rc
	local name=$1
	shift
	script -qec "$ct $* ; echo \$? >$PWD/$name.rc" "$name.tty" >/dev/null </dev/null
}
for fmt in png pdf; do
	in_terminal "$fmt" graph -T "$fmt" -i "$fixtures/fold.json"
	[[ $(cat "$fmt.rc") == 2 ]] || fail "graph -T $fmt on a terminal: exit $(cat "$fmt.rc")"
	grep -q "closuretrace graph: -T $fmt is binary, not written to a terminal: give -o FILE, or redirect the output" "$fmt.tty" ||
		fail "graph -T $fmt on a terminal: $(cat -v "$fmt.tty")"
	in_terminal "$fmt-o" graph -T "$fmt" -i "$fixtures/fold.json" -o "tree.$fmt"
	[[ $(cat "$fmt-o.rc") == 0 && -s tree.$fmt ]] || fail "graph -T $fmt -o on a terminal: $(cat -v "$fmt-o.tty")"
	"$ct" graph -T "$fmt" -i "$fixtures/fold.json" | cat >"piped.$fmt" || fail "graph -T $fmt | cat"
	cmp -s "piped.$fmt" "tree.$fmt" || [[ $fmt == pdf ]] || fail "graph -T $fmt: the pipe and -o differ"
	[[ -s piped.$fmt ]] || fail "graph -T $fmt to a pipe wrote nothing"
done
in_terminal svg graph -i "$fixtures/fold.json"
[[ $(cat svg.rc) == 0 ]] && grep -q '<svg' svg.tty || fail "graph (svg) on a terminal: $(head -c 300 svg.tty)"
head -c 8 tree.png | od -An -c | grep -q 'P   N   G' || fail "tree.png is not a PNG"
head -c 5 tree.pdf | grep -q '%PDF-' || fail "tree.pdf is not a PDF"
echo "ok: png and pdf refused on a terminal, written with -o and to a pipe; svg shown"
