#!/bin/sh
# The public API as the headers declare it: every function declared (not
# defined static) in include/bpfrt/*.h, one name per line, sorted. gcc's
# -aux-info lists the prototypes the compiler saw with the file that
# declared each, so macro-generated declarations (bpfrt_tracepoint_fireN)
# count and comments do not. What libbpfrt.so exports must be exactly this
# list (tests/test_exports.sh, tests/test_install.sh).
# Usage: scripts/public-symbols.sh [INCLUDE_DIR]   (default: include)
inc=${1:-$(dirname "$0")/../include}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
for h in "$inc"/bpfrt/*.h; do
	printf '#include "bpfrt/%s"\n' "$(basename "$h")"
done >"$tmp/all.c"
${CC:-gcc} -std=gnu11 -I"$inc" -fsyntax-only -aux-info "$tmp/aux" "$tmp/all.c" || exit 2
grep -E '^/\* [^ ]*/bpfrt/[a-z0-9_]+\.h:[0-9]+:[A-Z]+ \*/ extern ' "$tmp/aux" |
	sed -n 's/.*[ *]\([A-Za-z_][A-Za-z0-9_]*\) (.*/\1/p' | sort -u
