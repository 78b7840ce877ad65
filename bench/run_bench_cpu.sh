#!/bin/sh
# Prints the interpreter vs JIT vs kernel JIT table of docs/PERFORMANCE.md.
# usage: bench/run_bench_cpu.sh [BUILD_DIR] [bpfrt-bench cpu options...]
# BUILD_DIR defaults to build/; it is built first if bpfrt-bench is missing.
# The kernel column needs root (BPF_PROG_LOAD of an XDP program); without it
# the table is printed without that column and says why.
. "$(dirname "$0")/bench_build.sh"
exec "$bench" cpu "$@"
