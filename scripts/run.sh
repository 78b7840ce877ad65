#!/bin/sh
# `make run`: the experiments implemented so far, printed as tables.
# usage: scripts/run.sh BUILD_DIR
build=${1:-build}
status=0
echo "== Conformance (bpf_conformance data, cpu v4): interpreter and x86-64 JIT"
"$build/bpfrt" conformance --both || status=1
echo
echo "== CPU-bound programs: interpreter vs JIT vs the kernel's JIT"
"$build/bpfrt-bench" cpu || status=1
if "$build/bpfrt-bench" --help 2>&1 | grep -q prog-pack; then
	echo
	echo "== Prog pack: packed JIT images vs one mapping each (stress shape: 20 instances x 8 programs)"
	"$build/bpfrt-bench" prog-pack || status=1
fi
if [ -x bench/run_bench_trigger.sh ]; then
	echo
	echo "== Trigger benchmarks (the kernel selftests'): cost per event of each attach kind, ours and the kernel's"
	bench/run_bench_trigger.sh "$build" -w1 -d3 -a || status=1
fi
if "$build/bpfrt-bench" --help 2>&1 | grep -q multi-calls; then
	echo
	echo "== 10 million calls of one function with fentry / fentry.multi attached (metadata in padding vs a hash)"
	"$build/bpfrt-bench" multi-calls || status=1
fi
if [ -x bench/run_bench_private_stack.sh ]; then
	echo
	echo "== Private stacks: hash-op rounds per tracepoint event, with and without"
	ROUNDS=${ROUNDS:-1} bench/run_bench_private_stack.sh "$build" -w1 -d2 -a || status=1
	echo
	"$build/bpfrt-bench" nest-run || status=1
fi
if [ -f "$build/tests/progs/trace_malloc_hist.bpf.o" ] && [ "$(uname -m)" = x86_64 ]; then
	echo
	echo "== bpfrt trace: the malloc sizes of an unmodified program (find /usr/include), log2 histogram"
	"$build/bpfrt" trace "$build/tests/progs/trace_malloc_hist.bpf.o" -- \
		find /usr/include -name '*.h' -fprint /dev/null || status=1
fi
exit $status
