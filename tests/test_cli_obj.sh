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

out=$("$B/bpfrt" prog dump "$B/tests/progs/maps.bpf.o" --prog write_entry --xlated 2>&1); rc=$?
check "prog dump --xlated lists the loaded program's BPF instructions" \
	'[ $rc -eq 0 ] && echo "$out" | head -1 | grep -q "^write_entry: (tp/bpfrt/write_entry)$" &&
	 echo "$out" | grep -q "^ *0: mov %r1, 42$" && echo "$out" | grep -q "exit$"'
out=$("$B/bpfrt" prog dump "$B/tests/progs/maps.bpf.o" --prog write_entry --jited 2>&1); rc=$?
check "prog dump --jited shows the native code" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "^; write_entry: [0-9]* bytes of [a-z0-9_]* code at 0x"'
out=$("$B/bpfrt" prog dump "$B/tests/progs/maps.bpf.o" --prog nope 2>&1); rc=$?
check "prog dump: an unknown program is a clear error" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "no program nope"'

helpers=$B/tests/progs/helpers.bpf.o
maps=$B/tests/progs/maps.bpf.o
for mode in --jit --interp; do
	out=$("$B/bpfrt" prog run "$helpers" --prog printk $mode 2>&1); rc=$?
	check "prog run $mode prints the bpf_printk lines after the result" \
		'[ $rc -eq 0 ] && echo "$out" | head -1 | grep -q "^retval 0 " &&
		 echo "$out" | grep -q "bpf_trace_printk: progs: hello 42 world$" &&
		 echo "$out" | grep -q "bpf_trace_printk: progs: four 1 2 3 42$"'
done

out=$("$B/bpfrt" prog run "$maps" --prog write_entry 2>&1); rc=$?
check "prog run: no trace lines when the program printed nothing" \
	'[ $rc -eq 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ]'

out=$("$B/bpfrt" map dump "$maps" hash --after write_entry 2>&1); rc=$?
check "map dump --after shows the entry the program wrote" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "^map hash (hash, key 4, value 16, max_entries 4)" &&
	 echo "$out" | grep -q "key: 2a 00 00 00  value: 22 11 00 00 00 00 00 00 33 00 00 00 00 00 00 00" &&
	 echo "$out" | grep -q "1 entries"'

out=$("$B/bpfrt" map dump "$maps" hash 2>&1); rc=$?
check "map dump without --after: the map as loaded (empty)" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "0 entries"'
