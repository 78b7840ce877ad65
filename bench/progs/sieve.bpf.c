/* Memory- and branch-bound: sieve of Eratosthenes over a 2,048-bit array
 * on the BPF stack, counting the primes below SIEVE_N (309 for 2048). */
#include "../bench_xdp.h"

#define SIEVE_N 2048
#define SIEVE_WORDS (SIEVE_N / 64)

SEC("xdp")
int sieve(struct xdp_md *ctx)
{
	__u64 composite[SIEVE_WORDS];
	__u32 n = SIEVE_N, count = 0;

	opaque(n); /* keep the loop bounds out of reach of constant folding */
	if (n > SIEVE_N)
		return XDP_ABORTED;
	for (int w = 0; w < SIEVE_WORDS; w++)
		composite[w] = 0;
	for (__u32 i = 2; i < n; i++) {
		if (composite[i / 64] & (1ULL << (i % 64)))
			continue;
		count++;
		for (__u32 j = i * i; j < n; j += i)
			composite[j / 64] |= 1ULL << (j % 64);
	}
	return count;
}

char LICENSE[] SEC("license") = "GPL";
