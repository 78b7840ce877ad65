#!/bin/sh
# Runs a cross build's tests under qemu-user, counting TAP lines the way
# tests/run.sh does, and ends with "ARCH: N passed, N failed".
# Usage: mk/cross-run.sh ARCH BUILD_DIR "QEMU [FLAGS]" [SKIPPED_BINARIES...]
#
# Differences from a native run, each for a qemu-user reason:
# - Packing stays on: qemu-user notices code changes only through writes
#   to the executing virtual page, and execmem writes code through a
#   second (alias) mapping, but execmem's self-test finds that out and then
#   re-maps the pages of every write (qemu drops its translations of a
#   range mapped again), so pack chunks reused by new images run the new
#   code (test_execmem: execmem_rewritten_chunk_runs_new_code).
# - Binaries that tests exec get host ELF stand-ins (mk/qemu-launch.c)
#   that start them under qemu, so nothing is registered with binfmt_misc:
#   test programs run from BUILD_DIR/qemu-run/tests/, where ../bpfrt and
#   $BUILD/bpfrt-conformance are stand-ins; shell tests get
#   BUILD=BUILD_DIR/qemu-wrap, where every binary is one.
# - The tests in SKIPS (and SKIPPED_BINARIES, x86-64-only test programs
#   the cross build does not build) are reported as skipped, with why.
# - BPFRT_DIFF_COUNT=10000 random programs (the native run does more).
arch=$1 build=$2 qemu=$3
[ -n "$arch" ] && [ -d "$build/tests" ] && [ -n "$qemu" ] ||
	{ echo "usage: $0 ARCH BUILD_DIR QEMU [SKIPPED_BINARIES...]" >&2; exit 2; }
shift 3
command -v ${qemu%% *} >/dev/null || { echo "$0: ${qemu%% *} not found (make deps)" >&2; exit 1; }

# binary:test|reason, or script.sh:text in the test's name|reason
SKIPS="test_jit:dump_jited_listing|expects x86-64 mnemonics; test_arm64_jit checks the arm64 listing
test_execmem:execmem_no_pack_env|re-executes /proc/self/exe, which qemu-user cannot exec without binfmt_misc
test_tracepoint:disabled_site_is_nop5_enabled_site_is_jmp|x86-64 patch sites (nop5/jmp)
test_cli_execmem.sh:bpfrt-bench exists|bpfrt-bench is x86-64 only (bench/ is not cross-built)
test_wx_scan.sh:a w+x mapping fails|qemu-user's /proc/self/maps shows no guest w+x page"

abs_build=$(cd "$build" && pwd)
wrap=$abs_build/qemu-wrap     # every binary a launcher: BUILD of shell tests
run=$abs_build/qemu-run       # test binaries themselves beside launched tools
BPFRT_CROSS_QEMU=$qemu
export BPFRT_CROSS_QEMU
rm -rf "$wrap" "$run"
mkdir -p "$wrap/tests" "$run/tests"
${HOST_CC:-cc} -O2 -o "$wrap/.launch" mk/qemu-launch.c || exit 1
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
done

passed=0; failed=0; skipped=0
log=$(mktemp); trap 'rm -f "$log"' EXIT
if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 900"; else TIMEOUT=; fi
begin=$(date +%s)

count() { # count NAME RC START
	p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
	s=$(grep -c '^ok .*# SKIP' "$log")
	if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "not ok - $1 exited with status $2" >>"$log"
	fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	printf '%-40s %4d ok %3d failed %3d skipped (%ds)\n' "$1" "$p" "$f" "$s" $(( $(date +%s) - $3 ))
	if [ "$f" -ne 0 ]; then grep -E '^(not ok|#)' "$log" | head -40 | sed 's/^/    /'; tail -5 "$log" | sed 's/^/    | /'; fi
	grep '# SKIP' "$log" | sed 's/^/    /'
}

skips_of() { # skips_of NAME: "test|reason" lines
	printf '%s\n' "$SKIPS" | sed -n "s/^$1://p"
}

for bin in "$@"; do
	echo "ok - $bin # SKIP x86-64 only, not cross-built" >"$log"
	count "$arch/$bin" 0 "$(date +%s)"
done

for t in "$abs_build"/tests/test_*; do
	case "$t" in *.d|*.o) continue ;; esac
	[ -x "$t" ] || continue
	name=$(basename "$t")
	start=$(date +%s)
	skip=$(skips_of "$name")
	set --
	if [ -n "$skip" ]; then
		# run every test of the binary but the skipped ones, by name
		for tn in $(sed -n 's/^TEST(\([A-Za-z0-9_]*\)).*/\1/p' "tests/$name.c"); do
			printf '%s\n' "$skip" | grep -q "^$tn|" || set -- "$@" "$tn"
		done
	fi
	env -u BPFRT_NO_PACK BUILD="$run" BPFRT_DIFF_COUNT=10000 \
		$TIMEOUT $qemu "$run/tests/$name" "$@" >"$log" 2>&1
	rc=$?
	printf '%s\n' "$skip" | while IFS='|' read -r tn why; do
		[ -n "$tn" ] && echo "ok - $tn # SKIP under qemu-user: $why"
	done >>"$log"
	count "$arch/$name" "$rc" "$start"
done

# arm64: the random programs once more with the ldaxr/stlxr atomics
if [ "$arch" = arm64 ] && [ -x "$run/tests/test_differential" ]; then
	start=$(date +%s)
	env -u BPFRT_NO_PACK BUILD="$run" BPFRT_DIFF_COUNT=5000 BPFRT_ARM64_NO_LSE=1 \
		$TIMEOUT $qemu "$run/tests/test_differential" differential_interpreter_vs_jit \
		>"$log" 2>&1
	count "$arch/test_differential(no LSE)" "$?" "$start"
fi

for t in tests/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t")
	start=$(date +%s)
	env -u BPFRT_NO_PACK BUILD="$wrap" $TIMEOUT sh "$t" >"$log" 2>&1
	rc=$?
	# a known qemu-user limitation turns that one failure into a skip
	skips_of "$name" | while IFS='|' read -r text why; do
		[ -n "$text" ] && sed -i "s#^not ok \([0-9]*\) - \(.*$text.*\)#ok \1 - \2 \# SKIP under qemu-user: $why#" "$log"
	done
	count "$arch/$name" "$rc" "$start"
done

echo "# $arch under $qemu: $(( $(date +%s) - begin ))s wall"
echo "($skipped of the passed tests were skipped)"
echo "$arch: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
