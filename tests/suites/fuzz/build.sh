#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (-fsanitize=fuzzer,address,undefined), each with the
# sources it fuzzes compiled in, so that coverage guides the fuzzer through them.
#   build.sh SRCDIR OUTDIR
set -euo pipefail
src=$1 out=$2
mkdir -p "$out"
cc=${FUZZ_CC:-clang}
flags=(-std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=all -Wall -Wextra -Werror -I"$src/lib/include")
# shellcheck disable=SC2207
viz_cflags=($(pkg-config --cflags jansson libgvc libzstd)) viz_libs=($(pkg-config --libs jansson libgvc libzstd))
# shellcheck disable=SC2207
elf_cflags=($(pkg-config --cflags libelf)) elf_libs=($(pkg-config --libs libelf))

"$cc" "${flags[@]}" "${viz_cflags[@]}" -I"$src/viz" -I"$src/trace" -I"$src/common" -I"$src/bpf" \
	"$src"/viz/*.c "$src"/common/*.c "$src/trace/trace_input.c" "$src/trace/trace_reader.c" "$src/trace/trace_line.c" \
	"$src/trace/json_string.c" "$src/trace/json_value.c" "$src/trace/trace_frames.c" \
	"$src/trace/trace_format.c" "$src/trace/time_order.c" \
	"$src/trace/trace_text.c" "$src/trace/trace_args.c" "$src/trace/trace_error.c" "$src/tests/suites/fuzz/fuzz_trace.c" \
	-o "$out/fuzz_trace" "${viz_libs[@]}" -lm
# check's suppression parser.
"$cc" "${flags[@]}" -I"$src/viz" -I"$src/trace" "$src/viz/check_supp.c" "$src/viz/source_path.c" "$src/trace/trace_error.c" "$src/trace/trace_text.c" \
	"$src/tests/suites/fuzz/fuzz_supp.c" \
	-o "$out/fuzz_supp"
"$cc" "${flags[@]}" "${elf_cflags[@]}" -I"$src/process" -I"$src/bpf" "$src/process/elf_probes.c" \
	"$src/process/object_open.c" "$src/process/ld_search.c" \
	"$src/tests/suites/fuzz/fuzz_elf.c" \
	-o "$out/fuzz_elf" "${elf_libs[@]}"
