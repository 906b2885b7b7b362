# shellcheck shell=bash
# Sourced (with build, src and common.sh's fail set): unpacks bcachefs-tools 1.4.1 from
# ../shared/third_party/ into $build/tests/suites/integration/bcachefs ($work, made the current
# folder) twice and builds its C part (make NO_RUST=1 bcachefs, -j2) as stock/bcachefs and as
# libclosure/bcachefs: the latter with include/linux/closure.h replaced by one line including
# <closure/closure.h> and linux/closure.c removed, and nothing else changed (checked), linked with
# $build's libclosure.a. Both trees first get inject.patch (beside this file): references taken and
# never put, behind environment variables (CT_INJECT_JOURNAL: the journal write's closure,
# CT_INJECT_FS: the filesystem's), inert without them, for check's hangs on real code. Sets work,
# ct (the build's closuretrace), inject (the patch).
# shared/ lies beside the project's clone; from a git worktree, beside its main clone.
third_party=${CLOSURETRACE_THIRD_PARTY:-$src/../shared/third_party}
if [ ! -d "$third_party" ] && common=$(git -C "$src" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
	third_party=$(dirname "$(dirname "$common")")/shared/third_party
fi
tarball="$third_party/bcachefs-tools-1.4.1.tar.xz"
inject="$src/tests/suites/integration/bcachefs/inject.patch"
work="$build/tests/suites/integration/bcachefs"
ct="$build/cli/closuretrace"

# Without what the build needs: a skip, or in CI (CLOSURETRACE_NO_SKIP=1) a failure (unless the
# sourcing script has its own).
declare -F skip_or_fail >/dev/null || skip_or_fail() {
	[ "${CLOSURETRACE_NO_SKIP:-0}" = 1 ] && fail "$*"
	echo "SKIP: $*"
	exit 77
}
[ -f "$tarball" ] || skip_or_fail "no $tarball (shared/ beside the project, or CLOSURETRACE_THIRD_PARTY)"
[ "$(id -u)" = 0 ] || skip_or_fail "not root: closuretrace record and check need BPF"
pkgs="blkid uuid liburcu libsodium zlib liblz4 libzstd libudev libkeyutils udev"
pkg-config --exists $pkgs || skip_or_fail "bcachefs-tools' build dependencies are missing: run scripts/deps.sh"

mkdir -p "$work" && cd "$work" || exit 1

# One tree per build, unpacked again when the tarball or the patch changes; objects are reused
# otherwise.
stamp=$(cat "$tarball" "$inject" | sha256sum | cut -d' ' -f1)
if [ "$(cat unpacked.stamp 2>/dev/null)" != "$stamp" ]; then
	rm -rf stock libclosure unpacked.stamp
	for tree in stock libclosure; do
		mkdir "$tree" && tar -xJf "$tarball" -C "$tree" --strip-components=1 || fail "unpacking $tarball"
		patch -s -p1 -d "$tree" <"$inject" || fail "applying $inject to $tree"
	done
	# The two edits, and only these.
	echo '#include <closure/closure.h>' >libclosure/include/linux/closure.h
	rm libclosure/linux/closure.c
	echo "$stamp" >unpacked.stamp
fi
edits=$(diff -rq stock libclosure -x '*.o' -x '*.d' -x '*.a' -x bcachefs -x .version)
[ "$edits" = "Files stock/include/linux/closure.h and libclosure/include/linux/closure.h differ
Only in stock/linux: closure.c" ] || fail "the libclosure tree differs from stock by more than the two edits: $edits"

# The link step depends only on bcachefs' own archive: relink each time, so a rebuilt libclosure
# is the one tested (its headers are in the objects' dependency files).
build_bcachefs() { # build_bcachefs TREE [make arguments]
	local tree=$1
	shift
	rm -f "$tree/bcachefs"
	make -C "$tree" -j2 NO_RUST=1 "$@" bcachefs >"$tree.build.log" 2>&1 ||
		fail "building $tree bcachefs: $(tail -20 "$tree.build.log")"
}
build_bcachefs stock
build_bcachefs libclosure EXTRA_CFLAGS="-I$src/lib/include -I$build/lib/include" \
	EXTRA_LDLIBS="$build/lib/libclosure.a"
nm libclosure/bcachefs >libclosure.nm || fail "nm libclosure/bcachefs"
grep -q ' T closure_sub_slow$' libclosure.nm || fail "libclosure's closure_sub_slow is not in the libclosure build"
grep -q '_LINUX_CLOSURE_H' libclosure/include/linux/closure.h && fail "the stock closure.h is still there"

