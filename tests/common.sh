# shellcheck shell=bash
# What the shell tests share; each sources it first, before defining anything of its own:
#   . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"      (a test of tests/X/)
#   . "$(dirname "${BASH_SOURCE[0]}")/../../common.sh"   (a suite's, tests/suites/X/)
# A test may define its own fail (or on_exit) after sourcing: the helpers call whichever is defined.

# scratch: $tmp, a new directory, made the current one and removed at exit. Before it goes, every
# process whose pid the test added to pids is killed, then the test's on_exit runs (if defined).
pids=()
scratch() {
	tmp=$(mktemp -d)
	trap scratch_cleanup EXIT
	cd "$tmp" || exit 1
}
scratch_cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	declare -F on_exit >/dev/null && on_exit
	rm -rf "$tmp"
}

# fail MESSAGE: says it and ends the test (exit 1). A test that sets keep_going=1 goes on instead,
# with status=1, and ends with `exit $status`.
# shellcheck disable=SC2034 # the keep_going tests end with exit $status
status=0
fail() {
	echo "FAIL: $*"
	status=1
	[ "${keep_going:-0}" = 1 ] || exit 1
}

# peak CMD...: prints "STATUS KB": CMD's exit status and peak resident memory (KB), its standard
# output in $tmp/out, its standard error in $tmp/err (within 300 s).
peak() {
	python3 - "$tmp/out" "$tmp/err" "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    rc = subprocess.run(sys.argv[3:], stdout=out, stderr=err, timeout=300).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

# expect STATUS MESSAGE CMD...: CMD (stdin /dev/null, stdout in out.txt, stderr in err.txt) exits
# with STATUS and prints exactly MESSAGE on standard error ("": nothing).
expect() {
	local want_status=$1 want_msg=$2 got
	shift 2
	"$@" >out.txt 2>err.txt </dev/null
	got=$?
	[ "$got" = "$want_status" ] || fail "$* exited $got, not $want_status: $(cat err.txt)"
	[ "$(cat err.txt)" = "$want_msg" ] || fail "$*: stderr was '$(cat err.txt)', expected '$want_msg'"
}

# skip_without_bpf: without root, kernel BTF or uprobes, says SKIP and exits 77 (ctest's skip), or
# fails when CLOSURETRACE_NO_SKIP=1 (CI, where BPF must run).
skip_without_bpf() {
	local why=
	[ "$(id -u)" = 0 ] || why="not root"
	[ -e /sys/kernel/btf/vmlinux ] || why="no kernel BTF"
	[ -e /sys/bus/event_source/devices/uprobe ] || why="no uprobes"
	[ -z "$why" ] && return
	[ "${CLOSURETRACE_NO_SKIP:-0}" = 1 ] && fail "BPF unavailable ($why) and CLOSURETRACE_NO_SKIP=1"
	echo "SKIP: $why"
	exit 77
}

# shown_source FILE BUILT_IN: FILE as closuretrace shows a source file (viz/source_path.h):
# relative to the deepest folder other than / that holds both it and BUILT_IN, the folder it was
# compiled in (CMake compiles a target in its binary folder, the program's).
shown_source() {
	python3 -c 'import os, sys
c = os.path.commonpath(sys.argv[1:])
print(sys.argv[1] if c == "/" else os.path.relpath(sys.argv[1], c))' "$1" "$2"
}
