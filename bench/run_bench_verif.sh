#!/bin/sh
# The verifier table: the kernel selftests' scale programs (pyperf*,
# strobemeta*, loop1-6, test_verif_scale1-3, bpf_loop), built at benchmark
# time from Debian's linux-source package (never copied into the
# repository), verified by bpfrt and, when root, by the running kernel on
# the same object (bpfrt-bench verif: processed insns, states, peak
# states, peak state memory, wall time).
# usage: bench/run_bench_verif.sh [BUILD_DIR] [bpfrt-bench verif options...]
#   VERIF_PROGS="pyperf50 loop4 ..." limits the objects.
# The kernel-only helpers and maps of pyperf and strobemeta are swapped as
# bench/verif_kswap.h says; the other programs are built as they are.
. "$(dirname "$0")/bench_build.sh"
src_tar=/usr/src/linux-source-6.12.tar.xz
out=$build/bench/verif
sel=linux-source-6.12/tools/testing/selftests/bpf
if [ ! -r "$src_tar" ]; then
	echo "skipped: $src_tar is missing (apt-get install linux-source-6.12)"
	exit 0
fi
clang=${CLANG:-clang-19}
progs=${VERIF_PROGS:-"pyperf50 pyperf100 pyperf180 pyperf600 pyperf600_nounroll
	pyperf600_bpf_loop pyperf_subprogs pyperf_global strobemeta strobemeta_nounroll1
	strobemeta_nounroll2 strobemeta_subprogs strobemeta_bpf_loop loop1 loop2 loop3 loop4
	loop5 loop6 test_verif_scale1 test_verif_scale2 test_verif_scale3 bpf_loop"}

mkdir -p "$out"
if [ ! -f "$out/src/.done" ]; then
	rm -rf "$out/src"
	mkdir -p "$out/src"
	tar -xJf "$src_tar" -C "$out/src" --strip-components=6 \
		--wildcards "$sel/progs/pyperf*" "$sel/progs/strobemeta*" "$sel/progs/loop[1-6].c" \
		"$sel/progs/test_verif_scale*" "$sel/progs/bpf_loop.c" "$sel/progs/bpf_misc.h" \
		"$sel/progs/bpf_compiler.h" "$sel/progs/test_jhash.h"
	# the maps only the swapped helpers used (bench/verif_kswap.h)
	sed -i 's/BPF_MAP_TYPE_PERF_EVENT_ARRAY/BPF_MAP_TYPE_ARRAY/; s/BPF_MAP_TYPE_STACK_TRACE/BPF_MAP_TYPE_ARRAY/' \
		"$out/src/pyperf.h" "$out/src/strobemeta.h"
	# fentry programs do not load into this kernel (EPERM): bpf_loop's
	# programs (which do not read their context) become raw tracepoints
	sed -i 's/SEC("fentry\/" SYS_PREFIX "sys_nanosleep")/SEC("raw_tp\/sys_enter")/' "$out/src/bpf_loop.c"
	# bpfrt has no tc kind: its copy of test_verif_scale* is an XDP
	# program with the same packet accesses (the hash seed from
	# rx_queue_index instead of cb[0], the tc_index store into a global);
	# the kernel verifies the tc original
	for n in 1 2 3; do
		sed '/^SEC("tc")/i __u32 kswap_sink;' "$out/src/test_verif_scale$n.c" |
			sed 's/SEC("tc")/SEC("xdp")/; s/struct __sk_buff \*ctx/struct xdp_md *ctx/
			     s/ctx->tc_index =/kswap_sink =/; s/ctx->cb\[0\]/ctx->rx_queue_index/' \
			> "$out/src/test_verif_scale${n}_xdp.c"
	done
	touch "$out/src/.done"
fi
# glibc's headers under -target bpf ask for a 32-bit stubs header
mkdir -p "$out/gnu"
[ -f "$out/gnu/stubs-32.h" ] || : > "$out/gnu/stubs-32.h"
if [ ! -f "$out/vmlinux.h" ]; then
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$out/vmlinux.h.tmp" &&
		mv "$out/vmlinux.h.tmp" "$out/vmlinux.h"
fi

objs=
for p in $progs; do
	o=$out/$p.bpf.o
	flags=
	case "$p" in
	pyperf*|strobemeta*) flags="-include $(pwd)/bench/verif_kswap.h" ;;
	esac
	if [ ! -f "$o" ]; then
		if ! $clang -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wno-everything \
			-I"$out" -I"$out/src" -I/usr/include/$(gcc -dumpmachine) $flags -c "$out/src/$p.c" -o "$o" 2>"$out/$p.err"; then
			echo "$p: does not build: $(head -n1 "$out/$p.err")"
			continue
		fi
	fi
	case "$p" in
	test_verif_scale*)
		# bpfrt's XDP copy, the kernel's tc original
		ob=$out/${p}_xdp.bpf.o
		if [ ! -f "$ob" ] && ! $clang -O2 -g -target bpf -mcpu=v3 -Wno-everything -I"$out" \
			-I"$out/src" -I/usr/include/$(gcc -dumpmachine) -c "$out/src/${p}_xdp.c" \
			-o "$ob" 2>"$out/$p.err"; then
			echo "${p}_xdp: does not build: $(head -n1 "$out/$p.err")"
			continue
		fi
		o="$ob@$o" ;;
	esac
	objs="$objs $o"
done
echo "bpfrt-bench verif $* ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs)"
"$bench" verif "$@" $objs || true
