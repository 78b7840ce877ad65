#!/bin/sh
# `make run`: the experiments implemented so far, printed as tables.
# usage: scripts/run.sh BUILD_DIR
build=${1:-build}
status=0
echo "== Conformance (bpf_conformance data, cpu v4): interpreter and x86-64 JIT"
"$build/bpfrt" conformance --both || status=1
echo
echo "== CPU-bound programs: interpreter vs JIT vs the kernel's JIT (issue 2)"
"$build/bpfrt-bench" cpu || status=1
if "$build/bpfrt-bench" --help 2>&1 | grep -q prog-pack; then
	echo
	echo "== Prog pack: packed JIT images vs one mapping each (issue 4, seed 002)"
	"$build/bpfrt-bench" prog-pack || status=1
fi
exit $status
