#!/bin/sh
# docs/SUPPORTED.md is what `bpfrt features --markdown` prints from the live
# tables (helpers, kfuncs, map types, program kinds), and those tables are
# what it lists. TAP for tests/run.sh.
cd "$(dirname "$0")/.." || exit 2
B=${BUILD:-build}
echo "1..3"
if out=$("$B/bpfrt" features --markdown 2>&1) && printf '%s\n' "$out" | diff -u docs/SUPPORTED.md - >/dev/null; then
	echo "ok 1 - docs/SUPPORTED.md matches bpfrt features --markdown"
else
	printf '%s\n' "$out" | diff -u docs/SUPPORTED.md - | head -20 | sed 's/^/# /'
	echo "not ok 1 - docs/SUPPORTED.md differs from bpfrt features --markdown (regenerate it: $B/bpfrt features --markdown > docs/SUPPORTED.md)"
fi
# Linux's ids and names: what every user knows
plain=$("$B/bpfrt" features 2>&1)
if printf '%s\n' "$plain" | grep -q '^ *1  bpf_map_lookup_elem$' &&
   printf '%s\n' "$plain" | grep -q '^ *27  BPF_MAP_TYPE_RINGBUF$' &&
   printf '%s\n' "$plain" | grep -q '^  fentry  *SEC fentry'; then
	echo "ok 2 - helpers, map types and kinds under their Linux ids and names"
else
	printf '%s\n' "$plain" | head -20 | sed 's/^/# /'
	echo "not ok 2 - bpf_map_lookup_elem (1), BPF_MAP_TYPE_RINGBUF (27) or fentry missing"
fi
"$B/bpfrt" features bogus >/dev/null 2>&1
rc=$?
if [ $rc -eq 2 ]; then
	echo "ok 3 - an unknown argument is a usage error (exit 2)"
else
	echo "not ok 3 - bpfrt features bogus exited $rc, not 2"
fi
