#!/bin/sh
# Installs the Debian packages bpfrt needs when they are missing (as root),
# otherwise names them. Called by `make run` and `make test`.
PKGS="clang clang-19 llvm lld libelf-dev zlib1g-dev libcapstone-dev libbpf-dev libzydis-dev
pkg-config bpftool libclang-rt-14-dev qemu-user gcc-aarch64-linux-gnu
gcc-riscv64-linux-gnu libc6-dev-arm64-cross libc6-dev-riscv64-cross
binutils-riscv64-linux-gnu binutils-aarch64-linux-gnu"
# Target libraries of `make test-arm64` (Debian multiarch; they need the
# arm64 architecture added to dpkg, done once below).
CROSS_PKGS="libc6:arm64 libcapstone-dev:arm64 libelf-dev:arm64 libbpf-dev:arm64 zlib1g-dev:arm64"
PKGS="$PKGS $CROSS_PKGS"
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
