/* bpf_perf_event_output into a perf event array whose max_entries .maps
 * leaves 0 (the loader makes it the number of CPUs, as libbpf), with the
 * error codes of each bad index and flag. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

struct event {
	__u64 seq;
	__u32 tag;
	__u32 pad;   /* written: the verifier lets no stale stack byte out */
};

long rc[4];
__u64 seq;

SEC("tp/bpfrt/perf_output")
int perf_output(void *ctx)
{
	struct event e = { .seq = __sync_fetch_and_add(&seq, 1), .tag = 0xabc, .pad = 0 };

	/* 12 bytes: seq and tag. The result returned is this run's own:
	 * rc[] is shared by every thread that runs the program. */
	long out = bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &e, 12);

	rc[0] = out;
	rc[1] = bpf_perf_event_output(ctx, &events, 1ull << 40, &e, 12);  /* -EINVAL */
	rc[2] = bpf_perf_event_output(ctx, &events, 100000, &e, 12);      /* -E2BIG */
	return (int)out;
}

/* A 5-byte record: the consumer sees size 12 (Linux's padding). */
SEC("tp/bpfrt/perf_output_short")
int perf_output_short(void *ctx)
{
	char b[5] = { 1, 2, 3, 4, 5 };

	return (int)bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, b, sizeof(b));
}
