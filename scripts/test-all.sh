#!/bin/sh
# `make test`: the native suite (normal and ASan+UBSan builds), then the
# arm64 and riscv64 suites under qemu-user. Every part runs even if an
# earlier one failed; the last line is the total, "N passed, N failed".
# BPFRT_SKIP_CROSS=1 leaves out the qemu parts (they are then reported as
# skipped, not silently dropped).
cd "$(dirname "$0")/.." || exit 2
passed=0; failed=0; status=0
out=$(mktemp); trap 'rm -f "$out" "$out.rc"' EXIT

part() {
	name=$1; shift
	start=$(date +%s)
	# shown as it comes (tap-jobs.sh prints a line per finished test),
	# kept to find the part's summary
	{ "$@" 2>&1; echo $? >"$out.rc"; } | tee "$out"
	rc=$(cat "$out.rc")
	line=$(grep -E '^([a-z0-9_-]+: )?[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
	p=$(echo "$line" | sed -E 's/^([a-z0-9_-]+: )?([0-9]+) passed.*/\2/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
	if [ -z "$line" ]; then
		p=0; f=1
		echo "not ok - $name produced no summary (exit status $rc)"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc"
	fi
	passed=$((passed + p)); failed=$((failed + f))
	[ "$f" -eq 0 ] || status=1
	echo "== $name: $p passed, $f failed ($(( $(date +%s) - start ))s)"
	echo
}

part native tests/run.sh build build-san
if [ "${BPFRT_SKIP_CROSS:-0}" = 1 ]; then
	echo "== arm64, riscv64: skipped (BPFRT_SKIP_CROSS=1)"
else
	part arm64 make --no-print-directory test-arm64
	part riscv64 make --no-print-directory test-riscv64
fi
echo "$passed passed, $failed failed"
exit $status
