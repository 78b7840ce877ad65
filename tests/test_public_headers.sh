#!/bin/sh
# The public headers (include/bpfrt/*.h) as users include them: each one
# alone, as C (gnu11) and as C++, with -Wall -Wextra -Werror; each one with
# its declarations inside extern "C" (C++ would otherwise mangle the names
# and fail only at link time); the umbrella bpfrt/bpfrt.h including every
# header (tracepoint.h excepted: its constructors belong only in the host
# files that place tracepoints); each function declared with BPFRT_API (or
# libbpfrt.so does not export it); the tracepoint macros expanded in C and
# C++. A source check: only the first build directory (BUILD=build) runs it.
cd "$(dirname "$0")/.." || exit 2
case "${BUILD:-build}" in
build) ;;
*) echo "1..1"; echo "ok 1 - public headers # SKIP checked once, with BUILD=build"; exit 0 ;;
esac
headers=$(cd include && ls bpfrt/*.h)
set -- $headers
echo "1..$(($# * 5 + 2))"
CC_C=${HEADER_CC:-gcc}
CC_CXX=${HEADER_CXX:-g++}
WARN="-Wall -Wextra -Werror"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
i=0
# ok/not ok line for a check whose output is in $tmp/out
report() {
	i=$((i + 1))
	if [ "$1" = 0 ]; then echo "ok $i - $2"; else sed 's/^/# /' "$tmp/out" | head -20; echo "not ok $i - $2"; fi
}
for h in $headers; do
	printf '#include "%s"\n' "$h" >"$tmp/one.c"
	$CC_C -std=gnu11 $WARN -Wstrict-prototypes -Iinclude -c "$tmp/one.c" -o "$tmp/one.o" >"$tmp/out" 2>&1
	report $? "$h compiles alone as C (gnu11, $WARN)"
	$CC_CXX -x c++ $WARN -Iinclude -fsyntax-only "$tmp/one.c" >"$tmp/out" 2>&1
	report $? "$h compiles alone as C++ ($WARN)"
	$CC_CXX -x c++ -std=c++11 $WARN -Iinclude -fsyntax-only "$tmp/one.c" >"$tmp/out" 2>&1
	report $? "$h compiles alone as C++11"
	# a header declaring functions must wrap them in extern "C"
	if grep -qE '^(BPFRT_API )?[a-z].*\bbpfrt_[a-z0-9_]+\(' "include/$h" && ! grep -q 'extern "C"' "include/$h"; then
		echo "include/$h declares functions but has no extern \"C\" block" >"$tmp/out"; rc=1
	else
		rc=0
	fi
	report $rc "$h wraps its declarations in extern \"C\" for C++"
	# a function declared without BPFRT_API is not exported by libbpfrt.so
	grep -nE '^[A-Za-z_].*\bbpfrt_[a-z0-9_]+\(' "include/$h" |
		grep -vE '^[0-9]+:(BPFRT_API |typedef |static |extern |#)' >"$tmp/out"
	[ ! -s "$tmp/out" ]
	report $? "$h declares every function with BPFRT_API (include/bpfrt/export.h)"
done

missing=
for h in $headers; do
	case $h in bpfrt/bpfrt.h|bpfrt/tracepoint.h) continue ;; esac
	grep -qxF "#include \"$h\"" include/bpfrt/bpfrt.h || missing="$missing $h"
done
echo "not in bpfrt/bpfrt.h:$missing" >"$tmp/out"
[ -z "$missing" ]
report $? "bpfrt/bpfrt.h includes every public header but tracepoint.h"

cat >"$tmp/tp.c" <<'EOC'
#include "bpfrt/tracepoint.h"
BPFRT_DECLARE_TRACEPOINT(header_check_event, int status, const char *path);
BPFRT_DECLARE_TRACEPOINT(header_check_bare);
BPFRT_DEFINE_TRACEPOINT(header_check_event);
BPFRT_DEFINE_TRACEPOINT(header_check_bare);
int header_check_fire(int status, const char *path);
int header_check_fire(int status, const char *path)
{
	BPFRT_TRACEPOINT(header_check_event, status, path);
	BPFRT_TRACEPOINT(header_check_bare);
	return BPFRT_TRACEPOINT_ENABLED(header_check_event);
}
EOC
{ $CC_C -std=gnu11 $WARN -Iinclude -c "$tmp/tp.c" -o "$tmp/tp.o" &&
  $CC_CXX -x c++ $WARN -Iinclude -c "$tmp/tp.c" -o "$tmp/tp_cxx.o"; } >"$tmp/out" 2>&1
report $? "tracepoint macros expand warning-free in C and C++"
