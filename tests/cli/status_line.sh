#!/usr/bin/env bash
# record's live status line is drawn only on a terminal that is not the program's: a launched
# command (which writes to our terminal) and a -p process writing to it get none, so that no
# "5 live" ends up inside the program's own lines; a -p process writing elsewhere gets it. Each
# case runs in a terminal of its own (script(1)); the service runs 2.5 s (6 s), the line comes
# each second.
#   status_line.sh CLOSURETRACE SERVICE
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ct=$1 service=$2
scratch
skip_without_bpf

in_terminal() { # in_terminal NAME SCRIPT: runs SCRIPT in a new terminal, its screen in NAME.tty
	script -qec "bash -c '$2'" "$1.tty" >/dev/null </dev/null || fail "$1: exit $?: $(cat "$1.tty")"
}
svc="$service --rate 1000 --requests 2500"
in_terminal launched "$ct record -o launched.json -- $svc"
in_terminal own "$svc & $ct record -o own.json -p \$! -d 2; wait"
# 5 s of recording for a line drawn each second: at least one, however loaded the machine.
in_terminal other "$service --rate 1000 --requests 6000 >/dev/null 2>&1 & $ct record -o other.json -p \$! -d 5; wait"
for c in launched own; do
	grep -q 'events/s' "$c.tty" && fail "$c: a status line on the program's terminal: $(cat -v "$c.tty")"
	grep -q 'closuretrace: [0-9]* events, [0-9]* lost' "$c.tty" || fail "$c: no summary: $(cat -v "$c.tty")"
done
echo "ok: no status line on the program's own terminal (launched, and -p)"
grep -q $'^\rclosuretrace: [0-9]* events/s' other.tty ||
	fail "other: no status line on a terminal the program does not write to: $(cat -v other.tty)"
echo "ok: the status line on a terminal that is not the program's"
