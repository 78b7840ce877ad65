#!/bin/sh
# Prints the private-stack table (the kernel selftest's tp program doing
# hash-map ops in a batch): no-private-stack-N and private-stack-N for
# N = 1 8 64 512 2048 4096 hash-op rounds per event.
# Rates are per producer CPU-second (preemption by other load excluded),
# the median of ROUNDS interleaved runs (default 3), with the spread of
# those runs and the private stack's difference in percent. Separate
# processes differ in layout (map elements, stacks) by more than the private
# stack costs, so each row also gives the paired figure of
# `bpfrt-bench private-stack-ab` (both programs in one process, attached in
# turn; median of AB_ROUNDS per-round ratios, default 21), the one to judge by.
# usage: bench/run_bench_private_stack.sh [BUILD_DIR] [bpfrt-bench options...]
#   options default to -w1 -d3 -a; BATCHES="1 64" limits the rows.
. "$(dirname "$0")/bench_build.sh"
opts="$*"
[ -n "$opts" ] || opts="-w1 -d3 -a"
rounds=${ROUNDS:-3}

# CPU-second rate (M/s) of one run.
rate() {
	"$bench" "$1" $opts --nr-batch-iters="$2" 2>/dev/null |
		awk '/^Per producer CPU-second/ { print $5 }'
}

# median and half-range of the numbers on stdin
stats() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "- -"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f %.3f\n", m, (v[NR] - v[1]) / 2 }'
}

for b in ${BATCHES:-1 8 64 512 2048 4096}; do
	np=""; p=""
	for r in $(seq "$rounds"); do
		np="$np $(rate no-private-stack "$b")"
		p="$p $(rate private-stack "$b")"
	done
	set -- $(echo $np | tr ' ' '\n' | stats) $(echo $p | tr ' ' '\n' | stats)
	printf "no-private-stack-%s: %8s ± %sM/s\n" "$b" "$1" "$2"
	# long batches: an event lasts up to ~170 us, so trials of 200 ms
	ms=40; [ "$b" -ge 512 ] && ms=200
	ab=$("$bench" private-stack-ab --nr-batch-iters="$b" -r "${AB_ROUNDS:-21}" -t $ms 2>&1 |
		sed -n 's/^private-stack-[0-9]*: .*(\([^,]*\), paired ratio [^,]*, \([^,]*\),.*/\1 (\2)/p')
	printf "private-stack-%s:    %8s ± %sM/s   (%+.2f%%)   paired: %s\n" "$b" "$3" "$4" \
		"$(echo "$1 $3" | awk '{ print ($1 > 0) ? ($2 - $1) * 100 / $1 : 0 }')" "${ab:-failed}"
done
