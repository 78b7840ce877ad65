#!/bin/sh
# A traced process reached from other CLIs while it runs: maps read and
# written live in shared memory (bpfrt map dump/update -p), a second
# controller with its own object, detach by one controller, by a killed
# one, by bpfrt trace --detach, and a forking target. The target
# (tests/trace/stepper.c, plain gcc -O2) does one step per command read
# from a fifo and prints one line per step, so every check waits for the
# line it needs (bounded, generous) and nothing depends on timing. TAP for
# tests/run.sh.
B=${BUILD:-build}
T=$B/tests/trace
P=$B/tests/progs
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; printf '%s\n' "$out" | sed 's/^/#   /' | head -40; }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
has() { printf '%s\n' "$out" | grep -q -- "$1"; }

if [ "$(uname -m)" != x86_64 ] || [ -n "$BPFRT_CROSS_QEMU" ]; then
	echo "1..0 # SKIP uprobes are placed by the x86-64 kprobe engine"
	exit 0
fi
if ldd "$B/libbpfrt-agent.so" 2>/dev/null | grep -q libasan; then
	echo "1..0 # SKIP the agent of a sanitizer build cannot load into uninstrumented commands"
	exit 0
fi
tmp=$(mktemp -d) || exit 1
cleanup() {
	exec 3>&- 2>/dev/null
	for p in $bg; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
bg=

# wait_for FILE REGEX [N]: until N (1) lines of FILE match (60 s at most)
wait_for() {
	wf_i=0
	while :; do
		wf_n=$(grep -c -- "$2" "$1" 2>/dev/null)
		[ "${wf_n:-0}" -ge "${3:-1}" ] && return 0
		wf_i=$((wf_i + 1))
		[ $wf_i -gt 600 ] && return 1
		sleep 0.1
	done
}
# step CMD REGEX: one command to the target, then its answer (one more
# line matching REGEX than before)
step() {
	st_k=$(grep -c -- "$2" "$tmp/out" 2>/dev/null)
	echo "$1" >&3 && wait_for "$tmp/out" "$2" $((${st_k:-0} + 1))
}
bss() { "$B/bpfrt" map dump -p "$pid" .bss 2>&1 | sed -n "s/^$1 = //p"; }

# what the target prints untraced, for the same commands
printf 'code\nwork 10\nfork 2\nwork 5\ncode\nquit\n' | "$T/stepper" >"$tmp/plain.txt"
plain_code=$(sed -n 's/^code //p' "$tmp/plain.txt" | head -1)

mkfifo "$tmp/in"
"$B/bpfrt" trace "$P/trace_work.bpf.o" -- "$T/stepper" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
a=$!
bg="$a"
exec 3>"$tmp/in"
wait_for "$tmp/out" '^pid '
pid=$(sed -n 's/^pid //p' "$tmp/out")

step 'work 10' '^did 10 '
out=$("$B/bpfrt" map dump -p "$pid" .bss 2>&1); rc=$?
check "map dump -p: a traced process's globals read live from a second CLI" \
	'[ $rc -eq 0 ] && has "^hits = 10$" && has "^ret_hits = 10$"'
step 'work 5' '^did 5 '
check "map dump -p again: the counter grew with the target's work (10, then 15)" \
	'[ "$(bss hits)" = 15 ]'
out=$("$B/bpfrt" map dump -p "$pid" per_a 2>&1); rc=$?
check "a hash map: read live from its shared memory, not through the agent" \
	'[ $rc -eq 0 ] && has "^per_a\[7\] = 15$" && ! has "through the agent"'
out=$("$B/bpfrt" map update -p "$pid" per_a 7 100 2>&1); rc=$?
step 'work 2' '^did 2 '
out="$out
$("$B/bpfrt" map dump -p "$pid" per_a 2>&1)"
check "a hash map updated through the agent (its writer), then read live: 100 + 2" \
	'[ $rc -eq 0 ] && has "updated through the agent" && has "^per_a\[7\] = 102$"'
out=$("$B/bpfrt" map update -p "$pid" .bss hits 1000 2>&1); rc=$?
step 'work 1' '^did 1 '
check "map update -p: a global written in place, the programs count on from it" \
	'[ $rc -eq 0 ] && [ "$(bss hits)" = 1001 ]'
out=$("$B/bpfrt" map dump -p "$pid" nosuch 2>&1); rc=$?
check "map dump -p of no such map: refused, listing the maps there" \
	'[ $rc -eq 1 ] && has "no map .nosuch." && has "trace_work.bpf.o:.bss"'
step code '^code '
traced_code=$(sed -n 's/^code //p' "$tmp/out" | tail -1)

# a second controller with its own object, through the agent's socket
"$B/bpfrt" trace "$P/trace_live.bpf.o" -p "$pid" >"$tmp/b.out" 2>"$tmp/b.err" &
b=$!
bg="$bg $b"
wait_for "$tmp/b.err" 'attached to'
before=$(bss hits)
step 'work 10' '^did 10 '
out=$("$B/bpfrt" map dump -p "$pid" calls 2>&1)
pc=$("$B/bpfrt" map dump -p "$pid" calls_pcpu 2>&1 | sed -n 's/^calls_pcpu\[0\] = \[\(.*\)\]$/\1/p' |
	tr -d ' ' | tr ',' '+')
check "two controllers on one target: the second object's array and per-CPU array live" \
	'has "^calls\[0\] = 10$" && has "^calls\[1\] = 45$" && [ "$(( ${pc:-0} ))" -eq 10 ] &&
	 [ "$(bss hits)" -eq $((before + 10)) ]'
wait_for "$tmp/b.out" '^args: 01 00'
out=$(cat "$tmp/b.out")
check "the second controller consumes its ring buffer from the shared mapping" \
	'has "^args: 00 00 00 00 00 00 00 00$" && has "^args: 01 00 00 00 00 00 00 00$"'
kill -INT $b
wait $b; rc=$?
out=$(cat "$tmp/b.out" "$tmp/b.err")
check "the second controller's Ctrl-C: its final dump, its own links detached" \
	'[ $rc -eq 0 ] && has "^calls\[0\] = 10$" && has "detached from $pid"'
before=$(bss hits)
step 'work 10' '^did 10 '
out=$("$B/bpfrt" map dump -p "$pid" calls 2>&1); rc=$?
check "after it: the first controller's programs still count, the second's object is gone" \
	'[ $rc -eq 1 ] && [ "$(bss hits)" -eq $((before + 10)) ]'

# a controller killed outright: the agent sees its socket close
"$B/bpfrt" trace "$P/trace_live.bpf.o" -p "$pid" >"$tmp/c.out" 2>"$tmp/c.err" &
c=$!
bg="$bg $c"
wait_for "$tmp/c.err" 'attached to'
kill -9 $c
wait $c 2>/dev/null
i=0
while "$B/bpfrt" map dump -p "$pid" calls >/dev/null 2>&1 && [ $i -lt 600 ]; do
	i=$((i + 1))
	sleep 0.1
done
out=$("$B/bpfrt" links "$pid" 2>&1)
check "a controller killed by SIGKILL: the agent detaches its links, the others stay" \
	'[ $i -lt 600 ] && ! has "count_work" && has "on_work"'
step 'fork 2' '^forked 2$'
out=$(cat "$tmp/out")
check "a fork child runs clean code (its work() bytes as untraced), the parent stays traced" \
	'[ "$(grep -c "^child 3003 $plain_code$" "$tmp/out")" -eq 2 ] &&
	 [ "$traced_code" != "$plain_code" ]'

# every controller detached from another CLI
out=$("$B/bpfrt" trace --detach "$pid" 2>&1); rc=$?
check "trace --detach PID: every link of every controller removed" \
	'[ $rc -eq 0 ] && has "detached from $pid" && has "of 1 controllers"'
wait_for "$tmp/err" 'detached by another bpfrt'
step 'work 5' '^did 5 '
step code '^code '
step quit '^done$'
exec 3>&-
wait $a; rc=$?
bg=
out=$(cat "$tmp/out" "$tmp/err")
check "after --detach: the code is the original again, the output what an untraced run prints" \
	'[ $rc -eq 0 ] && [ "$(sed -n "s/^code //p" "$tmp/out" | tail -1)" = "$plain_code" ] &&
	 [ "$(grep "^did 5 " "$tmp/out" | tail -1)" = "$(grep "^did 5 " "$tmp/plain.txt")" ] &&
	 [ "$(grep -c "^child" "$tmp/out")" -eq 2 ]'
check "the detached controller printed its final dump and ended with the command" \
	'has "^hits = " && has "detached by another bpfrt"'
out=$("$B/bpfrt" trace --detach "$pid" 2>&1); rc=$?
check "trace --detach of a process without an agent: refused, naming why" \
	'[ $rc -eq 1 ] && has "no bpfrt agent"'

# programs running on another thread while the main one forks
"$B/bpfrt" trace --no-dump "$P/trace_work.bpf.o" -- "$T/stepper" spin <"$tmp/in" \
	>"$tmp/out" 2>"$tmp/err" &
a=$!
bg="$a"
exec 3>"$tmp/in"
wait_for "$tmp/out" '^pid '
pid=$(sed -n 's/^pid //p' "$tmp/out")
step 'fork 20' '^forked 20$'; frc=$?
step quit '^done$'
exec 3>&-
wait $a; rc=$?
bg=
out=$(cat "$tmp/out" "$tmp/err")
check "forks while programs run on another thread: 20 children, each with clean code" \
	'[ $frc -eq 0 ] && [ $rc -eq 0 ] && [ "$(grep -c "^child 3003 $plain_code$" "$tmp/out")" -eq 20 ]'

# --follow-fork: children keep the programs until the controller goes
"$B/bpfrt" trace --follow-fork "$P/trace_live.bpf.o" -- "$T/stepper" <"$tmp/in" >"$tmp/out" \
	2>"$tmp/err" &
a=$!
bg="$a"
exec 3>"$tmp/in"
wait_for "$tmp/out" '^pid '
pid=$(sed -n 's/^pid //p' "$tmp/out")
step 'fork 2' '^forked 2$'
step 'work 3' '^did 3 '
out=$("$B/bpfrt" map dump -p "$pid" calls 2>&1)
check "--follow-fork: the children's calls count in the shared array (2 x 3, then 3)" \
	'has "^calls\[0\] = 9$" && [ "$(grep -c "^child 3003 $plain_code$" "$tmp/out")" -eq 0 ]'
out=$("$B/bpfrt" map dump -p "$pid" by_a 2>&1)
check "--follow-fork: a child's hash map is its own copy, the parent's counts only its 3" \
	'has "^by_a\[7\] = 3$" && ! has "through the agent"'
step hold '^holding '
child=$(sed -n 's/^holding //p' "$tmp/out")
bg="$bg $child"
wait_for "$tmp/out" "^held $child "
held_code=$(sed -n "s/^held $child //p" "$tmp/out" | tail -1)
out=$("$B/bpfrt" trace --detach "$pid" 2>&1); rc=$?
wait_for "$tmp/err" 'detached by another bpfrt'
# the child detaches when the controller's socket hangs up: ask it
# until it shows the original code (bounded)
k=1
while [ "$(sed -n "s/^held $child //p" "$tmp/out" | tail -1)" != "$plain_code" ] && [ $k -lt 300 ]; do
	kill -USR1 "$child"
	k=$((k + 1))
	wait_for "$tmp/out" "^held $child " $k
done
check "--follow-fork: a child's probes stay while traced, go with the controller's detach" \
	'[ $rc -eq 0 ] && [ "$held_code" != "$plain_code" ] &&
	 [ "$(sed -n "s/^held $child //p" "$tmp/out" | tail -1)" = "$plain_code" ]'
kill -TERM "$child"
step quit '^done$'
exec 3>&-
wait $a
bg=

# the target killed by a signal: the shared maps' last values remain
mkfifo "$tmp/in2"
"$B/bpfrt" trace "$P/trace_live.bpf.o" -- "$T/stepper" <"$tmp/in2" >"$tmp/out" 2>"$tmp/err" &
a=$!
bg="$a"
exec 3>"$tmp/in2"
wait_for "$tmp/out" '^pid '
pid=$(sed -n 's/^pid //p' "$tmp/out")
step 'work 10' '^did 10 '
kill -9 "$pid"
exec 3>&-
wait $a; rc=$?
bg=
out=$(cat "$tmp/out" "$tmp/err")
check "a target killed by SIGKILL: the maps in shared memory dumped as it left them" \
	'[ $rc -eq 137 ] && has "as it left them" && has "^calls\[0\] = 10$" &&
	 has "^by_a\[7\] = 10$" && ! has "are lost with it" &&
	 has "^args: 01 00 00 00 00 00 00 00$"'
echo "1..$n"
