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
for mode in --jit --interp --checked; do
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
	 echo "$out" | grep -q "\"key\": 42," && echo "$out" | grep -q "\"a\": 4386," &&
	 echo "$out" | grep -q "1 entries"'

out=$("$B/bpfrt" map dump "$maps" hash 2>&1); rc=$?
check "map dump without --after: the map as loaded (empty)" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "0 entries"'

out=$(BPFRT_MAP_MEMORY_LIMIT=4k "$B/bpfrt" map dump "$maps" hash 2>&1); rc=$?
check "BPFRT_MAP_MEMORY_LIMIT=4k: a map past the limit fails the load, named" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "map [a-z_]*.*would exceed the map memory limit of 4096 bytes"'
out=$(BPFRT_MAP_MEMORY_LIMIT=64m "$B/bpfrt" map dump "$maps" hash 2>&1); rc=$?
check "BPFRT_MAP_MEMORY_LIMIT=64m: the object loads" '[ $rc -eq 0 ]'
out=$(BPFRT_MAP_MEMORY_LIMIT=lots "$B/bpfrt" map dump "$maps" hash 2>&1); rc=$?
check "BPFRT_MAP_MEMORY_LIMIT that is not a size: a warning, the default limit" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "BPFRT_MAP_MEMORY_LIMIT=.lots. is not a size"'

# ---- prog run: the test-run context (bpfrt_prog_test_run_opts) ----
tr=$B/tests/progs/test_run.bpf.o
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# a 60-byte frame: dst 02:00:00:00:00:01, src 02:00:00:00:00:02, IPv4, then zeros
printf '\002\000\000\000\000\001\002\000\000\000\000\002\010\000' >"$tmp/frame.bin"
head -c 46 /dev/zero >>"$tmp/frame.bin"
# what `--data` used to be (the raw xdp_md): "data" 0x1000, "data_end" 0x2000, padded
# to a frame's length; now it is the packet's bytes and nothing else
printf '\000\020\000\000\000\040\000\000' >"$tmp/fakeptr.bin"
head -c 52 /dev/zero >>"$tmp/fakeptr.bin"
# raw_tp args: args[2] = 41
printf '\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\051\000\000\000\000\000\000\000' >"$tmp/args.bin"

for mode in --jit --interp --checked; do
	out=$("$B/bpfrt" prog run "$tr" --prog xdp_rewrite --data "$tmp/frame.bin" $mode 2>&1); rc=$?
	check "prog run $mode: XDP sees the --data packet and data_out shows its rewrite" \
		'[ $rc -eq 0 ] && echo "$out" | head -1 | grep -q "^retval 3 (0x3), [0-9]* ns per run over 1 runs" &&
		 echo "$out" | grep -q "^data_out (60 bytes):$" &&
		 echo "$out" | grep -q "^  0000: 02 00 00 00 00 02 02 00 00 00 00 01 08 ff 00 00$" &&
		 echo "$out" | grep -q "^  0030: 00 00 00 00 00 00 00 00 00 00 00 00$"'
	out=$("$B/bpfrt" prog run "$tr" --prog xdp_rewrite --data "$tmp/fakeptr.bin" $mode 2>&1); rc=$?
	check "prog run $mode: --data holding pointers is a packet, not the xdp_md" \
		'[ $rc -eq 0 ] && echo "$out" | head -1 | grep -q "^retval 2 " &&
		 echo "$out" | grep -q "^  0000: 00 00 00 00 00 00 00 10 00 00 00 20 00 ff 00 00$"'
	out=$("$B/bpfrt" prog run "$tr" --prog raw_tp_arg2 $mode 2>&1); rc=$?
	check "prog run $mode: a context-reading program without --ctx gets zeros" \
		'[ $rc -eq 0 ] && [ "$out" = "$(echo "$out" | grep "^retval 1 (0x1), ")" ]'
	out=$("$B/bpfrt" prog run "$tr" --prog raw_tp_arg2 --ctx "$tmp/args.bin" $mode 2>&1); rc=$?
	check "prog run $mode: --ctx is the context" '[ $rc -eq 0 ] && echo "$out" | grep -q "^retval 42 "'
	out=$("$B/bpfrt" prog run "$B/tests/progs/concurrency.bpf.o" --prog bump_counters $mode 2>&1); rc=$?
	check "prog run $mode: ctx->args[0] without --ctx runs (it segfaulted)" \
		'[ $rc -eq 0 ] && echo "$out" | grep -q "^retval 0 "'
done
out=$("$B/bpfrt" prog run "$tr" --prog socket_fields --data "$tmp/frame.bin" 2>&1); rc=$?
check "prog run: a socket filter's __sk_buff describes --data" \
	'[ $rc -eq 0 ] && echo "$out" | head -1 | grep -q "^retval 60 " && echo "$out" | grep -q "^data_out (60 bytes):$"'
out=$("$B/bpfrt" prog run "$tr" --prog xdp_rewrite --data "$tmp/frame.bin" --repeat 1001 2>&1); rc=$?
check "prog run --repeat: runs on one packet, reports the mean" \
	'[ $rc -eq 0 ] && echo "$out" | head -1 | grep -q "^retval 3 (0x3), [0-9]* ns per run over 1001 runs (jit)$" &&
	 echo "$out" | grep -q "^  0000: 02 00 00 00 00 02 02 00 00 00 00 01 08 ff 00 00$"'
out=$("$B/bpfrt" prog run "$tr" --prog xdp_rewrite 2>&1); rc=$?
check "prog run: XDP without --data is an error naming the program" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "^bpfrt: run failed: test_run: xdp_rewrite: xdp programs run on a packet: data_in of at least 14 bytes (an Ethernet header) is needed, got 0 (give the packet with --data FILE)$"'
out=$("$B/bpfrt" prog run "$tr" --prog raw_tp_arg2 --data "$tmp/frame.bin" 2>&1); rc=$?
check "prog run: --data for a tracing program is an error pointing to --ctx" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "raw_tp_arg2: raw_tracepoint programs take no packet" &&
	 echo "$out" | grep -q "the context is --ctx FILE"'
head -c 16 "$tmp/args.bin" >"$tmp/short.bin"
out=$("$B/bpfrt" prog run "$tr" --prog raw_tp_arg2 --ctx "$tmp/short.bin" 2>&1); rc=$?
check "prog run: a --ctx shorter than the program reads is refused with both sizes" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "raw_tp_arg2: ctx_in of 16 bytes is shorter than the 24 bytes of its 96-byte raw_tracepoint context"'
out=$("$B/bpfrt" map dump "$tr" .bss --after socket_fields 2>&1); rc=$?
check "map dump --after: a packet program without one is an error" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "socket_fields: socket programs run on a packet"'
echo "1..$n"
