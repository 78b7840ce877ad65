#!/bin/sh
# bpfrt trace per-event cost in an unmodified target: tests/trace/work
# (plain gcc -O2) run untraced, with a counting uprobe and with a counting
# uretprobe on work(), 1 and 2 threads, in one run. The cost per event is
# (traced - untraced wall time) / events; the traced time includes the
# agent's start (load, verify, JIT, attach) and the final dump, so the
# figure is an upper bound.
#   bench/run_bench_trace.sh [BUILD] [CALLS_PER_THREAD]
B=${1:-build}
mkdir -p "$B/bench"
N=${2:-20000000}
CLANG=${CLANG:-$(command -v clang-19 || command -v clang)}
INC="-Iinclude -I/usr/include/$(gcc -dumpmachine)"
set -e
$CLANG -O2 -g -target bpf $INC -c bench/progs/trace_count.bpf.c -o "$B/bench/trace_entry.bpf.o"
$CLANG -O2 -g -target bpf $INC -DRETPROBE -c bench/progs/trace_count.bpf.c \
	-o "$B/bench/trace_return.bpf.o"
set +e
now() { date +%s%N; }
run() { # threads, object or "-": prints wall ns
	t0=$(now)
	if [ "$2" = - ]; then
		"$B/tests/trace/work" "$1" "$N" >/dev/null
	else
		"$B/bpfrt" trace --no-dump "$2" -- "$B/tests/trace/work" "$1" "$N" >/dev/null
	fi
	echo $(( $(now) - t0 ))
}
printf '%-10s %-8s %12s %12s\n' probe threads "wall ms" "ns/event"
for th in 1 2; do
	base=$(run $th -)
	printf '%-10s %-8s %12d %12s\n' none $th $((base / 1000000)) -
	for p in entry return; do
		t=$(run $th "$B/bench/trace_$p.bpf.o")
		ev=$((N * th))
		# per event of one thread: the threads run in parallel
		printf '%-10s %-8s %12d %12s\n' "u$( [ $p = return ] && echo ret)probe" $th \
			$((t / 1000000)) "$(echo "scale=1; ($t - $base) * $th / $ev" | bc)"
	done
done
