#!/bin/sh
# `bpfrt --help` names every command main() dispatches, one line each, and
# the exit statuses; every command keeps them: 0 done, 1 the operation
# failed (a missing file), 2 usage error (an unknown option, a missing
# argument); `bpfrt links PID` of no process is an error. TAP lines.
cd "$(dirname "$0")/.." || exit 2
B=${BUILD:-build}
n=0
errf=$(mktemp); trap 'rm -f "$errf"' EXIT
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "$out" | head -10 | sed 's/^/# /'; echo "not ok $n - $1"; }

help=$("$B/bpfrt" --help 2>&1); rc=$?
# the commands main() dispatches on (argv[1])
cmds=$(sed -n 's/.*strcmp(argv\[1\], "\([^"]*\)").*/\1/p' tools/bpfrt.c | sort -u)
missing=
for c in $cmds; do
	echo "$help" | grep -q -- "^  $c \|^  $c$\|(alias $c)\|, $c[ ,]\|^  $c," || missing="$missing $c"
done
out=$help
if [ $rc -eq 0 ] && [ -n "$cmds" ] && [ -z "$missing" ]; then
	ok "--help lists every command main() knows ($(echo $cmds | wc -w) names)"
else
	no "--help exited $rc; commands not listed:$missing"
fi
if echo "$help" | grep -q "^exit status: 0 done; 1 the operation failed.*; 2 usage error$"; then
	ok "--help documents the exit statuses"
else
	no "--help does not document the exit statuses"
fi
# COMMAND --help: its line, exit 0
bad=
for c in $(echo "$help" | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do
	[ "$c" = help ] && continue
	o=$("$B/bpfrt" "$c" --help 2>&1); rc=$?
	[ $rc -eq 0 ] && echo "$o" | head -1 | grep -q "^usage: bpfrt $c " || bad="$bad [$c: $rc]"
done
out=
if [ -z "$bad" ]; then ok "bpfrt COMMAND --help prints the command's line, exit 0, for every command"; else no "COMMAND --help:$bad"; fi

out=$("$B/bpfrt" help 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$out" = "$help" ]; then ok "bpfrt help is --help"; else no "bpfrt help exited $rc"; fi
out=$("$B/bpfrt" 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "^usage: bpfrt COMMAND"; then ok "no command: usage, exit 2"; else no "no command exited $rc"; fi
out=$("$B/bpfrt" frobnicate 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "unknown command 'frobnicate'"; then ok "unknown command: exit 2"; else no "unknown command exited $rc"; fi

# status 2: usage errors, command by command
bad=
obj=$B/tests/progs/maps.bpf.o
while read -r args; do
	"$B/bpfrt" $args >/dev/null 2>"$errf"; rc=$?
	[ $rc -eq 2 ] && [ -s "$errf" ] || bad="$bad [$args: $rc]"
done <<EOT
asm
asm in.s --bogus
disasm
run
run x.s --bogus
dump
dump --bogus x.s
prog
prog frobnicate
prog list
prog run $obj
prog run $obj --prog write_entry --bogus
prog verify $obj --log-level 7
prog dump $obj --bogus
map
map dump $obj
map dump $obj hash --bogus
gen
gen skeleton
gen skeleton $obj name 1x
links not-a-pid
conformance --bogus
execmem --bogus
execmem --copies 0 x.s
config --bogus
EOT
out=
if [ -z "$bad" ]; then ok "usage errors exit 2 with a message, for every command"; else no "not exit 2:$bad"; fi

# status 1: the operation failed
bad=
while read -r args; do
	"$B/bpfrt" $args >/dev/null 2>"$errf"; rc=$?
	[ $rc -eq 1 ] && grep -q "No such file\|nonexistent" "$errf" || bad="$bad [$args: $rc]"
done <<EOT
asm /nonexistent.s
disasm /nonexistent.bin
run /nonexistent.s
dump /nonexistent.s
prog list /nonexistent.o
prog run /nonexistent.o --prog x
prog verify /nonexistent.o
prog dump /nonexistent.o
map dump /nonexistent.o m
gen skeleton /nonexistent.o
execmem /nonexistent.s
EOT

if [ -z "$bad" ]; then ok "a missing file exits 1 naming it, for every command that reads one"; else no "not exit 1:$bad"; fi

# links: a PID that is no process is an error; one without links is not
sleep 30 & live=$!
gone=$(sh -c 'echo $$')
out=$("$B/bpfrt" links "$gone" 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "pid $gone: no such process"; then
	ok "links PID of no process: exit 1, 'no such process'"
else
	no "links of a missing pid exited $rc"
fi
out=$("$B/bpfrt" links "$live" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "^pid $live: no bpfrt links$"; then
	ok "links PID of a process without bpfrt: exit 0, says so"
else
	no "links of a live pid exited $rc"
fi
out=$("$B/bpfrt" links "$live" "$gone" 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "^pid $live: no bpfrt links$" && echo "$out" | grep -q "pid $gone: no such process"; then
	ok "links with one missing PID of two: both reported, exit 1"
else
	no "links live+gone exited $rc"
fi
kill "$live" 2>/dev/null
echo "1..$n"
