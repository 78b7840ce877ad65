#!/bin/sh
# A short libFuzzer run of the loader harness (tests/fuzz/fuzz_loader.c)
# against this build's libbpfrt.a, seeded with the clang-built objects:
# 2,000 mutated ELF files opened, loaded and closed. The harness is built
# with clang's -fsanitize=fuzzer,address (and undefined for sanitizer
# builds), so leaks and heap errors are caught even in the non-ASan build.
# The long run is `make fuzz-loader-run` (mk/fuzz.mk). TAP for
# tests/run.sh; skipped where clang has no libFuzzer.
B=${BUILD:-build}
echo "1..1"
CLANG=$(command -v clang-19 || command -v clang-14 || command -v clang)
name="fuzz_loader smoke: 2000 mutated objects, no crash, leak or silent error"
if [ -n "$BPFRT_CROSS_QEMU" ]; then
	echo "ok 1 - $name # SKIP the harness is built by the host's clang against a host libbpfrt.a"
	exit 0
fi
out=$B/fuzz-smoke
mkdir -p "$out/corpus" "$out/seeds" || exit 1
rm -f "$out/corpus/"*
cp "$B"/tests/progs/*.bpf.o "$B"/bench/progs/*.bpf.o "$out/seeds/" 2>/dev/null
san=address
# the Makefile's link flags (they grow in mk/*.mk)
libs=$(make -s --no-print-directory print-ldlibs 2>/dev/null) ||
	libs="-lcapstone -lbpf -lelf -lz -lpthread -lm"
case "$B" in *san*) san=address,undefined ;; esac
if [ -z "$CLANG" ] || ! "$CLANG" -fsanitize=fuzzer,$san -g -O1 -std=gnu11 -Iinclude -Isrc/engine -Isrc/host \
	tests/fuzz/fuzz_loader.c "$B/libbpfrt.a" $libs \
	-o "$out/fuzz_loader" >"$out/build.log" 2>&1; then
	echo "ok 1 - $name # SKIP clang with libFuzzer unavailable ($(tail -1 "$out/build.log"))"
	exit 0
fi
if "$out/fuzz_loader" -runs=2000 -seed=1 -rss_limit_mb=4096 -timeout=20 \
	-artifact_prefix="$out/" "$out/corpus" "$out/seeds" >"$out/run.log" 2>&1; then
	echo "ok 1 - $name"
else
	grep -E "ERROR|runtime error|SUMMARY|returned" "$out/run.log" | head -5 | sed 's/^/# /'
	echo "not ok 1 - $name (log: $out/run.log)"
fi
rm -rf "$out/corpus"
