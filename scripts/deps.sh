#!/usr/bin/env bash
# Installs, by Debian package name, everything the build, the tests and the demo need.
# Idempotent: packages already present are not touched, and apt is not run at all when none is missing.
set -euo pipefail

packages=(
	build-essential cmake pkg-config   # the build
	systemtap-sdt-dev                  # sys/sdt.h: the USDT probes
	clang llvm libbpf-dev bpftool      # BPF programs, skeletons, the loader
	libclang-rt-dev                    # libFuzzer and the sanitizers' runtimes for clang (make fuzz)
	libelf-dev zlib1g-dev              # libbpf's own link dependencies
	libjansson-dev                     # reading and writing traces
	libzstd-dev zstd                   # compressed traces (.json.zst); zstd for the tests
	libgraphviz-dev graphviz           # libgvc: graphs rendered in-process
	libdw-dev                          # symbols and file:line
	bpftrace                           # the probe reference's one-liner is tested for real
	libxml2-utils                      # xmllint checks the SVG we write
	tmux                               # top's interactive mode is tested in a real terminal
	# bcachefs-tools 1.4.1 on libclosure (tests/suites/integration, ../shared/third_party)
	libaio-dev libblkid-dev libkeyutils-dev liblz4-dev libsodium-dev liburcu-dev libzstd-dev
	uuid-dev libudev-dev udev          # udev: its udev.pc, which bcachefs-tools' Makefile asks for
	libcurl4-openssl-dev               # export and fleet: ClickHouse's HTTP interface
	clickhouse-server clickhouse-client # the fleet tests start their own server
	valgrind                           # libclosure is checked under memcheck (tests/lib/valgrind.sh)
	lintian                            # lints the .debs (tests/suites/install/deb.sh)
	stress-ng                          # the load of tests/suites/trust/load_test.sh
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root (or sudo apt-get install them)" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
