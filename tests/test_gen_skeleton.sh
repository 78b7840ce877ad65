#!/bin/sh
# `bpfrt gen skeleton` on every object of tests/progs: an object the loader
# opens gets a header that compiles with -Wall -Wextra -Werror as C and as
# C++ and whose NAME__open() finds every program (linked against this
# build's libbpfrt.a); one it refuses gets exit 1, the loader's message and
# no output. Then tests/skeleton/check_skeleton.c, built as C and as C++
# from the skeleton of skeleton.bpf.o, checks the typed globals against the
# object's symbols and runs, attaches and detaches through the skeleton;
# and the command's usage errors exit 2. Under qemu-user (BPFRT_CROSS_QEMU:
# BUILD holds launchers, no target libbpfrt.a) the emulated bpfrt makes the
# headers and the host compiler only compiles them. TAP lines for
# tests/run.sh.
cd "$(dirname "$0")/.." || exit 2
B=${BUILD:-build}
CC=${CC:-cc} CXX=${CXX:-g++}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); [ -s "$tmp/out" ] && sed 's/^/# /' "$tmp/out" | head -15; echo "not ok $n - $1"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
libs=$(make -s --no-print-directory BUILD="$B" print-ldlibs 2>/dev/null) || libs="-lbpf -lelf -lz -lpthread -lm"
san=
case "$B" in *san*) san="-fsanitize=address,undefined -fno-omit-frame-pointer" ;; esac
WARN="-Wall -Wextra -Werror"
# link and run against this build, or (cross) compile only
if [ -n "$BPFRT_CROSS_QEMU" ]; then
	link_c() { $CC -std=gnu11 $WARN -Iinclude -I"$tmp" -c -o "$1.o" "$2"; }
	link_cxx() { $CXX $WARN -Iinclude -I"$tmp" -c -o "$1.o" "$2"; }
	run_both() { :; }
	what="compiles as C and C++ ($WARN; not run under qemu-user)"
else
	link_c() { $CC -std=gnu11 $WARN $san -Iinclude -I"$tmp" -o "$1" "$2" "$B/libbpfrt.a" $libs; }
	link_cxx() { $CXX $WARN $san -Iinclude -I"$tmp" -o "$1" "$2" "$B/libbpfrt.a" $libs; }
	run_both() { "$1" && "$2"; }
	what="compiles as C and C++ ($WARN), opens"
fi

for obj in "$B"/tests/progs/*.bpf.o; do
	base=$(basename "$obj" .bpf.o)
	name=$(echo "$base" | tr -c 'A-Za-z0-9_\n' '_')_bpf
	hdr=$tmp/$base.skel.h
	rm -f "$tmp/out"
	"$B/bpfrt" gen skeleton "$obj" >"$hdr" 2>"$tmp/err"; rc=$?
	if ! "$B/bpfrt" prog list "$obj" >/dev/null 2>&1; then
		# the loader refuses it: so does gen, saying why, writing nothing
		if [ $rc -eq 1 ] && [ ! -s "$hdr" ] && grep -q "gen skeleton: .*$base" "$tmp/err"; then
			ok "$base.bpf.o: refused as the loader refuses it ($(head -1 "$tmp/err" | cut -c1-90))"
		else
			cp "$tmp/err" "$tmp/out"; no "$base.bpf.o: the loader refuses it, gen exited $rc"
		fi
		continue
	fi
	progs=$("$B/bpfrt" prog list "$obj" | awk 'NR > 1 { print $1 }')
	{
		echo "#include \"$base.skel.h\""
		echo "#include <stdio.h>"
		echo "int main(void)"
		echo "{"
		echo "	struct $name *s = ${name}__open();"
		echo "	int bad = 0;"
		echo "	if (!s) { puts(bpfrt_last_error()); return 1; }"
		for p in $progs; do
			echo "	if (!s->progs.$p || s->progs.$p != bpfrt_object_find_prog(s->obj, \"$p\")) { puts(\"no $p\"); bad = 1; }"
		done
		echo "	${name}__destroy(s);"
		echo "	return bad;"
		echo "}"
	} >"$tmp/$base.c"
	cp "$tmp/$base.c" "$tmp/$base.cc"
	if [ $rc -ne 0 ]; then
		cp "$tmp/err" "$tmp/out"; no "$base.bpf.o: gen skeleton exited $rc"
	elif ! link_c "$tmp/$base" "$tmp/$base.c" >"$tmp/out" 2>&1; then
		no "$base.skel.h does not compile as C with $WARN"
	elif ! link_cxx "$tmp/${base}_cxx" "$tmp/$base.cc" >"$tmp/out" 2>&1; then
		no "$base.skel.h does not compile as C++ with $WARN"
	elif ! run_both "$tmp/$base" "$tmp/${base}_cxx" >"$tmp/out" 2>&1; then
		no "$base.skel.h: ${name}__open() failed or lost a program"
	else
		ok "$base.bpf.o: skeleton $what, $(echo $progs | wc -w) programs"
	fi
done

# the typed globals, used
rm -f "$tmp/out"
if [ -n "$BPFRT_CROSS_QEMU" ]; then
	"$B/bpfrt" gen skeleton "$B/tests/progs/skeleton.bpf.o" >"$tmp/skeleton.skel.h" 2>/dev/null
	ok "skeleton.bpf.o from C # SKIP under qemu-user: no target libbpfrt.a in the launcher tree"
	ok "skeleton.bpf.o from C++ # SKIP the same"
elif "$B/bpfrt" gen skeleton "$B/tests/progs/skeleton.bpf.o" >"$tmp/skeleton.skel.h" 2>"$tmp/out" &&
	cp tests/skeleton/check_skeleton.c "$tmp/check.c" && cp tests/skeleton/check_skeleton.c "$tmp/check.cc" &&
	$CC -std=gnu11 $WARN $san -Iinclude -I"$tmp" -o "$tmp/check" "$tmp/check.c" "$B/libbpfrt.a" $libs >"$tmp/out" 2>&1 &&
	"$tmp/check" >"$tmp/out" 2>&1 && grep -q "^skeleton ok$" "$tmp/out"; then
	ok "skeleton.bpf.o from C: typed .rodata/.data/.bss/.data.custom/.rodata.knobs at the symbols' offsets, knobs set before load, run, attach, detach"
else
	no "skeleton.bpf.o: the C user of the skeleton failed"
fi
rm -f "$tmp/out"
if [ -n "$BPFRT_CROSS_QEMU" ]; then
	:
elif $CXX $WARN $san -Iinclude -I"$tmp" -o "$tmp/check_cxx" "$tmp/check.cc" "$B/libbpfrt.a" $libs >"$tmp/out" 2>&1 &&
	"$tmp/check_cxx" >"$tmp/out" 2>&1 && grep -q "^skeleton ok$" "$tmp/out"; then
	ok "skeleton.bpf.o from C++: the same checks"
else
	no "skeleton.bpf.o: the C++ user of the skeleton failed"
fi
rm -f "$tmp/out"
if grep -q "^	char __pad0\[8\];$" "$tmp/skeleton.skel.h" && ! grep -q hidden_count "$tmp/skeleton.skel.h" &&
	grep -q "^	__u32 scale;$" "$tmp/skeleton.skel.h"; then
	ok "static variables are left out (padding in their place); const volatile is stripped"
else
	no "skeleton.skel.h layout text"
fi

# usage and errors
"$B/bpfrt" gen skeleton >"$tmp/out" 2>&1; rc=$?
if [ $rc -eq 2 ] && grep -q usage "$tmp/out"; then ok "gen skeleton without OBJ: usage, exit 2"; else no "gen skeleton without OBJ exited $rc"; fi
"$B/bpfrt" gen skeleton "$B/tests/progs/skeleton.bpf.o" name 'not-an-ident' >"$tmp/out" 2>&1; rc=$?
if [ $rc -eq 2 ] && grep -q "not a C identifier" "$tmp/out"; then ok "name must be a C identifier: exit 2"; else no "bad name exited $rc"; fi
"$B/bpfrt" gen skeleton /nonexistent.bpf.o >"$tmp/hdr" 2>"$tmp/out"; rc=$?
if [ $rc -eq 1 ] && [ ! -s "$tmp/hdr" ] && grep -q "No such file" "$tmp/out"; then ok "a missing object: exit 1, no output"; else no "missing object exited $rc"; fi
"$B/bpfrt" gen skeleton "$B/tests/progs/skeleton.bpf.o" name probe >"$tmp/hdr" 2>"$tmp/out"; rc=$?
if [ $rc -eq 0 ] && grep -q "^struct probe {$" "$tmp/hdr" && grep -q "probe__open_and_load(void)" "$tmp/hdr"; then
	ok "name NAME names the struct and functions"
else
	no "name NAME exited $rc"
fi
echo "1..$n"
