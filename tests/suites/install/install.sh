#!/usr/bin/env bash
# usage: install.sh pkgconfig|cmake|probes BUILD_DIR SOURCE_DIR LIBDIR [SANITIZERS]
# Installs BUILD_DIR into a fresh prefix and uses libclosure from there only, as a user would.
set -euo pipefail
what=$1 build=$(realpath "$2") src=$(realpath "$3") libdir=$4 sanitize=${5:-}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

cmake --install "$build" --prefix "$prefix" >/dev/null
# A sanitized libclosure needs the sanitizer runtime in the program that loads it.
san_flags=()
[ -n "$sanitize" ] && san_flags=("-fsanitize=$sanitize")

# The program must have loaded the installed library, not the one in the build tree.
uses_installed_lib() {
	local lib
	lib=$(LD_LIBRARY_PATH=$prefix/$libdir ldd "$1" | awk '/libclosure\.so/ { print $3 }')
	[ "$(realpath "$lib")" = "$(realpath "$prefix/$libdir/libclosure.so.0")" ] ||
		fail "$1 loads '$lib', not the installed libclosure"
}

case $what in
pkgconfig)
	export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
	inc=$(pkg-config --variable=includedir closure)
	[ "$inc" = "$prefix/include" ] || fail "pkg-config includedir is '$inc', not $prefix/include"
	cd "$tmp"
	# Exactly what a user types (plus the sanitizer runtime in sanitized builds).
	# shellcheck disable=SC2046
	cc "$src/examples/kernel_style.c" $(pkg-config --cflags --libs closure) "${san_flags[@]}" \
		-o kernel_style
	uses_installed_lib ./kernel_style
	LD_LIBRARY_PATH=$prefix/$libdir ./kernel_style
	;;
cmake)
	flags=${san_flags[*]:-}
	cmake -S "$src/tests/suites/install/consumer" -B "$tmp/consumer" \
		-DCMAKE_PREFIX_PATH="$prefix" \
		-DKERNEL_STYLE_SOURCE="$src/examples/kernel_style.c" -DCMAKE_C_FLAGS="$flags" \
		-DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
	cmake --build "$tmp/consumer" >/dev/null
	uses_installed_lib "$tmp/consumer/kernel_style"
	LD_LIBRARY_PATH=$prefix/$libdir "$tmp/consumer/kernel_style"
	"$tmp/consumer/kernel_style_static"
	;;
probes)
	# get and put are inlined into the user's program, the rest live in libclosure.so.
	export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
	cd "$tmp"
	# shellcheck disable=SC2046
	cc "$src/examples/kernel_style.c" $(pkg-config --cflags --libs closure) "${san_flags[@]}" \
		-o kernel_style
	probe_names() {
		readelf -n "$@" |
			awk '$1 == "Provider:" { p = $2 } $1 == "Name:" && p == "closure" { print $2 }' |
			sort -u | tr '\n' ' '
	}
	names=" $(probe_names "$prefix/$libdir/libclosure.so" kernel_style)"
	echo "closure probes in libclosure.so and the program:$names"
	for probe in init get put sub continue_at run finish destructor wait wake sync_begin \
		sync_end bug module; do
		[[ $names == *" $probe "* ]] || fail "no closure:$probe probe in the installed objects"
	done
	names=" $(probe_names kernel_style)"
	[[ $names == " get put " ]] || fail "inlined probes in the program: '$names', not get and put"
	;;
*)
	fail "unknown test '$what'"
	;;
esac
echo "PASS: install_$what"
