#!/usr/bin/env bash
# Outputs written completely or not at all (issue 12, items 9 and 13):
# - report, report --json, explain and graph to a full device: exit 2 and one line saying so;
# - graph -o FILE: written beside FILE and renamed, so a failing run leaves FILE as it was, no
#   temporary file is left behind, and a planted dangling link is replaced, never followed.
#   outputs.sh CLOSURETRACE FIXTURES
set -u
tool=$1 fixtures=$2
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
keep_going=1
scratch
trace=$fixtures/leak_under_children.json

full() { # full WANT_MESSAGE ARGS...: the command writes to /dev/full
	local want=$1
	shift
	"$tool" "$@" >/dev/full 2>err
	rc=$?
	[ $rc = 2 ] || fail "$* > /dev/full: exit $rc, expected 2"
	[ "$(cat err)" = "$want" ] || fail "$* > /dev/full: said '$(cat err)', expected '$want'"
}
for args in "report" "report --json" "explain 0x7f0000002200" "graph" "graph -T dot" "graph -T png"; do
	cmd=${args%% *}
	# shellcheck disable=SC2086
	full "closuretrace $cmd: cannot write standard output: No space left on device" \
		$args -i "$trace"
done

"$tool" graph -i "$trace" -o /dev/full 2>err
rc=$?
[ $rc = 2 ] || fail "graph -o /dev/full: exit $rc, expected 2"
[ "$(cat err)" = "closuretrace graph: cannot write /dev/full: No space left on device" ] ||
	fail "graph -o /dev/full said: $(cat err)"

# A run that fails (no such root) leaves the previous picture whole, and no temporary file.
echo previous >existing.svg
"$tool" graph -i "$trace" -o existing.svg --root 0xdead 2>err
rc=$?
[ $rc = 2 ] || fail "graph --root 0xdead: exit $rc, expected 2"
[ "$(cat existing.svg)" = previous ] || fail "existing.svg was changed by a failed run"
[ "$(ls -A | sort | tr '\n' ' ')" = "err existing.svg " ] || fail "left behind: $(ls -A)"

# A run that succeeds replaces it, with the mode the file had.
chmod 640 existing.svg
"$tool" graph -i "$trace" -o existing.svg || fail "graph -o existing.svg: exit $?"
head -c 5 existing.svg | grep -q '<?xml' || fail "existing.svg is not the new picture"
[ "$(stat -c %a existing.svg)" = 640 ] || fail "existing.svg mode $(stat -c %a existing.svg)"

# A dangling link planted under the output's name: the link is replaced, its target not created.
ln -s "$tmp/victim" planted.svg
"$tool" graph -i "$trace" -o planted.svg || fail "graph -o planted.svg: exit $?"
[ -e victim ] && fail "graph followed a dangling link and created its target"
[ -f planted.svg ] && [ ! -L planted.svg ] || fail "planted.svg is not a plain file"

# A link to an existing file: that file gets the picture, the link stays.
echo old >real.svg
ln -s real.svg link.svg
"$tool" graph -i "$trace" -o link.svg || fail "graph -o link.svg: exit $?"
[ -L link.svg ] || fail "link.svg is no longer a link"
head -c 5 real.svg | grep -q '<?xml' || fail "real.svg did not get the picture"

# A new file: the usual mode under the umask; standard output through /dev/stdout works.
(umask 027 && "$tool" graph -i "$trace" -o new.svg) || fail "graph -o new.svg: exit $?"
[ "$(stat -c %a new.svg)" = 640 ] || fail "new.svg mode $(stat -c %a new.svg), expected 640"
"$tool" graph -T dot -i "$trace" -o /dev/stdout | grep -q '^digraph closures' ||
	fail "graph -o /dev/stdout wrote no graph"
# Without -T, the format is the extension's (issue 9, item 8); an unknown one is an error.
"$tool" graph -i "$trace" -o tree.png || fail "graph -o tree.png: exit $?"
head -c 8 tree.png | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a' || fail "tree.png is not a PNG"
"$tool" graph -i "$trace" -o tree.PDF || fail "graph -o tree.PDF: exit $?"
head -c 5 tree.PDF | grep -q '%PDF-' || fail "tree.PDF is not a PDF"
"$tool" graph -i "$trace" -o tree.gv || fail "graph -o tree.gv: exit $?"
head -1 tree.gv | grep -q '^digraph closures' || fail "tree.gv is not dot"
"$tool" graph -i "$trace" -T svg -o forced.png || fail "graph -T svg -o forced.png: exit $?"
head -c 5 forced.png | grep -q '<?xml' || fail "-T svg did not win over the extension"
"$tool" graph -i "$trace" -o tree.gif 2>err
rc=$?
[ $rc = 2 ] || fail "graph -o tree.gif: exit $rc, expected 2"
[ "$(cat err)" = "closuretrace graph: cannot tell the format of 'tree.gif' from its name: use .svg, .png, .pdf or .dot, or -T svg|png|pdf|dot" ] ||
	fail "graph -o tree.gif said: $(cat err)"
[ -e tree.gif ] && fail "graph -o tree.gif created the file"
ls -A | grep -q '^\.' && fail "temporary files left behind: $(ls -A)"
exit $status
