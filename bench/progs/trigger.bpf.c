/* Trigger benchmark programs for bpfrt (bench/bench_trigger.c): as the
 * kernel's trigger_bench.c, each counts the events it sees in `hits`. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

long hits = 0;

/* host tracepoint bench_trigger(int id) */
SEC("tp/bpfrt/bench_trigger")
int bench_trigger_tp(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("raw_tp/bench_trigger")
int bench_trigger_rawtp(__u64 *ctx)
{
	if (ctx[0] == 1)
		__sync_fetch_and_add(&hits, 1);
	return 0;
}
