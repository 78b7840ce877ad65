#!/bin/sh
# The program kind table (src/engine/core/prog_kind.c): docs/PROGRAM_KINDS.md
# is what `bpfrt kinds --markdown` prints. TAP for tests/run.sh.
cd "$(dirname "$0")/.." || exit 2
B=${BUILD:-build}
echo "1..2"
if out=$("$B/bpfrt" kinds --markdown 2>&1) && printf '%s\n' "$out" | diff -u docs/PROGRAM_KINDS.md - >/dev/null; then
	echo "ok 1 - docs/PROGRAM_KINDS.md matches bpfrt kinds --markdown"
else
	printf '%s\n' "$out" | diff -u docs/PROGRAM_KINDS.md - | head -20 | sed 's/^/# /'
	echo "not ok 1 - docs/PROGRAM_KINDS.md differs from bpfrt kinds --markdown (regenerate it)"
fi
# the plain listing names every kind the markdown does
n_md=$(printf '%s\n' "$out" | grep -c '^| `')
n_plain=$("$B/bpfrt" kinds | grep -c '^[a-z]')
if [ "$n_md" -gt 30 ] && [ "$n_md" = "$n_plain" ]; then
	echo "ok 2 - bpfrt kinds lists the $n_plain kinds"
else
	echo "not ok 2 - bpfrt kinds lists $n_plain kinds, the markdown $n_md"
fi
