#!/bin/sh
# The configuration table (src/engine/core/config.h): docs/CONFIG.md is
# what `bpfrt config --markdown` prints, and no library source but
# core/config.c reads a BPFRT_* variable itself. TAP for tests/run.sh.
cd "$(dirname "$0")/.." || exit 2
B=${BUILD:-build}
echo "1..2"
if out=$("$B/bpfrt" config --markdown 2>&1) && printf '%s\n' "$out" | diff -u docs/CONFIG.md - >/dev/null; then
	echo "ok 1 - docs/CONFIG.md matches bpfrt config --markdown"
else
	printf '%s\n' "$out" | diff -u docs/CONFIG.md - | head -20 | sed 's/^/# /'
	echo "not ok 1 - docs/CONFIG.md differs from bpfrt config --markdown (regenerate it)"
fi
stray=$(grep -rn 'getenv *( *"BPFRT_' src | grep -v '^src/engine/core/config\.c:')
if [ -z "$stray" ]; then
	echo "ok 2 - BPFRT_* variables are read only by src/engine/core/config.c"
else
	printf '%s\n' "$stray" | sed 's/^/# /'
	echo "not ok 2 - a library source reads a BPFRT_* variable itself (add it to core/config.h)"
fi
