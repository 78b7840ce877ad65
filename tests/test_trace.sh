#!/bin/sh
# bpfrt trace OBJ -- CMD: programs attached inside commands built with plain
# gcc -O2 (tests/trace/, mk/trace.mk) through the preloaded agent. TAP for
# tests/run.sh.
B=${BUILD:-build}
T=$B/tests/trace
P=$B/tests/progs
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; printf '%s\n' "$out" | sed 's/^/#   /' | head -40; }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
has() { printf '%s\n' "$out" | grep -q -- "$1"; }

# under qemu-user (BPFRT_CROSS_QEMU) uname says the host's architecture
if [ "$(uname -m)" != x86_64 ] || [ -n "$BPFRT_CROSS_QEMU" ]; then
	echo "1..0 # SKIP uprobes are placed by the x86-64 kprobe engine"
	exit 0
fi
if ldd "$B/libbpfrt-agent.so" 2>/dev/null | grep -q libasan; then
	# the sanitizer runtime must come first in a process: an instrumented
	# agent cannot be preloaded into an ordinary command
	echo "1..0 # SKIP the agent of a sanitizer build cannot load into uninstrumented commands"
	exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

out=$(timeout 120 "$B/bpfrt" trace "$P/trace_work.bpf.o" -- "$T/work" 4 10000 3 2>&1); rc=$?
check "4 threads: exact entry and return counts and the return values' sum" \
	'has "^hits = 40000$" && has "^ret_hits = 40000$" && has "^ret_sum = 259980000$"'
check "a hash map dumped with its BTF types, one line per key" \
	'has "^per_a\[0\] = 10000$" && has "^per_a\[3\] = 10000$"'
check "malloc counted in libc (SEC uprobe/libc.so.6:malloc)" 'has "^mallocs = 100$"'
check "trace_printk lines streamed from the target" \
	'[ "$(printf "%s\n" "$out" | grep -c "bpf_trace_printk: work [0-3] ")" -eq 2 ]'
check "the command's output unchanged and its exit status passed on" \
	'has "^total 259980000$" && [ $rc -eq 3 ]'
check "function-local statics (bpf_printk's format) are not dumped" '! has "fmt"'

out=$(timeout 120 "$B/bpfrt" trace "$P/trace_malloc_hist.bpf.o" -- "$T/work" 1 10 2>&1); rc=$?
v=$(printf '%s\n' "$out" | sed -n 's/^sizes_log2\[9\] = //p')
check "an array map: the slots programs wrote, by index (malloc(777) x100 in 512..1023)" \
	'[ $rc -eq 0 ] && [ "${v:-0}" -ge 100 ] && ! has "^sizes_log2\[63\]"'

out=$(timeout 120 "$B/bpfrt" trace --no-dump "$P/trace_work.bpf.o" -- "$T/work" 1 10 2>&1); rc=$?
check "--no-dump: no maps printed" '[ $rc -eq 0 ] && ! has "hits =" && has "^total 45$"'
check "ring buffer records streamed to the controller, in order" \
	'[ "$(printf "%s\n" "$out" | grep -c "^events:")" -eq 3 ] &&
	 [ "$(printf "%s\n" "$out" | grep "^events:" | tail -1)" = "events: 02 00 00 00 00 00 00 00" ]'

out=$(timeout 120 "$B/bpfrt" trace --interp "$P/trace_work.bpf.o" -- "$T/work" 2 1000 2>&1); rc=$?
check "--interp: the same counts from the interpreter" \
	'[ $rc -eq 0 ] && has "^hits = 2000$" && has "^ret_hits = 2000$"'

out=$(timeout 120 "$B/bpfrt" trace "$P/trace_plugin.bpf.o" -- "$T/plugin_host" \
	"$(cd "$T" && pwd)/libtrace_plugin.so" 2>&1); rc=$?
check "a library dlopen'ed after attach: pending, then probed from its first call" \
	'[ $rc -eq 0 ] && has "not loaded yet" && has "^plugin_hits = 5$" &&
	 has "^plugin_ret_sum = 55$" && has "^plugin sum 55$"'

out=$(timeout 120 "$B/bpfrt" trace "$P/trace_work.bpf.o" -- "$T/forker" 2>&1); rc=$?
check "a forking target: the child runs clean code, the parent is traced" \
	'[ $rc -eq 0 ] && has "^child 3003$" && has "^parent 10010$" && has "^hits = 5$"'

start=$(date +%s)
out=$(timeout 60 "$B/bpfrt" trace "$P/trace_work.bpf.o" -- "$T/crasher" 2>&1); rc=$?
took=$(( $(date +%s) - start ))
check "a target that crashes on its own: no hang, its signal reported, 128+SIGSEGV" \
	'[ $rc -eq 139 ] && [ $took -lt 30 ] && has "killed by signal 11" && has "^before 1$"'

out=$(timeout 60 "$B/bpfrt" trace "$P/trace_badread.bpf.o" -- "$T/own_segv" 2>&1); rc=$?
check "a target with its own SIGSEGV handler: a probe read of a bad pointer is still -EFAULT, the target's own fault still its handler's" \
	'[ $rc -eq 3 ] && has "^peek 1$" && has "^first_rc = 0$" && has "^first_value = 7$" &&
	 has "^read_rc = -14$" && has "^peeks = 2$" &&
	 has "^own handler$" && [ "$(printf "%s\n" "$out" | grep -n "own handler" | cut -d: -f1)" -gt "$(printf "%s\n" "$out" | grep -n "^peek 1" | tail -1 | cut -d: -f1)" ]'

out=$(timeout 60 "$B/bpfrt" trace "$P/bad_trace_ctx.bpf.o" -- "$T/work" 1 10 2>&1); rc=$?
check "a program the verifier refuses: its log, and the command never runs" \
	'[ $rc -eq 1 ] && has "past_ctx" && ! has "^total"'

if cc -static -O2 -o "$tmp/static" tests/trace/crasher.c tests/trace/work_fn.c 2>/dev/null; then
	out=$(timeout 60 "$B/bpfrt" trace "$P/trace_work.bpf.o" -- "$tmp/static" 2>&1); rc=$?
	check "a static executable is refused, naming why" \
		'[ $rc -eq 1 ] && has "static executable" && ! has "^before"'
else
	skip "a static executable is refused, naming why" "no static libc to link one"
fi

out=$(timeout 60 "$B/bpfrt" trace "$P/trace_work.bpf.o" -- /no/such/command 2>&1); rc=$?
check "a missing command: 127" '[ $rc -eq 127 ] && has "not found"'

# -p: a running process, its output compared with an untraced run's. The
# agent's initial-exec TLS (bpfrt's per-thread run state and pointers to
# larger per-thread memory) must fit the static TLS glibc keeps spare for
# dlopen (512 bytes of optional surplus by default), so a target started
# without tunables can be traced.
tls=$(readelf -lW "$B/libbpfrt-agent.so" | awk '$1 == "TLS" { print $6 }')
tls=$((${tls:-0}))
check "the agent's static TLS fits glibc's spare 512 bytes (${tls:-?} bytes)" \
	'[ "$tls" -gt 0 ] && [ "$tls" -le 512 ]'
# The target runs 4 s; Ctrl-C follows the CLI's "attached" line (waited
# for, not guessed), so a slow attach on a loaded machine still counts.
"$T/ticker" 400 >"$tmp/plain.txt"
"$T/ticker" 400 >"$tmp/traced.txt" &
tpid=$!
sleep 0.3
timeout 60 "$B/bpfrt" trace "$P/trace_work.bpf.o" -p $tpid >"$tmp/cli.txt" 2>&1 &
cpid=$!
for _ in $(seq 300); do
	grep -q "^bpfrt trace: attached to" "$tmp/cli.txt" 2>/dev/null && break
	kill -0 $cpid 2>/dev/null || break
	sleep 0.1
done
sleep 0.3
kill -INT $cpid
wait $cpid; rc=$?
wait $tpid; trc=$?
out=$(cat "$tmp/cli.txt")
ms=$(sed -n 's/^bpfrt trace: attached to [0-9]* in \([0-9]*\) ms$/\1/p' "$tmp/cli.txt")
hits=$(sed -n "s/^hits = //p" "$tmp/cli.txt")
check "-p PID: attached to a running process, events counted, Ctrl-C dumps and detaches" \
	'[ $rc -eq 0 ] && [ -n "$ms" ] && [ "${hits:-0}" -gt 0 ] && has "detached from $tpid"'
check "-p PID: the target ran on and its output is what an untraced run prints" \
	'[ $trc -eq 0 ] && cmp -s "$tmp/plain.txt" "$tmp/traced.txt"'
echo "# attach to a running process took ${ms:-?} ms"

# a target whose loader keeps (almost) no spare static TLS
GLIBC_TUNABLES=glibc.rtld.nns=1:glibc.rtld.optional_static_tls=0 "$T/ticker" 400 >"$tmp/refused.txt" &
tpid=$!
sleep 0.3
out=$(timeout 60 "$B/bpfrt" trace "$P/trace_work.bpf.o" -p $tpid 2>&1); rc=$?
wait $tpid; trc=$?
check "-p PID without spare static TLS: refused with the target's dlerror and the remedy" \
	'[ $rc -eq 1 ] && has "static TLS" && has "optional_static_tls"'
check "-p PID refused: the target ran on unharmed (every register restored)" \
	'[ $trc -eq 0 ] && cmp -s "$tmp/plain.txt" "$tmp/refused.txt"'
out=$(timeout 60 "$B/bpfrt" trace "$P/trace_work.bpf.o" -p 999999999 2>&1); rc=$?
check "-p of no process: refused, naming it" '[ $rc -eq 1 ] && has "no process 999999999"'
if cc -static -O2 -o "$tmp/static_tick" tests/trace/ticker.c tests/trace/work_fn.c -pthread 2>/dev/null; then
	"$tmp/static_tick" 100000 >/dev/null &
	spid=$!
	# until the fork has exec'd it: before, the PID is a dynamic shell
	for _ in $(seq 100); do
		[ "$(readlink /proc/$spid/exe 2>/dev/null)" = "$tmp/static_tick" ] && break
		sleep 0.05
	done
	out=$(timeout 60 "$B/bpfrt" trace "$P/trace_work.bpf.o" -p $spid 2>&1); rc=$?
	kill $spid
	wait $spid
	check "-p of a static binary: refused, naming why" '[ $rc -eq 1 ] && has "static binary"'
else
	skip "-p of a static binary: refused, naming why" "no static libc to link one"
fi

out=$(timeout 60 "$B/bpfrt" trace 2>&1); rc=$?
check "no arguments: usage" '[ $rc -eq 2 ] && has "usage: bpfrt trace"'

echo "1..$n"
