#!/bin/sh
# `bpfrt execmem` (alias prog-pack): loads programs JIT'ed and prints the
# prog packs and their backing. Checks that many small programs share one
# pack, that --no-pack and BPFRT_NO_PACK=1 give each image its own
# mapping, and that bad input ends with a message and no dump.
# Run by tests/run.sh with BUILD=<build dir>; prints "ok N - name" lines.
BUILD=${BUILD:-build}
BPFRT=$BUILD/bpfrt
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0

report() { # report OK NAME DETAIL
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		printf '%s\n' "$3" | sed 's/^/# /'
	fi
}

# expect NAME WANT_STATUS PATTERN... -- COMMAND...: every extended regex
# PATTERN must match a line of stdout.
expect() {
	name=$1; want=$2; shift 2
	pats=
	while [ "$1" != "--" ]; do pats="$pats
$1"; shift; done
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	why=
	[ "$rc" -eq "$want" ] || why="exit status $rc, want $want"
	if grep -q -E 'Sanitizer|runtime error:' "$tmp/err"; then why="sanitizer report"; fi
	if [ -z "$why" ]; then
		printf '%s\n' "$pats" | while IFS= read -r p; do
			[ -z "$p" ] && continue
			grep -q -E -- "$p" "$tmp/out" || echo "no line matches: $p"
		done >"$tmp/missing"
		[ -s "$tmp/missing" ] && why=$(cat "$tmp/missing")
	fi
	if [ -z "$why" ]; then
		report 1 "$name"
	else
		report 0 "$name" "$why
stdout: $(head -c 600 "$tmp/out")
stderr: $(head -c 300 "$tmp/err")"
	fi
}

if [ ! -x "$BPFRT" ]; then
	report 0 "$BPFRT exists" "not built"
	echo "1..$n"
	exit 0
fi

printf 'mov %%r0, 1\nexit\n' >"$tmp/one.s"
cat >"$tmp/loop.s" <<'ASM'
mov %r0, 0
mov %r2, 100
loop:
add %r0, %r2
sub %r2, 1
jne %r2, 0, loop
exit
ASM
printf 'mov %%r0, 1\nbogus %%r1\nexit\n' >"$tmp/bad.s"

unset BPFRT_NO_PACK
expect "execmem: no programs, empty allocator" 0 \
	'^packing: on$' '^packs: 0 ' '^own mappings: 0$' '^images: 0,' -- \
	"$BPFRT" execmem
expect "execmem: 1,000 small programs share one pack" 0 \
	'^packing: on$' '^packs: 1 \(4k [01], thp-shmem [01], thp-anon [01], hugetlb [01]\), spare 0$' \
	'^own mappings: 0$' '^images: 1000,' \
	'^pack 0x[0-9a-f]+: (4k|thp-shmem|thp-anon|hugetlb), [0-9]+/32768 chunks used$' -- \
	"$BPFRT" execmem --copies 1000 "$tmp/one.s"
# 1,000 copies of one image take the same whole number of chunks each
# (one here; more where calls need 64-bit addresses, as under ASan)
used=$(sed -n 's|^pack .*, \([0-9]*\)/32768 chunks used$|\1|p' "$tmp/out")
if [ -n "$used" ] && [ "$used" -gt 0 ] && [ $((used % 1000)) -eq 0 ] && [ "$used" -le 8000 ]; then
	report 1 "execmem: whole chunks per small image"
else
	report 0 "execmem: whole chunks per small image" "$(cat "$tmp/out")"
fi
expect "execmem: two files, each listed" 0 \
	"^$tmp/one.s: [0-9]+ bytes of native code at 0x" \
	"^$tmp/loop.s: [0-9]+ bytes of native code at 0x" '^images: 2,' -- \
	"$BPFRT" execmem "$tmp/one.s" "$tmp/loop.s"
expect "execmem --no-pack: one mapping per image" 0 \
	'^packing: off$' '^packs: 0 ' '^own mappings: 5$' '^images: 5,' -- \
	"$BPFRT" execmem --no-pack --copies 5 "$tmp/loop.s"
expect "prog-pack alias with BPFRT_NO_PACK=1" 0 \
	'^packing: off$' '^own mappings: 2$' -- \
	env BPFRT_NO_PACK=1 "$BPFRT" prog-pack "$tmp/one.s" "$tmp/loop.s"

# bad input: status 1 or 2, a one-line message, no dump on stdout
for c in "bad assembly|1|$tmp/bad.s" "missing file|1|$tmp/nope.s" \
	 "--copies 0|2|--copies 0 $tmp/one.s" "--copies junk|2|--copies 1x $tmp/one.s" \
	 "unknown option|2|--frob $tmp/one.s"; do
	name=${c%%|*}; rest=${c#*|}; want=${rest%%|*}; args=${rest#*|}
	# shellcheck disable=SC2086
	"$BPFRT" execmem $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ] && ! grep -q '^packing:' "$tmp/out" && [ -s "$tmp/err" ] &&
	   ! grep -q -E 'Sanitizer|runtime error:' "$tmp/err"; then
		report 1 "execmem: $name rejected"
	else
		report 0 "execmem: $name rejected" "status $rc (want $want)
stdout: $(head -c 300 "$tmp/out")
stderr: $(head -c 300 "$tmp/err")"
	fi
done
# bpfrt-bench prog-pack, briefly: 50 programs share one pack, no-pack gives
# each its own executable mapping, and the targets are judged.
BENCH=$BUILD/bpfrt-bench
if [ -x "$BENCH" ]; then
	expect "bpfrt-bench prog-pack: short run" 0 \
		'^all run, 50 programs: 50 loaded, 50 run round-robin' \
		'^  pack +[0-9.]+[kM]? .* +1 +0 +[0-9]+ ' \
		'^  no-pack +[0-9.]+[kM]? .* 0 +50 +[0-9]+ ' \
		'^  pack/no-pack runs/s: [0-9.]+x' \
		'^  pack +[0-9.]+k? .*[0-9.]+k?$' \
		'^    1 packs for 50 programs: MISSED \(not measured: run with -n 1000\)' \
		'programs/s \(pack\): (met|MISSED)$' -- \
		"$BENCH" prog-pack -r 1 -t 20 -n 50 -s 0 -c 10
	expect "bpfrt-bench prog-pack --direct --sweep" 0 \
		'^ +30 +[0-9.]+M +[0-9.]+M +[0-9.]+x +[0-9]+ +30$' -- \
		"$BENCH" prog-pack --direct --sweep 30 -r 1 -t 20
elif [ -n "$BPFRT_CROSS_QEMU" ]; then
	n=$((n + 1))
	echo "ok $n - $BENCH exists # SKIP bench/ is x86-64 only (not cross-built)"
else
	report 0 "$BENCH exists" "not built"
fi
echo "1..$n"
exit 0
