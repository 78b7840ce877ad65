#!/bin/sh
# bpfrt trace OBJ -- CMD with USDT probes: the <sys/sdt.h> sites of
# usdt_work (plain gcc -O2, mk/trace.mk) read by a program using libbpf's
# usdt.bpf.h unmodified, inside the traced command. TAP for tests/run.sh.
B=${BUILD:-build}
T=$B/tests/trace
P=$B/tests/progs
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; printf '%s\n' "$out" | grep -v __bpf_usdt | sed 's/^/#   /' | head -40; }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
has() { printf '%s\n' "$out" | grep -q -- "$1"; }

# under qemu-user (BPFRT_CROSS_QEMU) uname says the host's architecture
if [ "$(uname -m)" != x86_64 ] || [ -n "$BPFRT_CROSS_QEMU" ]; then
	echo "1..0 # SKIP USDT sites are probed by the x86-64 kprobe engine"
	exit 0
fi
if ldd "$B/libbpfrt-agent.so" 2>/dev/null | grep -q libasan; then
	echo "1..0 # SKIP the agent of a sanitizer build cannot load into uninstrumented commands"
	exit 0
fi

# the dump and the command share the pipe: its line may land inside one
out=$(timeout 120 "$B/bpfrt" trace "$P/usdt.bpf.o" -- "$T/usdt_work" 10 2>&1); rc=$?
check "every site hit once per call, exactly" \
	'has "^consts_hits = 10$" && has "^regs_hits = 10$" && has "^mem_hits = 10$" &&
	 has "^guarded_hits = 10$"'
check "constants: -4@\$-5, -8@\$0x123456789a, -1@\$-3; three arguments" \
	'has "^consts_a = -5$" && has "^consts_b = 78187493530$" && has "^consts_c = -3$" &&
	 has "^consts_cnt = 3$"'
check "registers of 8, 4, 1 and 2 bytes, signed and unsigned" \
	'has "^regs_a = -7696581394432$" && has "^regs_b = -100000$" && has "^regs_c = 200$" &&
	 has "^regs_d = -300$"'
check "stack memory of 8, 4, 2 and 1 bytes; an argument past the last is -ENOENT" \
	'has "^mem_a = 1125899906842624$" && has "^mem_b = -2$" && has "^mem_c = 65000$" &&
	 has "^mem_d = -9$" && has "^mem_bad_arg = -2$"'
check "the semaphore is raised in the target: its guarded site ran every time" \
	'has "guarded 10 sum -76965814945320$" && has "^guarded_sum = 135$" && [ $rc -eq 0 ]'

out=$(timeout 120 "$B/bpfrt" trace --interp "$P/usdt.bpf.o" -- "$T/usdt_work" 3 2>&1); rc=$?
check "--interp: the same values from the interpreter" \
	'[ $rc -eq 0 ] && has "^regs_a = -7696581394432$" && has "^mem_d = -9$" &&
	 has "^guarded_hits = 3$"'

out=$(timeout 120 "$B/bpfrt" trace "$P/usdt.bpf.o" -- /bin/true 2>&1); rc=$?
check "a command without the probes: refused, naming the probe" \
	'[ $rc -ne 0 ] && has "bpfrt_test:consts"'
echo "1..$n"
