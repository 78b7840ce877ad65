#!/bin/sh
# Installs the Debian packages bpfrt needs when they are missing (as root),
# otherwise names them. usage: scripts/deps.sh run|test
#   run:  what `make run` needs (build the library, the CLI and the
#         benchmarks, compile BPF C, the kernel's column through bpftool);
#   test: that plus what `make test` needs (cross compilers and qemu-user for
#         the arm64 and riscv64 suites, the kernel's selftest sources, the
#         DWARF, BTF and USDT tools the tests drive).
RUN_PKGS="clang clang-19 llvm lld libelf-dev zlib1g-dev libcapstone-dev libbpf-dev libzydis-dev
pkg-config bpftool libdw-dev"
TEST_PKGS="libclang-rt-14-dev qemu-user gcc-aarch64-linux-gnu
gcc-riscv64-linux-gnu libc6-dev-arm64-cross libc6-dev-riscv64-cross
binutils-riscv64-linux-gnu binutils-aarch64-linux-gnu
dwarves systemtap-sdt-dev linux-source-6.12 python3 xz-utils"
# Target libraries of `make test-arm64` (Debian multiarch; they need the
# arm64 architecture added to dpkg, done once below).
CROSS_PKGS="libc6:arm64 libcapstone-dev:arm64 libelf-dev:arm64 libbpf-dev:arm64 zlib1g-dev:arm64"
case "${1:-test}" in
run) PKGS="$RUN_PKGS" ;;
test) PKGS="$RUN_PKGS $TEST_PKGS $CROSS_PKGS" ;;
*) echo "usage: $0 run|test" >&2; exit 2 ;;
esac
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	case "$missing" in *:arm64*)
		dpkg --print-foreign-architectures | grep -qx arm64 || {
			dpkg --add-architecture arm64 && apt-get update -q >/dev/null 2>&1; } ;;
	esac
	apt-get install -y -q $missing >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $missing >/dev/null; } ||
		{ echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
else
	echo "deps: missing Debian packages:$missing (run as root to install)" >&2
	exit 1
fi
