#!/usr/bin/env bash
# closure.h compiles cleanly (-pedantic -Wall -Wextra -Werror) under every standard a user may
# pick: ISO C11, C17 and C23 (gcc 12 spells it c2x), the same with GNU extensions, and C++17,
# with the probes compiled in and out; each program is linked with libclosure and run. Run with
# GCC and with Clang (lib.header_std, lib.header_std_clang).
#   header_std.sh CC CXX INCLUDE_DIR CONFIG_INCLUDE_DIR LIBRARY_DIR SOURCE [SANITIZERS]
set -uo pipefail
cc=$1 cxx=$2 inc=$3 cfg=$4 libdir=$5 src=$6 san=${7:-}
sanitize=()
[[ -n $san ]] && sanitize=(-fsanitize="$san")
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
n=0
for probes in 1 0; do
	for std in c11 c17 c2x gnu11 gnu17 gnu2x c++17 gnu++17; do
		compiler=$cc lang=c
		[[ $std == *++* ]] && compiler=$cxx lang=c++
		exe=$tmp/$std.$probes
		"$compiler" "${sanitize[@]}" -x "$lang" -std="$std" -pedantic -Wall -Wextra -Werror \
			-DCLOSURE_PROBES="$probes" -I"$inc" -I"$cfg" "$src" -o "$exe" \
			-L"$libdir" -Wl,-rpath,"$libdir" -lclosure -pthread 2>"$tmp/err" ||
			fail "-std=$std, CLOSURE_PROBES=$probes: $(head -20 "$tmp/err")"
		[[ -s $tmp/err ]] && fail "-std=$std, CLOSURE_PROBES=$probes: diagnostics: $(head -20 "$tmp/err")"
		"$exe" || fail "-std=$std, CLOSURE_PROBES=$probes: the program exits $?"
		echo "ok: -std=$std, CLOSURE_PROBES=$probes"
		n=$((n + 1))
	done
done
[[ $n == 16 ]] || fail "$n variants compiled, expected 16"
