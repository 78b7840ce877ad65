#!/bin/sh
# Builds the riscv64 target libraries bpfrt links (zlib, libelf, libbpf) as
# static libraries from Debian's source packages: Debian 12 has no riscv64
# port, so no multiarch packages exist to install. Headers and libraries
# go to PREFIX/include and PREFIX/lib; PREFIX/host-include holds only the
# host's capstone headers (the x86-64 backend needs its constants; capstone
# 4 has no RISC-V, so riscv64 builds list raw words). A finished PREFIX
# (PREFIX/.done) is reused. apt-get runs with a private source list and
# state directory derived from the system's Debian sources (deb -> deb-src),
# so the system's apt configuration is left alone. About a minute. Builds
# that share one PREFIX (worktrees with the same symlink) take turns on
# PREFIX.lock: the second waits and reuses the first one's result.
# Usage: mk/riscv64-target-libs.sh PREFIX
set -e
[ -n "$1" ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
prefix=$(realpath -m "$1")
[ -f "$prefix/.done" ] && exit 0
mkdir -p "$(dirname "$prefix")"
exec 9>"$prefix.lock"
flock 9
[ -f "$prefix/.done" ] && exit 0
cc=riscv64-linux-gnu-gcc
command -v $cc >/dev/null || { echo "$0: $cc not found (make deps)" >&2; exit 1; }
rm -rf "$prefix"
src=$prefix/src apt=$prefix/src/apt
mkdir -p "$prefix/lib" "$prefix/include" "$prefix/host-include" "$apt/lists/partial"
ln -s /usr/include/capstone "$prefix/host-include/capstone"

# deb-src twins of the system's Debian entries (one-line and deb822 forms)
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && sed -n 's/^deb \(.*debian.*\)/deb-src \1/p' "$f"
done >"$apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && grep -qi '^URIs:.*debian' "$f" &&
		sed 's/^Types:.*/Types: deb-src/' "$f" >"$apt/$(basename "$f")"
done
opts="-o Dir::Etc::SourceList=$apt/sources.list -o Dir::Etc::SourceParts=$apt \
-o Dir::State::Lists=$apt/lists -o Dir::Cache=$apt/cache -o APT::Sandbox::User=root"
log=$prefix/build.log
echo "riscv64-libs: fetching zlib, elfutils and libbpf sources"
# a failing unrelated repository must not stop the rest
apt-get -q $opts update >"$log" 2>&1 || true
# Each package from the newest version a mirror really serves: a mirror may
# list a security update's source without carrying its files (404), and the
# release's version builds the same libraries.
for pkg in zlib elfutils libbpf; do
	got=
	for v in $(apt-cache $opts showsrc "$pkg" 2>>"$log" | sed -n 's/^Version: //p' |
		   sort -u -r -V); do
		rm -f "$src/$pkg"_*
		(cd "$src" && apt-get -q $opts source --download-only "$pkg=$v") >>"$log" 2>&1 &&
			{ got=$v; break; }
	done
	[ -n "$got" ] || { echo "$0: apt-get source $pkg failed (see $log)" >&2; exit 1; }
	echo "riscv64-libs: $pkg $got"
done

step() { # step WHAT COMMAND...
	echo "riscv64-libs: $1"
	shift
	"$@" >>"$log" 2>&1 || { echo "$0: failed, see $log" >&2; tail -20 "$log" >&2; exit 1; }
}
cd "$src"
for pkg in zlib elfutils libbpf; do # upstream tarballs, not their signatures
	tar xf "$(ls "$pkg"_*.orig.tar.* | grep -v '\.asc$' | head -1)"
done
step "zlib" sh -c "cd zlib-*/ &&
	CC=$cc CFLAGS='-O2 -fPIC' ./configure --static --prefix='$prefix' &&
	make -j2 libz.a && make install"
step "libelf" sh -c "cd elfutils-*/ &&
	./configure --host=riscv64-linux-gnu --prefix='$prefix' --disable-debuginfod \
		--disable-libdebuginfod --disable-nls --without-bzlib --without-lzma \
		--without-zstd --disable-demangler CPPFLAGS='-I$prefix/include' \
		LDFLAGS='-L$prefix/lib' CFLAGS='-O2 -fPIC' &&
	make -j2 -C lib && make -j2 -C libelf libelf.a &&
	cp libelf/libelf.a '$prefix/lib/' &&
	cp libelf/libelf.h libelf/gelf.h libelf/nlist.h '$prefix/include/'"
step "libbpf" sh -c "mkdir -p obj && cd libbpf-*/src &&
	make -j2 BUILD_STATIC_ONLY=1 CC=$cc AR=riscv64-linux-gnu-ar \
		EXTRA_CFLAGS='-I$prefix/include -O2 -fPIC' OBJDIR='$src/obj' \
		PREFIX='$prefix' LIBDIR='$prefix/lib' DESTDIR= install"
rm -rf "$src"
touch "$prefix/.done"
echo "riscv64-libs: done in $prefix"
