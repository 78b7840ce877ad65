#!/bin/sh
# libbpfrt.so as a library users link: it exports exactly the functions
# the public headers declare (scripts/public-symbols.sh), each under the
# version node BPFRT_0; its SONAME is libbpfrt.so.MAJOR of
# include/bpfrt/version.h with the usual links; it needs no disassembler
# (capstone is opened only for JIT listings, which say so and fall back
# when it is missing); `bpfrt --version` prints the same version. Checks
# the normal build only (BUILD=build): the sanitizer build links its
# runtime into the same library.
cd "$(dirname "$0")/.." || exit 2
B=${BUILD:-build}
case "$B" in
build) ;;
*) echo "1..1"; echo "ok 1 - shared library # SKIP checked once, with BUILD=build"; exit 0 ;;
esac
echo "1..6"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
part() { sed -n "s/^#define BPFRT_VERSION_$1 *\([0-9]*\).*/\1/p" include/bpfrt/version.h; }
major=$(part MAJOR); version=$major.$(part MINOR).$(part PATCH)
lib=$B/libbpfrt.so

scripts/public-symbols.sh >"$tmp/public" || echo "scripts/public-symbols.sh failed" >&2
# A: the version node's own symbol, not a function
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' >"$tmp/exports.raw"
sed 's/@.*//' "$tmp/exports.raw" | sort -u >"$tmp/exports"
if [ -s "$tmp/public" ] && cmp -s "$tmp/public" "$tmp/exports"; then
	echo "ok 1 - $lib exports exactly the $(wc -l <"$tmp/public") functions of include/bpfrt/*.h"
else
	comm -13 "$tmp/public" "$tmp/exports" | sed 's/^/# exported, not declared: /' | head -20
	comm -23 "$tmp/public" "$tmp/exports" | sed 's/^/# declared, not exported: /' | head -20
	echo "not ok 1 - $lib exports differ from the public declarations (a public function is declared with BPFRT_API in include/bpfrt/, see src/api/README)"
fi

unversioned=$(grep -v '@@BPFRT_0$' "$tmp/exports.raw" | head -5)
if [ -s "$tmp/exports.raw" ] && [ -z "$unversioned" ]; then
	echo "ok 2 - every export is versioned BPFRT_0 (mk/libbpfrt.map)"
else
	echo "# not under BPFRT_0: $unversioned"
	echo "not ok 2 - exports outside the version node BPFRT_0"
fi

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
links="$(readlink "$B/libbpfrt.so") $(readlink "$B/libbpfrt.so.$major")"
if [ "$soname" = "libbpfrt.so.$major" ] && [ "$links" = "libbpfrt.so.$major libbpfrt.so.$version" ] &&
	[ -f "$B/libbpfrt.so.$version" ]; then
	echo "ok 3 - SONAME libbpfrt.so.$major, libbpfrt.so -> libbpfrt.so.$major -> libbpfrt.so.$version"
else
	echo "# SONAME '$soname', links '$links'"
	echo "not ok 3 - SONAME or library links wrong for version $version"
fi

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
unexpected=
for n in $needed; do
	case $n in
	libbpf.so.*|libelf.so.*|libdw.so.*|libz.so.*|libc.so.*|libm.so.*|libpthread.so.*|ld-linux*) ;;
	*) unexpected="$unexpected $n" ;;
	esac
done
if [ -n "$needed" ] && [ -z "$unexpected" ]; then
	echo "ok 4 - running programs needs only the system libraries: NEEDED $needed"
else
	echo "not ok 4 - $lib needs$unexpected (NEEDED: $needed)"
fi

# A listing where capstone cannot be loaded: a private mount namespace
# hides the library behind /dev/null (root with CAP_SYS_ADMIN only).
printf 'mov %%r0, 7\nexit\n' >"$tmp/p.s"
cs=$(ldconfig -p 2>/dev/null | sed -n 's/.*libcapstone\.so\.4 (.*) => //p' | head -1)
if [ -z "$cs" ] || ! unshare -m true 2>/dev/null; then
	echo "ok 5 - JIT listing without capstone # SKIP no libcapstone.so.4 or no mount namespace"
elif unshare -m sh -c "mount --bind /dev/null '$(readlink -f "$cs")' && \
		'$B/bpfrt' dump --jited '$tmp/p.s'" >"$tmp/listing" 2>&1 &&
	grep -q '^; capstone not loaded (.*libcapstone\.so\.4' "$tmp/listing" &&
	grep -q '^0: mov %r0, 7' "$tmp/listing"; then
	echo "ok 5 - JIT listing without capstone: says so and lists with the next disassembler"
else
	sed 's/^/# /' "$tmp/listing" | head -10
	echo "not ok 5 - JIT listing without capstone"
fi

out=$("$B/bpfrt" --version 2>&1)
if [ "$out" = "bpfrt $version" ]; then
	echo "ok 6 - bpfrt --version prints $version (include/bpfrt/version.h)"
else
	echo "not ok 6 - bpfrt --version printed '$out', want 'bpfrt $version'"
fi
