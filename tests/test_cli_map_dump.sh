#!/bin/sh
# `bpfrt map dump`: keys and values formatted by the object's BTF (bpftool's
# plain output), --json as bpftool -j (bytes as hex lists and "formatted"),
# global-data sections by variable, per-CPU values per CPU, ring buffer
# records, and the bytes for a map without BTF. TAP lines for tests/run.sh.
cd "$(dirname "$0")/.." || exit 2
B=${BUILD:-build}
P=$B/tests/progs
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "$out" | head -30 | sed 's/^/# /'; echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
# the Python expression over the JSON on stdin, printed as compact JSON (a
# parse error prints nothing)
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps($1, separators=(',', ':')))"; }

out=$("$B/bpfrt" map dump "$P/maps.bpf.o" hash --after write_entry 2>&1); rc=$?
check "plain: a struct value by member, the key as a number" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "^        \"key\": 42,$" &&
	 echo "$out" | grep -q "^            \"a\": 4386,$" && echo "$out" | grep -q "^            \"b\": 51$" &&
	 echo "$out" | tail -1 | grep -q "^  1 entries$"'

out=$("$B/bpfrt" map dump "$P/maps.bpf.o" hash --after write_entry --json 2>&1); rc=$?
got=$(echo "$out" | json '[d[0]["key"], d[0]["value"][:2], d[0]["formatted"]]' 2>&1)
want='[["0x2a","0x00","0x00","0x00"],["0x22","0x11"],{"key":42,"value":{"a":4386,"b":51}}]'
check "--json: one JSON array, bytes as hex lists and the formatted entry (bpftool -j)" \
	'[ $rc -eq 0 ] && [ "$got" = "$want" ]'

out=$("$B/bpfrt" map dump "$P/maps.bpf.o" hash -j 2>&1); rc=$?
check "-j of an empty map: []" '[ $rc -eq 0 ] && [ "$out" = "[]" ]'

out=$("$B/bpfrt" map dump "$P/skeleton.bpf.o" .bss --after step --json 2>&1); rc=$?
got=$(echo "$out" | json 'd[0]["formatted"]' 2>&1)
want='{"key":0,"value":{"stats":{"calls":1,"total":3},"hidden_count":1,"history":[0,1,0,0],"origin":{"tag":0,"x":3,"y":-1},"small":0,"last_word":{"u":16909060,"b":[4,3,2,1]}}}'
check "a data section by variable: anonymous struct, struct with padding, array, union, statics" \
	'[ $rc -eq 0 ] && [ "$got" = "$want" ]'

out=$("$B/bpfrt" map dump "$P/skeleton.bpf.o" .rodata 2>&1); rc=$?
check "an enum by its name, a bool as true" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "\"mode\": \"MODE_COUNT\"," && echo "$out" | grep -q "\"verbose\": true$"'

out=$("$B/bpfrt" map dump "$P/skeleton.bpf.o" .data --json 2>&1); rc=$?
got=$(echo "$out" | json 'd[0]["formatted"]["value"]' 2>&1)
check "bitfields, signed and unsigned, by member" \
	'[ $rc -eq 0 ] && [ "$got" = "{\"seeded\":11,\"flags_word\":{\"a\":5,\"b\":17,\"c\":-3},\"seeded_short\":5}" ]'

out=$("$B/bpfrt" map dump "$P/globals.bpf.o" .data 2>&1); rc=$?
check "a program's load failure is exit 1 with the loader's message" \
	'[ $rc -eq 1 ] && echo "$out" | grep -q "kfunc host_add is not registered"'

out=$("$B/bpfrt" map dump "$P/maps.bpf.o" pcpu_hash --after percpu_count --json 2>&1); rc=$?
cpus=$(cat /sys/devices/system/cpu/possible | awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }')
got=$(echo "$out" | json '[d[0]["formatted"]["key"], len(d[0]["formatted"]["values"]), sum(v["value"] for v in d[0]["formatted"]["values"]), [v["cpu"] for v in d[0]["values"]] == list(range(len(d[0]["values"])))]' 2>&1)
check "per-CPU: one value per possible CPU ($cpus), the program's increment on one of them" \
	'[ $rc -eq 0 ] && [ "$got" = "[42,$cpus,1,true]" ]'

out=$("$B/bpfrt" map dump "$P/ringbuf.bpf.o" rb --after produce 2>&1); rc=$?
check "ringbuf: the records waiting, in order (30 produced, every third discarded)" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "^map rb (ringbuf, key 0, value 0, max_entries 16384)$" &&
	 echo "$out" | grep -q "^  record 0 (24 bytes): 00 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 6f 75 74 70 75 74 00 00$" &&
	 echo "$out" | tail -1 | grep -q "^  20 records$"'
out=$("$B/bpfrt" map dump "$P/ringbuf.bpf.o" rb --after produce --json 2>&1); rc=$?
got=$(echo "$out" | json '[len(d), d[1]["len"], d[1]["data"][:5]]' 2>&1)
check "ringbuf --json: the records with their lengths and bytes" \
	'[ $rc -eq 0 ] && [ "$got" = "[20,24,[\"0x01\",\"0x00\",\"0x00\",\"0x00\",\"0x02\"]]" ]'

out=$("$B/bpfrt" map dump "$P/skeleton.bpf.o" pending --after step --json 2>&1); rc=$?
got=$(echo "$out" | json '[len(d), d[0]["formatted"], d[0]["value"][8]]' 2>&1)
check "a queue: its values in pop order, formatted" \
	'[ $rc -eq 0 ] && [ "$got" = "[1,{\"value\":{\"tag\":0,\"x\":3,\"y\":-1}},\"0x03\"]" ]'
out=$("$B/bpfrt" map dump "$B/tests/progs/keyless_maps.bpf.o" bloom 2>&1); rc=$?
check "a bloom filter: nothing to list, said so" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "^map bloom (bloom_filter, " && echo "$out" | grep -q "no entries to list"'

out=$("$B/bpfrt" map dump "$P/legacy_maps.bpf.o" legacy_counts --after legacy_count 2>&1); rc=$?
check "a map without BTF (legacy maps section): the bytes" \
	'[ $rc -eq 0 ] && echo "$out" | grep -q "^  key: [0-9a-f ]*  value: [0-9a-f ]*$"'

out=$("$B/bpfrt" map dump "$P/maps.bpf.o" hash --frobnicate 2>&1); rc=$?
check "an unknown option: usage error, exit 2" '[ $rc -eq 2 ] && echo "$out" | grep -q "frobnicate"'
out=$("$B/bpfrt" map dump "$P/maps.bpf.o" nope 2>&1); rc=$?
check "an unknown map: exit 1, named" '[ $rc -eq 1 ] && echo "$out" | grep -q "no map named nope"'
echo "1..$n"
