#!/bin/sh
# Builds Linux's verifier test programs (tools/testing/selftests/bpf/
# progs/verifier_*.c) from Debian's linux-source package into OUT, as the
# selftests build them, for test_kernel_verifier. Test data, read at test
# time: nothing of the kernel tree is kept in the repository.
#
#   tests/kernel_verifier/objects.sh OUT
#
# OUT/src    the extracted selftest sources, libbpf headers and uapi headers
# OUT/gen    generated headers: bpf_helper_defs.h (from the uapi bpf.h, with
#            the kernel's own script) and vmlinux.h (bpftool, from the running
#            kernel's /sys/kernel/btf/vmlinux)
# OUT/btf    the objects whose BTF a test names as its CO-RE target
#            (__btf_path("btf__NAME.bpf.o"), built from progs/btf__NAME.c)
# OUT/obj    verifier_NAME.bpf.o, rebuilt only when missing (OUT/stamp names
#            the tarball and this script: another one starts over, as does
#            `rm -r OUT`); NAME.skip says why a file is not built (its first
#            compiler error)
# Prints one line "built N, skipped M" (or "SKIP: why" and exits 3 when the
# package, clang-19, bpftool or python3 is missing). Two compilers at a time.
set -u
OUT=$1
TAR=${BPFRT_LINUX_SOURCE:-/usr/src/linux-source-6.12.tar.xz}
TOP=linux-source-6.12
CLANG=${BPFRT_KV_CLANG:-clang-19}
skip() { echo "SKIP: $*"; exit 3; }
[ -r "$TAR" ] || skip "$TAR not installed (Debian package linux-source-6.12)"
command -v "$CLANG" >/dev/null || skip "$CLANG not installed"
command -v python3 >/dev/null || skip "python3 not installed (generates bpf_helper_defs.h)"
mkdir -p "$OUT/obj" "$OUT/gen" || exit 1
OUT=$(cd "$OUT" && pwd)
# One builder at a time: the native and sanitizer suites share OUT
# (tests/run.sh), the second finds the first's objects.
command -v flock >/dev/null || skip "flock not installed (util-linux)"
exec 9>"$OUT/.lock" && flock 9 || exit 1
S=$OUT/src/$TOP
SB=$S/tools/testing/selftests/bpf

# The cache belongs to one tarball and one version of this script: another
# (a new Debian kernel package, changed flags) starts it over.
stamp="$(ls -l --time-style=+%s "$TAR" | awk '{print $5, $6}') $(cksum <"$0")"
if [ "$(cat "$OUT/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$OUT/src" "$OUT/gen" "$OUT/obj" "$OUT/btf" && mkdir -p "$OUT/obj" "$OUT/gen" || exit 1
	echo "$stamp" >"$OUT/stamp"
fi

# One pass over the tarball (xz streams cannot be seeked): the selftest
# programs and headers, libbpf's BPF-side headers, tools' uapi headers and
# the helper-definition generator. A stamp marks a complete extraction.
if [ ! -f "$OUT/src/.complete" ]; then
	rm -rf "$OUT/src" && mkdir -p "$OUT/src" || exit 1
	xz -dc "$TAR" | tar -x -C "$OUT/src" --wildcards \
		"$TOP/tools/testing/selftests/bpf/progs/*" \
		"$TOP/tools/testing/selftests/bpf/*.h" \
		"$TOP/tools/lib/bpf/*.h" \
		"$TOP/tools/include/*" \
		"$TOP/scripts/bpf_doc.py" || skip "cannot extract $TAR"
	touch "$OUT/src/.complete"
fi

# bpf_helpers.h includes "bpf_helper_defs.h", which libbpf's build
# generates from the uapi header; the verifier tests' vmlinux.h is the
# running kernel's BTF (the selftests use their own kernel's).
if [ ! -s "$OUT/gen/bpf_helper_defs.h" ]; then
	python3 "$S/scripts/bpf_doc.py" --header --file "$S/tools/include/uapi/linux/bpf.h" \
		>"$OUT/gen/bpf_helper_defs.h.tmp" && mv "$OUT/gen/bpf_helper_defs.h.tmp" "$OUT/gen/bpf_helper_defs.h" ||
		skip "bpf_doc.py failed"
fi
if [ ! -s "$OUT/gen/vmlinux.h" ]; then
	if [ -r /sys/kernel/btf/vmlinux ] && command -v bpftool >/dev/null &&
	   bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$OUT/gen/vmlinux.h.tmp" 2>/dev/null; then
		mv "$OUT/gen/vmlinux.h.tmp" "$OUT/gen/vmlinux.h"
	else
		# the files that include it fail to build and are skipped
		rm -f "$OUT/gen/vmlinux.h.tmp"
		echo '#error "no vmlinux.h: /sys/kernel/btf/vmlinux or bpftool unavailable"' >"$OUT/gen/vmlinux.h.none"
	fi
fi
VMLINUX_DIR=$OUT/gen
[ -s "$OUT/gen/vmlinux.h" ] || { mkdir -p "$OUT/gen/none" && cp "$OUT/gen/vmlinux.h.none" "$OUT/gen/none/vmlinux.h"; VMLINUX_DIR=$OUT/gen/none; }

# The selftests' flags (their Makefile's BPF_CFLAGS, CLANG_CFLAGS and the
# test_progs runner's -DENABLE_ATOMICS_TESTS, cpu v3), without -Werror: a
# warning from a newer clang or another kernel's vmlinux.h is no reason to
# lose the file.
SYS=$("$CLANG" -v -E - </dev/null 2>&1 |
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }' | tr '\n' ' ')
CFLAGS="-g -Wall -D__TARGET_ARCH_x86 -mlittle-endian -I$VMLINUX_DIR -I$OUT/gen -I$S/tools/lib
	-I$SB -I$S/tools/include/uapi $SYS -Wno-compare-distinct-pointer-types -DENABLE_ATOMICS_TESTS
	-O2 --target=bpf -mcpu=v3"
export CLANG CFLAGS OUT
ls "$SB"/progs/verifier_*.c | xargs -P2 -n1 sh -c '
	b=$(basename "$1" .c)
	[ -f "$OUT/obj/$b.bpf.o" ] || [ -f "$OUT/obj/$b.skip" ] && exit 0
	if nice $CLANG $CFLAGS -c "$1" -o "$OUT/obj/$b.bpf.o.tmp" 2>"$OUT/obj/$b.err"; then
		mv "$OUT/obj/$b.bpf.o.tmp" "$OUT/obj/$b.bpf.o"
	else
		rm -f "$OUT/obj/$b.bpf.o.tmp"
		grep -m1 "error:" "$OUT/obj/$b.err" >"$OUT/obj/$b.skip" || echo "clang failed" >"$OUT/obj/$b.skip"
	fi
	rm -f "$OUT/obj/$b.err"' sh
# the CO-RE targets tests name with __btf_path (test_loader's btf_custom_path)
mkdir -p "$OUT/btf" || exit 1
for b in $(sed -n 's/.*__btf_path("\([^"]*\)\.bpf\.o").*/\1/p' "$SB"/progs/verifier_*.c | sort -u); do
	[ -f "$OUT/btf/$b.bpf.o" ] && continue
	[ -f "$SB/progs/$b.c" ] || continue
	nice $CLANG $CFLAGS -c "$SB/progs/$b.c" -o "$OUT/btf/$b.bpf.o.tmp" 2>/dev/null &&
		mv "$OUT/btf/$b.bpf.o.tmp" "$OUT/btf/$b.bpf.o"
	rm -f "$OUT/btf/$b.bpf.o.tmp"
done
echo "built $(ls "$OUT"/obj/*.bpf.o 2>/dev/null | wc -l), skipped $(ls "$OUT"/obj/*.skip 2>/dev/null | wc -l)"
