#!/usr/bin/env bash
# Runs the libFuzzer harnesses that build.sh made, each for SECONDS, from seed corpora of real
# traces (tests/fixtures), hostile shapes (cycles, deep chains, wide levels, long lines, bytes that
# are not UTF-8), suppression files and ELF objects with closure probes. A crash fails the run and
# leaves its input in WORKDIR (printed).
#   run.sh FUZZDIR SRCDIR SECONDS [ELF_SEED...]
set -u
fuzz=$(cd "$1" && pwd) src=$(cd "$2" && pwd) seconds=$3
shift 3
work=$(mktemp -d /tmp/closuretrace-fuzz.XXXXXX)
status=0
mkdir -p "$work/trace" "$work/supp" "$work/elf"

# Small seeds keep the runs fast (the big fixtures take seconds each under ASan).
find "$src/tests/fixtures" -name '*.json' -size -16k -exec cp {} "$work/trace/" \;
gen=$src/tests/fixtures/gen_hostile.py
python3 "$gen" deep 300 >"$work/trace/deep.json"
python3 "$gen" busy 200 >"$work/trace/busy.json"
python3 "$gen" wide 20 >"$work/trace/wide.json"
python3 "$gen" longline 3000 >"$work/trace/longline.json"
# Compressed traces (the reader takes zstd by its magic): whole, in two frames, and cut short.
if command -v zstd >/dev/null; then
	zstd -q -c "$src/tests/fixtures/lives.json" >"$work/trace/lives.zst"
	{ head -n 3 "$src/tests/fixtures/hops.json" | zstd -q -c; tail -n +4 "$src/tests/fixtures/hops.json" | zstd -q -c; } >"$work/trace/hops2.zst"
	head -c 200 "$work/trace/lives.zst" >"$work/trace/lives_cut.zst"
fi
cp "$src"/tests/suites/fuzz/seeds/supp/* "$work/supp/"
for elf in "$@"; do
	cp "$elf" "$work/elf/"
done

run() { # run NAME CORPUS [OPTIONS...]
	local name=$1 corpus=$2
	shift 2
	echo "fuzz: $name for ${seconds} s"
	# Graphviz's own allocations that it never frees are not ours (tests/lsan.supp).
	if ! (cd "$work" && LSAN_OPTIONS=suppressions=$src/tests/lsan.supp:print_suppressions=0 "$fuzz/$name" -max_total_time="$seconds" -timeout=20 \
		-rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 "$@" "$corpus" \
		>"$work/$name.log" 2>&1); then
		echo "FAIL: $name found a crash; its log and input: $work"
		tail -40 "$work/$name.log"
		status=1
	else
		grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$work/$name.log"
	fi
}
run fuzz_trace trace -dict="$src/tests/suites/fuzz/trace.dict" -max_len=65536
run fuzz_supp supp
run fuzz_elf elf
[ $status = 0 ] && rm -rf "$work"
exit $status
