#!/bin/sh
# Prints the helper table of docs/PERFORMANCE.md: ns per call of every
# helper bpfrt registers, in bpfrt's interpreter and JIT and in the kernel.
# usage: bench/run_bench_helpers.sh [BUILD_DIR] [bpfrt-bench helpers options...]
# BUILD_DIR defaults to build/; it is built first if bpfrt-bench is missing.
# The kernel column needs root (BPF_PROG_LOAD of a raw_tracepoint program);
# without it the table is printed without that column and says why.
. "$(dirname "$0")/bench_build.sh"
exec "$bench" helpers "$@"
