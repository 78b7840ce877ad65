#!/bin/bash
# Runs every test binary (tests/test_*.c built into BUILD/tests/) and every
# tests/test_*.sh for each build directory given, two at a time
# (BPFRT_TEST_JOBS=N), and ends with one line "N passed, N failed". Each
# test's summary is printed in queue order (tests/tap-jobs.sh says how
# results are counted: a binary that dies or prints fewer results than its
# plan fails). Usage: tests/run.sh BUILD_DIR...
. "$(dirname "$0")/tap-jobs.sh"
# the kernel's verifier test programs are built once, for every build here
case "${1:-build}" in /*) kv_build=${1:-build} ;; *) kv_build=$PWD/${1:-build} ;; esac
export BPFRT_KV_OBJECTS="${BPFRT_KV_OBJECTS:-$kv_build/kernel-verifier}"
# Test by test, each in every build in turn (build/test_x, build-san/test_x,
# build/test_y, ...): the slow sanitizer runs spread over the whole queue
# instead of ending it with one long test while the other slot idles.
names=$(for build in "$@"; do
	for t in "$build"/tests/test_*; do [ -x "$t" ] && basename "$t"; done
done | sort -u)
for name in $names $(cd tests && ls test_*.sh); do
	for build in "$@"; do
		case "$name" in
		*.sh) [ -x "tests/$name" ] && tap_add "$build/$name" "env BUILD=$build sh tests/$name" ;;
		*) [ -x "$build/tests/$name" ] && tap_add "$build/$name" "$build/tests/$name" ;;
		esac
	done
done
tap_run
echo "($tap_skipped of the passed tests were skipped)"
echo "$tap_passed passed, $tap_failed failed"
[ "$tap_failed" -eq 0 ]
