#!/bin/sh
# bpfrt prog/map subcommands on clang-built objects. TAP lines for tests/run.sh.
B=${BUILD:-build}
obj=$B/tests/progs/globals.bpf.o
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }

out=$("$B/bpfrt" prog list "$obj" 2>&1)
check "prog list names programs, kinds, sections, targets" \
	'echo "$out" | grep -q "^count_hits  *tracepoint  *tp/bpfrt/test_event  *bpfrt/test_event" &&
	 echo "$out" | grep -q "^on_entry  *fentry  *fentry/host_function  *host_function"'

out=$("$B/bpfrt" prog run "$obj" --prog read_greeting 2>&1); rc=$?
check "prog run: a missing kfunc fails naming section, offset and symbol" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "section tp/bpfrt/test_event offset [0-9]* symbol host_add: kfunc host_add is not registered"'

out=$("$B/bpfrt" prog list /nonexistent.o 2>&1); rc=$?
check "prog list: missing file is a clear error" '[ $rc -eq 1 ] && echo "$out" | grep -q "No such file"'

out=$("$B/bpfrt" prog list "$B/bpfrt" 2>&1); rc=$?
check "prog list: a non-BPF ELF is rejected" '[ $rc -eq 1 ] && echo "$out" | grep -q "not a 64-bit BPF ELF"'

out=$("$B/bpfrt" prog run "$obj" 2>&1); rc=$?
check "prog run without --prog prints usage" '[ $rc -eq 2 ] && echo "$out" | grep -q usage'
