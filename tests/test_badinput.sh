#!/bin/sh
# Bad input to `bpfrt run` and to the bpfrt-conformance plugin: each case
# must end with a one-line message on stderr, nothing on stdout, a non-zero
# exit status below 128 (no signal), and no sanitizer report.
# Run by tests/run.sh with BUILD=<build dir>; prints "ok N - name" lines.
BUILD=${BUILD:-build}
BPFRT=$BUILD/bpfrt
PLUGIN=$BUILD/bpfrt-conformance
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
# A runaway program must not stall the suite; timeout's 124 counts as a failure.
if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 120"; else TIMEOUT=; fi

report() { # report OK NAME DETAIL
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		printf '%s\n' "$3" | sed 's/^/# /'
	fi
}

# expect_error NAME STDIN COMMAND...
expect_error() {
	name=$1; input=$2; shift 2
	$TIMEOUT "$@" <"$input" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(grep -c . "$tmp/err")
	why=
	if [ "$rc" -eq 0 ]; then why="exit status 0"
	elif [ "$rc" -eq 124 ] && [ -n "$TIMEOUT" ]; then why="timed out"
	elif [ "$rc" -ge 128 ]; then why="killed by a signal (status $rc)"
	elif grep -q -E 'Sanitizer|runtime error:|LeakSanitizer' "$tmp/err"; then why="sanitizer report"
	elif [ -s "$tmp/out" ]; then why="unexpected stdout"
	elif [ "$lines" -ne 1 ]; then why="$lines lines of error message, want 1"
	fi
	if [ -z "$why" ]; then
		report 1 "$name"
	else
		report 0 "$name" "$why (status $rc)
stdout: $(head -c 300 "$tmp/out")
stderr: $(head -c 600 "$tmp/err")"
	fi
}

# Octal escapes for printf(1): N pseudo-random bytes from SEED (awk's
# generator, so the bytes are the same on every run of this awk).
random_octal() {
	awk -v seed="$1" -v n="$2" 'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "\\%03o", int(rand() * 256) }'
}

# Hex as the conformance runner sends it: "xx  " per byte, one line.
to_hex() {
	od -An -v -tx1 "$1" | tr -s ' \n' '  ' | sed 's/ /  /g; s/^  //'
}

for tool in "$BPFRT" "$PLUGIN"; do
	if [ ! -x "$tool" ]; then
		report 0 "$tool exists" "not built"
		echo "1..$n"
		exit 0
	fi
done

MOV='\267\000\000\000\000\000\000\000'   # mov r0, 0
EXIT='\225\000\000\000\000\000\000\000'  # exit
LDDW='\030\000\000\000\001\000\000\000'  # lddw r0, first slot

# ---- the inputs ----
printf "$MOV$EXIT\225\000\000" >"$tmp/not8.bin"
: >"$tmp/empty.bin"
printf "$LDDW" >"$tmp/lddw_truncated.bin"
printf "$LDDW$EXIT" >"$tmp/lddw_no_second_slot.bin"
# 1,000,000 movs then an exit: one instruction over the limit.
printf "$MOV" >"$tmp/big.bin"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	cat "$tmp/big.bin" "$tmp/big.bin" >"$tmp/big2.bin" && mv "$tmp/big2.bin" "$tmp/big.bin"
done
head -c 8000000 "$tmp/big.bin" >"$tmp/big2.bin"
printf "$EXIT" >>"$tmp/big2.bin"
mv "$tmp/big2.bin" "$tmp/big.bin"
# and as the plugin's hex, the same way (to_hex of 8 MB takes seconds)
printf 'b7  00  00  00  00  00  00  00  ' >"$tmp/big.hex"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	cat "$tmp/big.hex" "$tmp/big.hex" >"$tmp/big2.hex" && mv "$tmp/big2.hex" "$tmp/big.hex"
done
head -c 32000000 "$tmp/big.hex" >"$tmp/big2.hex"
printf '95  00  00  00  00  00  00  00' >>"$tmp/big2.hex"
mv "$tmp/big2.hex" "$tmp/big.hex"
for seed in 1 2 3 4 5 6; do
	printf "$(random_octal $seed $((seed * 64)))" >"$tmp/random$seed.bin"
done
# Random tails behind valid instructions get the validator past insn 0.
for seed in 7 8 9; do
	printf "$MOV$MOV$MOV$MOV$(random_octal $seed 256)" >"$tmp/random$seed.bin"
done

# ---- bpfrt run ----
ALL="not8 empty lddw_truncated lddw_no_second_slot big random1 random2 random3 random4 random5 random6 random7 random8 random9"
for f in $ALL; do
	for mode in --interp --jit; do
		expect_error "bpfrt run $mode: $f" /dev/null "$BPFRT" run "$tmp/$f.bin" $mode
	done
done
expect_error "bpfrt run: missing file" /dev/null "$BPFRT" run "$tmp/does-not-exist.bin"
expect_error "bpfrt run: --mem not hex" /dev/null "$BPFRT" run "$tmp/not8.bin" --mem zz

# ---- the plugin: same programs as hex on stdin ----
for f in $ALL; do
	[ "$f" = big ] || to_hex "$tmp/$f.bin" >"$tmp/$f.hex"
	for mode in --interpret --jit; do
		expect_error "plugin $mode: $f" "$tmp/$f.hex" "$PLUGIN" $mode
	done
done

# ---- the plugin: garbage on stdin, bad memory ----
printf 'hello world\n' >"$tmp/g1.hex"
printf '0x95 0x00 0x00 0x00 0x00 0x00 0x00 0x00\n' >"$tmp/g2.hex"
printf '9 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n' >"$tmp/g3.hex"
printf '950000000000000000\n' >"$tmp/g4.hex"
printf 'b7  00  00  00  01  00  00  00  95  00  00  00  00  00  00  0\n' >"$tmp/g5.hex"
cp "$tmp/random3.bin" "$tmp/g6.hex"
i=0
for g in g1 g2 g3 g4 g5 g6; do
	i=$((i + 1))
	expect_error "plugin: garbage hex on stdin ($i)" "$tmp/$g.hex" "$PLUGIN"
done
# mov r0, 0; jeq r0, 1, +1; ja -2; exit: valid, and never ends.
printf 'b7  00  00  00  00  00  00  00  15  00  01  00  01  00  00  00  05  00  fe  ff  00  00  00  00  95  00  00  00  00  00  00  00' >"$tmp/loop.hex"
for mode in --interpret --jit; do
	expect_error "plugin $mode: endless loop times out" "$tmp/loop.hex" \
		env BPFRT_CONFORMANCE_TIMEOUT=1 "$PLUGIN" $mode
done
printf '95  00  00  00  00  00  00  00' >"$tmp/exit.hex"
expect_error "plugin: memory argument not hex" "$tmp/exit.hex" "$PLUGIN" "12  zz"
expect_error "plugin: unknown option" "$tmp/exit.hex" "$PLUGIN" --frobnicate

# ---- bpfrt prog run: packets and contexts that do not fit the program ----
TR=$BUILD/tests/progs/test_run.bpf.o
printf '\000\020\000\000\000\040\000\000' >"$tmp/fake_xdp_md.bin" # data 0x1000, data_end 0x2000
head -c 16 /dev/zero >"$tmp/ctx16.bin"
head -c 70000 /dev/zero >"$tmp/huge.bin"
for mode in --interp --jit; do
	expect_error "prog run $mode: xdp without --data" /dev/null "$BPFRT" prog run "$TR" --prog xdp_rewrite $mode
	expect_error "prog run $mode: xdp with an xdp_md of fake pointers as --data" /dev/null \
		"$BPFRT" prog run "$TR" --prog xdp_rewrite --data "$tmp/fake_xdp_md.bin" $mode
	expect_error "prog run $mode: socket filter without --data" /dev/null \
		"$BPFRT" prog run "$TR" --prog socket_fields $mode
	expect_error "prog run $mode: --ctx shorter than the program reads" /dev/null \
		"$BPFRT" prog run "$TR" --prog kprobe_di --ctx "$tmp/ctx16.bin" $mode
	expect_error "prog run $mode: --data for a kprobe" /dev/null \
		"$BPFRT" prog run "$TR" --prog kprobe_di --data "$tmp/ctx16.bin" $mode
done
expect_error "prog run: --data over the packet limit" /dev/null \
	"$BPFRT" prog run "$TR" --prog xdp_rewrite --data "$tmp/huge.bin"
expect_error "prog run: --ctx over the context limit" /dev/null \
	"$BPFRT" prog run "$TR" --prog syscall_no_ctx --ctx "$tmp/huge.bin"
expect_error "prog run: --ctx missing file" /dev/null \
	"$BPFRT" prog run "$TR" --prog raw_tp_arg2 --ctx "$tmp/does-not-exist.bin"
expect_error "prog run: --repeat not a number" /dev/null \
	"$BPFRT" prog run "$TR" --prog raw_tp_arg2 --repeat 10x
expect_error "prog run: --repeat 0" /dev/null "$BPFRT" prog run "$TR" --prog raw_tp_arg2 --repeat 0
expect_error "map dump --after an xdp program (no packet)" /dev/null \
	"$BPFRT" map dump "$TR" .bss --after xdp_rewrite
echo "1..$n"
exit 0
