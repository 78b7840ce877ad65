#!/bin/sh
# Every example in examples/ as a user builds it: this build installed into
# a temporary DESTDIR (PREFIX=/usr), each example directory copied outside
# the tree and built by its own Makefile with nothing but the installed
# tree (pkg-config's flags, the installed bpfrt-host.mk, the installed
# `bpfrt gen skeleton`; -Werror added), then run against the installed
# libbpfrt.so; its output must be the one its README shows (the first
# ``` block). Checked for the normal build only (BUILD=build), as
# tests/test_install.sh.
cd "$(dirname "$0")/.." || exit 2
tree=$(pwd)
B=${BUILD:-build}
examples=$(for d in examples/*/; do [ -f "$d/Makefile" ] && basename "$d"; done)
case "$B" in
build) ;;
*) echo "1..1"; echo "ok 1 - examples # SKIP built once, with BUILD=build"; exit 0 ;;
esac
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); [ -s "$tmp/out" ] && sed 's/^/# /' "$tmp/out" | head -25; echo "not ok $n - $1"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest

if make -s --no-print-directory BUILD="$B" install DESTDIR="$dest" PREFIX=/usr >"$tmp/out" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/usr"
else
	no "make install"; echo "1..$n"; exit 0
fi
# the installed tree only: pkg-config through the sysroot, the installed CLI
export PKG_CONFIG_PATH="$dest/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
export PATH="$dest/usr/bin:$PATH" LD_LIBRARY_PATH="$dest/usr/lib"

for ex in $examples; do
	rm -f "$tmp/out"
	if [ "$ex" = kprobe ] && [ "$(uname -m)" != x86_64 ]; then
		ok "examples/$ex # SKIP kprobes are x86-64 only"
		continue
	fi
	mkdir -p "$tmp/work"
	cp -r "examples/$ex" "$tmp/work/$ex"
	cd "$tmp/work/$ex" || exit 2
	bin=$(sed -n 's/^\([A-Za-z0-9_]*\):.*/\1/p' Makefile | head -1)
	# what the README says the program prints
	awk '/^```/ { if (inblock) exit; inblock = 1; next } inblock' README.md >"$tmp/want"
	if ! make -s CFLAGS="-O2 -g -Wall -Wextra -Werror" >"$tmp/out" 2>&1; then
		no "examples/$ex: make failed against the installed tree"
	elif [ ! -x "$bin" ] || ! ldd "./$bin" 2>&1 | grep -q "libbpfrt.so.* => $dest/usr/lib/"; then
		{ echo "binary '$bin'"; ldd "./$bin"; } >"$tmp/out" 2>&1
		no "examples/$ex: $bin is not linked against the installed libbpfrt.so"
	elif ! "./$bin" >"$tmp/got" 2>"$tmp/out"; then
		cat "$tmp/got" >>"$tmp/out"; no "examples/$ex: ./$bin failed"
	elif [ ! -s "$tmp/want" ] || ! cmp -s "$tmp/got" "$tmp/want"; then
		diff "$tmp/want" "$tmp/got" >"$tmp/out"; no "examples/$ex: ./$bin printed other than its README shows"
	else
		ok "examples/$ex: built with pkg-config and the installed bpfrt, ./$bin prints what its README shows ($(wc -l <"$tmp/got") lines)"
	fi
	cd "$tree" || exit 2
done
echo "1..$n"
