#!/bin/sh
# Runs every test binary (tests/test_*.c built into BUILD/tests/) and every
# tests/test_*.sh for each build directory given, and ends with one line
# "N passed, N failed". A binary that dies without reporting counts as a
# failure. Usage: tests/run.sh BUILD_DIR...
passed=0; failed=0; skipped=0
log=$(mktemp); trap 'rm -f "$log"' EXIT
for build in "$@"; do
	for t in "$build"/tests/test_* tests/test_*.sh; do
		[ -x "$t" ] || continue
		case "$t" in *.sh) runner="env BUILD=$build sh" ;; *) runner="" ;; esac
		name="$build/$(basename "$t")"
		start=$(date +%s)
		$runner "$t" >"$log" 2>&1; rc=$?
		p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
		s=$(grep -c '^ok .*# SKIP' "$log")
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1; echo "not ok - $name exited with status $rc" >>"$log"
		fi
		passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
		printf '%-40s %4d ok %3d failed %3d skipped (%ds)\n' "$name" "$p" "$f" "$s" $(( $(date +%s) - start ))
		if [ "$f" -ne 0 ]; then grep -E '^(not ok|#)' "$log" | head -40 | sed 's/^/    /'; tail -5 "$log" | sed 's/^/    | /'; fi
		grep '# SKIP' "$log" | sed 's/^/    /'
	done
done
echo "($skipped of the passed tests were skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
