/* Call-bound: a small function called 1,000 times through BPF-to-BPF
 * calls, so the cost of call, frame set-up and return shows. */
#include "../bench_xdp.h"

#define CALLS 1000

static __attribute__((noinline)) __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x100000001b3ULL; /* the FNV-1a 64-bit prime */
	return h ^ (h >> 29);
}

SEC("xdp")
int calls(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 h = 0xcbf29ce484222325ULL;

	if (data + sizeof(__u64) > data_end)
		return XDP_ABORTED;
	h ^= *(__u64 *)data;
	for (int i = 0; i < CALLS; i++)
		h = mix(h, i);
	return (__u32)(h ^ (h >> 32));
}

char LICENSE[] SEC("license") = "GPL";
