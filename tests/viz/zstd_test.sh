#!/usr/bin/env bash
# Compressed traces (issue 26 item 3): every reader takes zstd by its magic, whatever the name and
# from a pipe, frame after frame; a damaged one is one line `FILE: error: ...` and exit 2, never a
# hang or a crash; frames cut at their end (a killed recorder) read as a trace cut short.
#   zstd_test.sh CLOSURETRACE FIXTURES
set -uo pipefail
ct=$1 fixtures=$2
# shellcheck source=tests/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
command -v zstd >/dev/null || fail "zstd (the command) is not installed: scripts/deps.sh"
keep_going=1
cp "$fixtures/leak_under_children.json" plain.json
zstd -q plain.json -o a.zst
cp a.zst named.json # the name says nothing: the magic does

# Every presentation reads the compressed trace as the plain one.
for cmd in "report" "report --json" "graph -T dot" "timeline" "explain 0x7f0000001000"; do
	# shellcheck disable=SC2086 # the command's words
	timeout 10 "$ct" $cmd -i plain.json >want.txt 2>&1 || fail "$cmd of plain.json"
	for f in a.zst named.json; do
		# shellcheck disable=SC2086
		timeout 10 "$ct" $cmd -i $f >got.txt 2>&1 || fail "$cmd of $f: $(cat got.txt)"
		diff <(sed "s/plain\.json/X/g" want.txt) <(sed "s/$f/X/g" got.txt) >/dev/null ||
			fail "$cmd of $f differs: $(diff want.txt got.txt | head -5)"
	done
done
timeout 10 "$ct" report -i - <a.zst >pipe.txt 2>&1 || fail "report from a pipe: $(cat pipe.txt)"
diff <(tail -n +2 pipe.txt) <("$ct" report -i plain.json | tail -n +2) || fail "report from a pipe differs"

# Frames one after the other (what the recorder writes), and a skippable frame among them.
head -n 5 plain.json | zstd -q -c >frames.zst
printf '\x50\x2a\x4d\x18\x03\x00\x00\x00abc' >>frames.zst
tail -n +6 plain.json | zstd -q -c >>frames.zst
diff <("$ct" report -i plain.json | tail -n +2) <("$ct" report -i frames.zst | tail -n +2) ||
	fail "report of three frames differs"

# A trace without its end record, in whole frames: read to its last line, said cut short.
zstd -q -c "$fixtures/truncated.json" >cut_frames.zst
expect 0 "cut_frames.zst: warning: no end record: the trace was cut short; read up to line $(wc -l <"$fixtures/truncated.json")" \
	"$ct" report -i cut_frames.zst

# Damaged: each a single error line and exit 2, within the time limit.
size=$(stat -c %s a.zst)
head -c $((size - 7)) a.zst >cut.zst
expect 2 "cut.zst: error: the compressed trace is cut short inside a zstd frame (after byte $((size - 7)) of the file): the recording was killed while writing, or the file was truncated" \
	timeout 10 "$ct" report -i cut.zst
: >empty.zst
expect 2 "empty.zst: error: empty file: not a closuretrace trace" timeout 10 "$ct" report -i empty.zst
printf '\x28\xb5\x2f\xfd' >magic.zst
expect 2 "magic.zst: error: the compressed trace is cut short inside a zstd frame (after byte 4 of the file): the recording was killed while writing, or the file was truncated" \
	timeout 10 "$ct" report -i magic.zst
# A byte flipped inside a block with a checksum (zstd's default, and the recorder's).
python3 -c 'import sys; d = bytearray(open("a.zst", "rb").read()); d[len(d) // 2] ^= 0x55; sys.stdout.buffer.write(d)' >flip.zst
timeout 10 "$ct" report -i flip.zst >/dev/null 2>err.txt
rc=$?
[ $rc = 2 ] || fail "a flipped byte: exit $rc"
grep -Eq '^flip\.zst(:[0-9]+)?: error: ' err.txt && [ "$(wc -l <err.txt)" = 1 ] || fail "a flipped byte: $(cat err.txt)"
# Bytes after the last frame that are no frame.
{ cat a.zst; printf 'garbage'; } >tail.zst
expect 2 "tail.zst: error: corrupt zstd data near byte $size of the file: Unknown frame descriptor" \
	timeout 10 "$ct" report -i tail.zst
# A frame that asks for a 2 GiB window: refused before any memory is taken.
printf '\x28\xb5\x2f\xfd\x00\xa8\x01\x00\x00' >window.zst
expect 2 "window.zst: error: corrupt zstd data near byte 0 of the file: Frame requires too much memory for decoding" \
	timeout 10 "$ct" report -i window.zst
# Valid zstd, but not a trace.
printf 'hello\n' | zstd -q -c >hello.zst
expect 2 "hello.zst:1: error: invalid JSON: '[' or '{' expected near 'hello' (column 5)" timeout 10 "$ct" report -i hello.zst
exit $status
