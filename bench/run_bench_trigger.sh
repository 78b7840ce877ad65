#!/bin/sh
# Prints the trigger table (the kernel selftests' trigger benchmarks): every
# trig-* benchmark bpfrt-bench knows, bpfrt's and the kernel's side by side,
# in M events/s and ns per event (per producer CPU-second).
# usage: bench/run_bench_trigger.sh [BUILD_DIR] [bpfrt-bench options...]
#   options default to -w1 -d5 -a (the kernel's script uses -w2 -d5 -a)
#   TRIG_BENCHES="base tp ..." limits the rows.
# With both bpfrt-uprobe-percpu (one producer) and bpfrt-uprobe-2t (two, the
# same program) in the run, the last line is the two-thread scaling: the
# 2-thread aggregate rate (2 x its rate per producer CPU-second, each
# producer on a CPU of its own) over the 1-thread rate. A -p option
# overrides both rows' producer counts, so leave it out for that line.
# Kernel rows need root; the tp row also needs tracefs mounted (the script
# mounts it at /sys/kernel/tracing when root and it is missing). Rows the
# kernel refuses say why.
. "$(dirname "$0")/bench_build.sh"
opts="$*"
[ -n "$opts" ] || opts="-w1 -d5 -a"

if [ "$(id -u)" = 0 ] && [ ! -d /sys/kernel/tracing/events ] &&
   [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null &&
		echo "(mounted tracefs at /sys/kernel/tracing for the kernel tp row)"
fi

# Every trig-* benchmark, in registry order.
names=${TRIG_BENCHES:-$("$bench" list | awk '$1 ~ /^trig-/ { sub(/^trig-/, "", $1); print $1 }')}

# hits: wall-clock rate as the kernel's bench prints it; ns/event: per
# producer CPU-second (preemption by other load on the machine excluded).
printf "%-18s %-26s %9s %9s   %s\n" benchmark "hits (M/s, wall)" "M/prod" "ns/event" "what"
for n in $names; do
	what=$("$bench" list | awk -v b="trig-$n" '$1 == b { $1 = ""; sub(/^ /, ""); print }')
	full=$("$bench" "trig-$n" $opts 2>/dev/null || true)
	out=$(echo "$full" | tail -n1)
	case "$out" in
	Summary:*)
		# "Summary: hits   48.645 ± 1.445M/s (  48.645M/prod), drops ..."
		hits=$(echo "$out" | cut -d'(' -f1 | cut -d' ' -f3- | sed 's/  */ /g; s/^ //')
		prod=$(echo "$out" | sed 's/.*(\s*\([0-9.]*\)M\/prod.*/\1/')
		ns=$(echo "$full" | sed -n 's/^Per producer CPU-second:.*(\([0-9.]*\) ns\/event)/\1/p')
		printf "%-18s %-26s %9s %9s   %s\n" "$n" "$hits" "$prod" "${ns:--}" "$what"
		case "$n" in
		bpfrt-uprobe-percpu) ns_1t=$ns ;;
		bpfrt-uprobe-2t) ns_2t=$ns ;;
		esac
		;;
	*)
		printf "%-18s %-26s %9s %9s   %s\n" "$n" "skipped" "-" "-" "${out#Skipped: }"
		;;
	esac
done
if [ -n "${ns_1t:-}" ] && [ -n "${ns_2t:-}" ]; then
	awk -v a="$ns_1t" -v b="$ns_2t" 'BEGIN { printf "2-thread scaling (bpfrt-uprobe-2t aggregate / bpfrt-uprobe-percpu): %.2fx\n", 2 * a / b }'
fi
