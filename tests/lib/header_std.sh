#!/usr/bin/env bash
# closure.h compiles cleanly (-pedantic -Wall -Wextra -Werror) under the language standard STD, one
# test per standard a user may pick (lib.header_std.STD: ISO C11, C17 and C23, which gcc 12 spells
# c2x, the same with GNU extensions, C++11, C++14, C++17 and C++20), with the probes compiled in and
# out: header_use.c, a program as a user writes it, and header_null.c with NULL, 0 and (C++)
# nullptr for every pointer argument (issue 39: NULL, an integer in C++, was ambiguous). Each
# program is linked with libclosure and run. Run with GCC and with Clang (lib.header_std_clang.STD).
#   header_std.sh CC CXX INCLUDE_DIR CONFIG_INCLUDE_DIR LIBRARY_DIR SOURCE_DIR STD [SANITIZERS]
set -uo pipefail
cc=$1 cxx=$2 inc=$3 cfg=$4 libdir=$5 src=$6 std=$7 san=${8:-}
sanitize=()
[[ -n $san ]] && sanitize=(-fsanitize="$san")
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
compiler=$cc lang=c nulls=(NULL 0)
[[ $std == *++* ]] && compiler=$cxx lang=c++ nulls=(NULL 0 nullptr)
n=0
# build_run WHAT SOURCE FLAGS...: compiled without a diagnostic, linked, and the program exits 0.
build_run() {
	local what=$1 source=$2 exe=$tmp/prog
	shift 2
	rm -f "$exe"
	"$compiler" "${sanitize[@]}" -x "$lang" -std="$std" -pedantic -Wall -Wextra -Werror "$@" \
		-I"$inc" -I"$cfg" "$source" -o "$exe" -L"$libdir" -Wl,-rpath,"$libdir" -lclosure \
		-pthread 2>"$tmp/err" || fail "-std=$std, $what: $(head -20 "$tmp/err")"
	[[ -s $tmp/err ]] && fail "-std=$std, $what: diagnostics: $(head -20 "$tmp/err")"
	"$exe" || fail "-std=$std, $what: the program exits $?"
	echo "ok: -std=$std, $what"
	n=$((n + 1))
}
for probes in 1 0; do
	build_run "header_use.c, CLOSURE_PROBES=$probes" "$src/header_use.c" -DCLOSURE_PROBES="$probes"
	for null in "${nulls[@]}"; do
		build_run "header_null.c with $null, CLOSURE_PROBES=$probes" "$src/header_null.c" \
			-DCLOSURE_PROBES="$probes" -DNUL="$null"
	done
done
want=$((2 * (1 + ${#nulls[@]})))
[[ $n == "$want" ]] || fail "$n variants built and run, expected $want"
