#!/usr/bin/env bash
# The BPF object and its skeleton build where the kernel has no BTF to dump (a container, a
# package builder): a fresh configure and build of closuretrace_bpf_skel with /sys/kernel/btf
# hidden behind an empty tmpfs, in a mount namespace of its own.
#   bpf_no_btf.sh SOURCE_DIR
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
src=$1
scratch
[[ $(id -u) == 0 ]] || {
	[[ ${CLOSURETRACE_NO_SKIP:-0} == 1 ]] && fail "needs root (a mount namespace)"
	echo "SKIP: not root"
	exit 77
}
unshare --mount --propagation private bash -c '
	set -e
	mount -t tmpfs none /sys/kernel/btf
	[[ ! -e /sys/kernel/btf/vmlinux ]] || { echo "vmlinux BTF still visible"; exit 1; }
	cmake -S "$1" -B build -DCLOSURETRACE_WERROR=ON >configure.log
	cmake --build build --target closuretrace_bpf_skel >build.log 2>&1
' _ "$src" || fail "the BPF skeleton does not build without kernel BTF: $(tail -20 build.log 2>/dev/null)"
[[ -s build/bpf/closuretrace.bpf.o && -s build/bpf/closuretrace.skel.h ]] ||
	fail "no BPF object or skeleton"
[[ ! -e build/bpf/vmlinux.h ]] || fail "a vmlinux.h was dumped"
grep -q 'closuretrace_bpf__open' build/bpf/closuretrace.skel.h || fail "the skeleton is not closuretrace's"
echo "ok: closuretrace.bpf.o ($(stat -c %s build/bpf/closuretrace.bpf.o) bytes) and its skeleton built without /sys/kernel/btf"
