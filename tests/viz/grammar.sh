#!/usr/bin/env bash
# Every message template proofread (issue 21 item 4): report, report --json, graph -T dot, explain,
# timeline, check, list, top and ps render each count with 1 and with many (1 and 5 leaks, 1 and 3 lost events,
# 1 and 3 events set aside, one stuck closure and several, every fixture), and no text says
# "1 events", "3 closure", "the child the running reference" or a doubled word.
# check's diagnostics are rendered from each trace too (tests/viz/check_judge), and by check
# itself on a service that leaks 1 closure and 4.
#   grammar.sh CLOSURETRACE VIZ_TRACEGEN FIXTURES SERVICE CHECK_JUDGE
set -u
tool=$1 gen=$2 fixtures=$3 service=$4 judge=$5
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
keep_going=1

# Traces with each count at 1 and at many.
"$gen" --chain 1 >"$tmp/chain1.json"
"$gen" --chain 5 >"$tmp/chain5.json"
for n in 1 3; do
	sed "s/\"lost\":0/\"lost\":$n/" "$fixtures/leak_under_children.json" >"$tmp/lost$n.json"
done
for f in "$fixtures"/*.json; do
	case $(basename "$f") in
	malformed.json | bad_field.json | bad_name.json | newer_version.json) continue ;;
	esac
	cp "$f" "$tmp/"
done
# late_event.json sets one event aside; three of them:
python3 - "$fixtures/late_event.json" >"$tmp/late3.json" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
late = [l for l in lines if '"type":"event"' in l.replace(" ", "")][-1]
end = lines[-1]
print("\n".join(lines[:-1] + [late, late, end]))
PY

out=$tmp/all.txt
: >"$out"
for t in "$tmp"/*.json; do
	for cmd in "report" "report --json" "graph -T dot" "timeline -o /dev/null"; do
		# shellcheck disable=SC2086
		"$tool" $cmd -i "$t" >>"$out" 2>&1
	done
	"$judge" "$t" >>"$out" 2>&1
	# explain every closure the report names as leaked or stuck
	for id in $("$tool" report --json -i "$t" 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
for l in (d["leaks"] + d["stuck"] + d["kept_alive"])[:6]:
    print(l["closure"])'); do
		"$tool" explain -i "$t" "$id" >>"$out" 2>&1
	done
done
# check: 1 leak and 4, 1 suppression and 2.
for n in 1 4; do
	"$tool" check -- "$service" --requests $n --children 1 --leak-every 1 --rate 10000 \
		--work-us 10 >>"$out" 2>&1
done

# list, and (root: BPF) top and ps on a running service.
"$tool" list "$service" >>"$out" 2>&1
if [ "$(id -u)" = 0 ]; then
	"$service" --rate 500 --children 1 >/dev/null 2>&1 &
	pids+=("$!")
	sleep 0.3
	"$tool" top -b -n 2 -d 0.2 -p "${pids[-1]}" >>"$out" 2>&1
	"$tool" ps -p "${pids[-1]}" >>"$out" 2>&1
fi

python3 - "$out" >"$tmp/bad" <<'PY'
import re, sys
NOUNS = ("closure", "event", "error", "leak", "reference", "ref", "life", "site", "suppression",
         "warning", "tree", "root cause", "level", "operation", "slice", "arrow", "record",
         "thread", "process", "kind", "note", "request", "bio", "line", "waiter")
PLURAL = {"life": "lives", "process": "processes"}
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
bad = set()
for noun in NOUNS:
    many = PLURAL.get(noun, noun + "s")
    for m in re.finditer(r"(?<![\w.:#x-])1 %s\b" % re.escape(many), text):
        bad.add(m.group(0))
    # "closure" is also an adjective: "2 closure slices"
    adj = r"(?! slices?\b)" if noun == "closure" else ""
    for m in re.finditer(r"(?<![\w.:#x-])(0|[2-9]|[1-9][0-9]+) %s\b(?![_-])%s"
                         % (re.escape(noun), adj), text):
        bad.add(m.group(0))
for m in re.finditer(r"\b1 children\b|\b(0|[2-9]|[1-9][0-9]+) child\b(?![_-])", text):
    bad.add(m.group(0))
for m in re.finditer(r"\b(the|a|an|of|to|is|in|on) \1\b", text):
    bad.add(m.group(0))
for m in re.finditer(r"\bthe child the\b|\bthe child closure_wait\b", text):
    bad.add(m.group(0))
for b in sorted(bad):
    line = next(l for l in text.splitlines() if b in l)
    print("%r in: %s" % (b, line.strip()[:200]))
PY
[ -s "$tmp/bad" ] && fail "text with holes:
$(cat "$tmp/bad")"
lines=$(wc -l <"$out")
[ "$lines" -gt 1000 ] || fail "only $lines lines rendered: the commands did not run"
[ $status = 0 ] && echo "ok: $lines lines of report, graph, explain, timeline, check, list, top and ps proofread"
exit $status
