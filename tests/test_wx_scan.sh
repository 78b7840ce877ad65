#!/bin/sh
# The writable+executable mapping scan of tests/testlib.c: every test
# binary ends with "ok N - no_wx_mapping" and its plan "1..N", and a w+x
# page (mapped by testlib itself when BPFRT_TESTLIB_MAP_WX=1) fails both
# the test that ran and the final line, with the mapping in the message.
# Run by tests/run.sh with BUILD=<build dir>; prints "ok N - name" lines.
BUILD=${BUILD:-build}
BIN=$BUILD/tests/test_run
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$BIN" ]; then
	echo "not ok 1 - $BIN exists"
	echo "1..1"
	exit 0
fi
env -u BPFRT_TESTLIB_MAP_WX "$BIN" >"$tmp/clean" 2>&1
rc=$?
n=$(grep -c -E '^(not )?ok' "$tmp/clean")
if [ "$rc" -eq 0 ] && tail -2 "$tmp/clean" | head -1 | grep -q -E '^ok [0-9]+ - no_wx_mapping$' &&
   [ "$(tail -1 "$tmp/clean")" = "1..$n" ]; then
	echo "ok 1 - a clean binary ends with ok no_wx_mapping"
else
	echo "not ok 1 - a clean binary ends with ok no_wx_mapping"
	sed 's/^/# /' "$tmp/clean" | tail -5
fi
BPFRT_TESTLIB_MAP_WX=1 "$BIN" >"$tmp/wx" 2>&1
rc=$?
if [ -n "$BPFRT_CROSS_QEMU" ]; then
	echo "ok 2 - a w+x mapping fails the scan # SKIP qemu-user's /proc/self/maps shows no guest w+x page"
elif grep -q 'cannot map a w+x page' "$tmp/wx"; then
	echo "ok 2 - a w+x mapping fails the scan # SKIP the system refuses w+x pages"
elif [ "$rc" -ne 0 ] && tail -2 "$tmp/wx" | head -1 | grep -q -E '^not ok [0-9]+ - no_wx_mapping$' &&
     grep -q -E '^#.*writable\+executable mapping: [0-9a-f]+-[0-9a-f]+ rwx' "$tmp/wx" &&
     [ "$(grep -c '^not ok' "$tmp/wx")" -eq "$(grep -c -E '^(not )?ok' "$tmp/wx")" ]; then
	echo "ok 2 - a w+x mapping fails every test and no_wx_mapping"
else
	echo "not ok 2 - a w+x mapping fails every test and no_wx_mapping"
	sed 's/^/# /' "$tmp/wx" | tail -8
fi
echo "1..2"
exit 0
