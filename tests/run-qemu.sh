#!/bin/bash
# Runs a cross build's tests under qemu-user, two at a time
# (BPFRT_TEST_JOBS=N), counted as tests/run.sh counts them
# (tests/tap-jobs.sh), and ends with "ARCH: N passed, N failed".
# Usage: tests/run-qemu.sh ARCH BUILD_DIR "QEMU [FLAGS]"
#
# Differences from a native run, each for a qemu-user reason:
# - Packing stays on: qemu-user notices code changes only through writes
#   to the executing virtual page, and execmem writes code through a
#   second (alias) mapping, but execmem's self-test finds that out and then
#   re-maps the pages of every write (qemu drops its translations of a
#   range mapped again), so pack chunks reused by new images run the new
#   code (test_execmem: execmem_rewritten_chunk_runs_new_code).
# - Binaries that tests exec get host ELF stand-ins (tests/qemu/launch.c)
#   that start them under qemu, so nothing is registered with binfmt_misc:
#   test programs run from BUILD_DIR/qemu-run/tests/, where ../bpfrt and
#   $BUILD/bpfrt-conformance are stand-ins; shell tests get
#   BUILD=BUILD_DIR/qemu-wrap, where every binary is one.
# - BPFRT_CROSS_QEMU names the emulator: tests that exec themselves go
#   through it (tl_exec_self), and the few checks qemu-user cannot support
#   skip themselves, saying why.
# - BPFRT_DIFF_COUNT=10000 random programs (the native run does more).
arch=$1 build=$2 qemu=$3
[ -n "$arch" ] && [ -d "$build/tests" ] && [ -n "$qemu" ] ||
	{ echo "usage: $0 ARCH BUILD_DIR QEMU" >&2; exit 2; }
command -v ${qemu%% *} >/dev/null || { echo "$0: ${qemu%% *} not found (make deps)" >&2; exit 1; }
. "$(dirname "$0")/tap-jobs.sh"

abs_build=$(cd "$build" && pwd)
wrap=$abs_build/qemu-wrap     # every binary a launcher: BUILD of shell tests
run=$abs_build/qemu-run       # test binaries themselves beside launched tools
BPFRT_CROSS_QEMU=$qemu
export BPFRT_CROSS_QEMU
rm -rf "$wrap" "$run"
mkdir -p "$wrap/tests" "$run/tests"
${HOST_CC:-cc} -O2 -o "$wrap/.launch" tests/qemu/launch.c || exit 1
for t in "$abs_build"/bpfrt "$abs_build"/bpfrt-conformance "$abs_build"/bpfrt-bench \
	 "$abs_build"/tests/test_*; do
	case "$t" in *.d|*.o) continue ;; esac
	[ -f "$t" ] && [ -x "$t" ] || continue
	rel=${t#"$abs_build"/}
	cp "$wrap/.launch" "$wrap/$rel"
	# a test finds tools through /proc/self/exe (../bpfrt): give it launchers
	case "$rel" in
	tests/*) ln -f "$t" "$run/$rel" 2>/dev/null || cp "$t" "$run/$rel" ;;
	*) cp "$wrap/.launch" "$run/$rel" ;;
	esac
done
for d in "$wrap" "$run"; do
	[ -d "$abs_build/tests/progs" ] && ln -s "$abs_build/tests/progs" "$d/tests/progs"
	[ -d "$abs_build/tests/verifier" ] && ln -s "$abs_build/tests/verifier" "$d/tests/verifier"
done
if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 900"; else TIMEOUT=; fi
begin=$(date +%s)
env="env -u BPFRT_NO_PACK BUILD=$run BPFRT_DIFF_COUNT=10000"

for t in "$abs_build"/tests/test_*; do
	case "$t" in *.d|*.o) continue ;; esac
	[ -x "$t" ] || continue
	name=$(basename "$t")
	tap_add "$arch/$name" "$env $TIMEOUT $qemu $run/tests/$name"
done
# arm64: the random programs once more with the ldaxr/stlxr atomics
if [ "$arch" = arm64 ] && [ -x "$run/tests/test_differential" ]; then
	tap_add "$arch/test_differential(no LSE)" "env -u BPFRT_NO_PACK BUILD=$run \
BPFRT_DIFF_COUNT=5000 BPFRT_ARM64_NO_LSE=1 $TIMEOUT $qemu $run/tests/test_differential \
differential_interpreter_vs_jit"
fi
for t in tests/test_*.sh; do
	[ -f "$t" ] || continue
	tap_add "$arch/$(basename "$t")" "env -u BPFRT_NO_PACK BUILD=$wrap $TIMEOUT sh $t"
done
tap_run

echo "# $arch under $qemu: $(( $(date +%s) - begin ))s wall"
echo "($tap_skipped of the passed tests were skipped)"
echo "$arch: $tap_passed passed, $tap_failed failed"
[ "$tap_failed" -eq 0 ]
