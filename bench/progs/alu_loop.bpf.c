/* ALU-bound: xorshift64 and a multiply/rotate mix, a serial dependency
 * chain of 64-bit shifts, xors, adds and multiplies. Seeded from the
 * packet so nothing can be computed at compile time. */
#include "../bench_xdp.h"

#define ALU_ROUNDS 2000

SEC("xdp")
int alu_loop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 x, acc = 0x9e3779b97f4a7c15ULL;

	if (data + sizeof(__u64) > data_end)
		return XDP_ABORTED;
	x = *(__u64 *)data | 1;
	for (int i = 0; i < ALU_ROUNDS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		acc += x ^ (acc >> 29);
		acc = (acc << 21 | acc >> 43) * 0xbf58476d1ce4e5b9ULL;
	}
	return (__u32)(acc ^ (acc >> 32));
}

char LICENSE[] SEC("license") = "GPL";
