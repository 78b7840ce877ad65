#!/bin/sh
# `make install` as a user runs it: installs this build into a temporary
# DESTDIR with PREFIX=/usr, then, in a directory outside the tree, builds
# tests/install/consumer.c with nothing but
# `pkg-config --cflags --libs libbpfrt` (-Wall -Wextra -Werror) and runs it
# against the installed library (it loads, runs and checks two programs
# and the version), builds a C++ consumer, and checks that the installed
# libbpfrt.so exports exactly what the installed headers declare, needs no
# capstone, that pkg-config's hostmk names the installed bpfrt-host.mk and
# that `make uninstall` removes every file. Installs the files `make all`
# built; checked for the normal build only (BUILD=build).
cd "$(dirname "$0")/.." || exit 2
tree=$(pwd)
B=${BUILD:-build}
n=8
case "$B" in
build) ;;
*) echo "1..1"; echo "ok 1 - make install # SKIP checked once, with BUILD=build"; exit 0 ;;
esac
echo "1..$n"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest work=$tmp/consumer
mkdir -p "$work"
part() { sed -n "s/^#define BPFRT_VERSION_$1 *\([0-9]*\).*/\1/p" include/bpfrt/version.h; }
major=$(part MAJOR); version=$major.$(part MINOR).$(part PATCH)
i=0
ok() { i=$((i + 1)); echo "ok $i - $1"; }
not_ok() { i=$((i + 1)); [ -f "$tmp/out" ] && sed 's/^/# /' "$tmp/out" | head -20; echo "not ok $i - $1"; }
skip_rest() { while [ $i -lt $n ]; do i=$((i + 1)); echo "not ok $i - not run: $1"; done; exit 0; }

# 1: the install
if make -s --no-print-directory BUILD="$B" install DESTDIR="$dest" PREFIX=/usr >"$tmp/out" 2>&1 &&
	for f in lib/libbpfrt.so.$version lib/libbpfrt.a lib/pkgconfig/libbpfrt.pc bin/bpfrt \
		include/bpfrt/bpfrt.h share/bpfrt/bpfrt-host.mk; do
		[ -f "$dest/usr/$f" ] || { echo "missing /usr/$f" >>"$tmp/out"; exit 1; }
	done &&
	[ "$(readlink "$dest/usr/lib/libbpfrt.so.$major")" = "libbpfrt.so.$version" ] &&
	[ "$(readlink "$dest/usr/lib/libbpfrt.so")" = "libbpfrt.so.$major" ] &&
	[ "$(cd include && ls bpfrt)" = "$(cd "$dest/usr/include" && ls bpfrt)" ]; then
	ok "make install DESTDIR=... PREFIX=/usr: library and links, .a, .pc, headers, CLI, bpfrt-host.mk"
else
	not_ok "make install DESTDIR=... PREFIX=/usr"; skip_rest "the install failed"
fi

# pkg-config as for a sysroot: paths in the .pc file are /usr/..., the
# files under $dest (system paths must not be dropped: they are in $dest)
export PKG_CONFIG_PATH="$dest/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
hostmk=$(pkg-config --variable=hostmk libbpfrt 2>"$tmp/out")
pcver=$(pkg-config --modversion libbpfrt 2>>"$tmp/out")
case $hostmk in "$dest"/*) ;; *) hostmk=$dest$hostmk ;; esac
if [ "$pcver" = "$version" ] && [ "$hostmk" = "$dest/usr/share/bpfrt/bpfrt-host.mk" ] &&
	cmp -s "$hostmk" mk/bpfrt-host.mk; then
	ok "pkg-config: libbpfrt $pcver, hostmk=/usr/share/bpfrt/bpfrt-host.mk"
else
	echo "version '$pcver', hostmk '$hostmk'" >>"$tmp/out"; not_ok "pkg-config metadata"
fi

cp tests/install/consumer.c tests/install/consumer_cxx.cc "$work/"
cd "$work" || exit 2
flags=$(pkg-config --cflags --libs libbpfrt 2>"$tmp/out")
# 3: C, outside the tree, pkg-config only
if ${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -o consumer consumer.c $flags >"$tmp/out" 2>&1; then
	ok "consumer.c builds outside the tree with pkg-config's flags ($flags) and -Wall -Wextra -Werror"
else
	not_ok "consumer.c does not build with: $flags"; skip_rest "no consumer"
fi
# 4: it runs against the installed library, not the tree's
if LD_LIBRARY_PATH="$dest/usr/lib" ldd ./consumer >"$tmp/ldd" 2>&1 &&
	grep -q "libbpfrt.so.$major => $dest/usr/lib/libbpfrt.so.$major" "$tmp/ldd" &&
	LD_LIBRARY_PATH="$dest/usr/lib" ./consumer >"$tmp/out" 2>&1; then
	ok "$(cat "$tmp/out")"
else
	cat "$tmp/ldd" >>"$tmp/out"; not_ok "consumer failed against the installed libbpfrt.so.$major"
fi
# 5: C++
if ${CXX:-g++} -Wall -Wextra -Werror -o consumer_cxx consumer_cxx.cc $flags >"$tmp/out" 2>&1 &&
	LD_LIBRARY_PATH="$dest/usr/lib" ./consumer_cxx >"$tmp/out" 2>&1; then
	ok "a C++ consumer builds, links (C linkage) and runs"
else
	not_ok "C++ consumer"
fi
cd "$tree" || exit 2

# 6: the installed library's exports are the installed headers' declarations
lib=$dest/usr/lib/libbpfrt.so.$version
scripts/public-symbols.sh "$dest/usr/include" >"$tmp/public"
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exports"
if [ -s "$tmp/public" ] && cmp -s "$tmp/public" "$tmp/exports"; then
	ok "installed libbpfrt.so exports exactly the $(wc -l <"$tmp/public") functions its headers declare"
else
	{ comm -13 "$tmp/public" "$tmp/exports" | sed 's/^/exported, not declared: /'
	  comm -23 "$tmp/public" "$tmp/exports" | sed 's/^/declared, not exported: /'; } >"$tmp/out"
	not_ok "installed exports differ from the installed headers"
fi
# 7: no disassembler needed to run programs
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case "$needed" in
*capstone*|"") echo "NEEDED: $needed" >"$tmp/out"; not_ok "installed library needs capstone" ;;
*) ok "installed library NEEDED: $needed" ;;
esac
# 8: uninstall leaves no file
rm -f "$tmp/out"
if make -s --no-print-directory BUILD="$B" uninstall DESTDIR="$dest" PREFIX=/usr >"$tmp/out" 2>&1 &&
	[ -z "$(find "$dest" ! -type d)" ]; then
	ok "make uninstall removes every installed file"
else
	find "$dest" ! -type d >>"$tmp/out"; not_ok "make uninstall left files"
fi
