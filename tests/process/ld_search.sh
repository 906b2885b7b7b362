#!/usr/bin/env bash
# The loader search honours /etc/ld.so.conf and /etc/ld.so.cache (process/ld_search.c): a library in a
# folder only the configuration names is found through a cache that ldconfig wrote; includes,
# comments and separators are read as ldconfig reads them; broken caches give nothing, no crash.
#   ld_search.sh PROBE LIBRARY   (LIBRARY: a real shared object to install in a private folder)
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
probe=$1 lib=$2
scratch

mkdir -p libs conf.d
cp "$lib" libs/libfirsthour.so.7.1
printf '# a comment\ninclude conf.d/*.conf\n%s/libs\nhwcap 1 tls\n/a, /b:/c # trailing\n' "$PWD" >ld.so.conf
printf '/d\n' >conf.d/x.conf
printf '/e\t/f\ninclude ../ld.so.conf\n' >conf.d/y.conf # a cycle: read to a bounded depth

got=$("$probe" conf ld.so.conf) || fail "conf: exit $?"
dirs=${got%%:$PWD/libs*}
[[ $dirs == /d:/e:/f:/d:/e:/f:* ]] || fail "conf: includes not expanded in place: $got"
[[ $got == *":$PWD/libs:/a:/b:/c" ]] || fail "conf: the file's own folders not last, in order: $got"
echo "ok: ld.so.conf read with its includes, a cycle bounded: ${#got} bytes"
[[ $("$probe" conf nonexistent.conf) == "(none)" ]] || fail "conf: a missing file lists something"

soname_of() { # the soname ldconfig keys the cache by: the library's own DT_SONAME
	readelf -d "$1" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p'
}
soname=$(soname_of "$lib")
[[ -n $soname ]] || fail "$lib has no soname"
printf '%s/libs\n' "$PWD" >own.conf
ldconfig -C ld.so.cache -f own.conf 2>ldconfig.err || fail "ldconfig: $(cat ldconfig.err)"
[[ -e libs/$soname ]] || fail "ldconfig made no $soname link"
got=$("$probe" cache ld.so.cache "$soname")
[[ $got == "$PWD/libs/libfirsthour.so.7.1" ]] || fail "cache: $soname is '$got'"
echo "ok: $soname found through the cache ldconfig wrote: $got"
got=$("$probe" cache /etc/ld.so.cache libc.so.6)
want=$(ldconfig -p | sed -n 's/^\tlibc.so.6 (libc6,x86-64) => //p' | head -1)
[[ $got == "$(realpath "$want")" ]] || fail "the system cache gives libc.so.6 as '$got', ldconfig -p '$want'"
echo "ok: the system cache agrees with ldconfig -p on libc.so.6"
[[ $("$probe" cache ld.so.cache libnothere.so.1) == "(none)" ]] || fail "cache: an unknown soname found"

# Damaged caches: truncated anywhere, or offsets past the end. Nothing found, exit 0.
size=$(stat -c %s ld.so.cache)
for cut in 0 10 47 48 100 $((size / 2)) $((size - 1)); do
	head -c "$cut" ld.so.cache >cut.cache
	got=$("$probe" cache cut.cache "$soname") || fail "a cache cut at $cut bytes: exit $?"
	[[ $cut -lt 100 && $got != "(none)" ]] && fail "a cache cut at $cut bytes gives $got"
done
python3 - ld.so.cache bad.cache <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
n = struct.unpack_from('<I', b, 20)[0]
for i in range(n):  # every key and value offset far past the end
	struct.pack_into('<II', b, 48 + 24 * i + 4, 0xfffffff0, 0x7ffffff0)
struct.pack_into('<I', b, 20, n)
open(sys.argv[2], 'wb').write(b)
PY
[[ $("$probe" cache bad.cache "$soname") == "(none)" ]] || fail "offsets past the end found something"
printf 'glibc-ld.so.cache1.1\xff\xff\xff\x7f' >huge.cache
head -c 100 /dev/zero >>huge.cache
[[ $("$probe" cache huge.cache "$soname") == "(none)" ]] || fail "a huge entry count found something"
echo "ok: truncated and corrupted caches find nothing"
