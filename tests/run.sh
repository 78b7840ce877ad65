#!/bin/bash
# Runs every test binary (tests/test_*.c built into BUILD/tests/) and every
# tests/test_*.sh for each build directory given, two at a time
# (BPFRT_TEST_JOBS=N), and ends with one line "N passed, N failed". Each
# test's summary is printed in order (tests/tap-jobs.sh says how results
# are counted: a binary that dies or prints fewer results than its plan
# fails). Usage: tests/run.sh BUILD_DIR...
. "$(dirname "$0")/tap-jobs.sh"
for build in "$@"; do
	for t in "$build"/tests/test_* tests/test_*.sh; do
		[ -x "$t" ] || continue
		case "$t" in *.sh) runner="env BUILD=$build sh " ;; *) runner="" ;; esac
		tap_add "$build/$(basename "$t")" "$runner$t"
	done
done
tap_run
echo "($tap_skipped of the passed tests were skipped)"
echo "$tap_passed passed, $tap_failed failed"
[ "$tap_failed" -eq 0 ]
