/* Globals written by both sides, .text subprograms (static and global,
 * calling each other several levels deep) and host kfuncs. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 scale = 1;       /* knob: set before load */
const char label[] = "subprogs";      /* .rodata */
__u64 input = 3;                      /* .data: user space may change it */
__u64 output;                         /* .bss: the program's result */
__u64 runs;
__u32 depth_seen;

extern __u64 host_mix(__u64 a, __u64 b, __u64 c, __u64 d, __u64 e) __ksym;
extern int host_sum(const __u32 *vals, int size) __ksym; /* size in bytes */

static __noinline __u64 leaf(__u64 x)
{
	depth_seen = 4;
	return x * scale + 1;
}

/* global: verified by its BTF prototype in Linux */
__noinline __u64 level3(__u64 x)
{
	return leaf(x) + leaf(x + 1);
}

static __noinline __u64 level2(__u64 x)
{
	__u64 v = level3(x);

	return v * 2;
}

__noinline __u64 level1(__u64 x)
{
	return level2(x) + level2(x + 10) + label[0];
}

SEC("tp/bpfrt/subprogs")
int call_chain(void *ctx)
{
	runs++;
	output = level1(input);
	return (int)(output & 0x7fffffff);
}

SEC("tp/bpfrt/kfuncs")
int call_kfuncs(void *ctx)
{
	__u32 vals[4] = { 1, 20, 300, (__u32)input };

	output = host_mix(1, 2, 3, 4, 5) * 1000 + host_sum(vals, sizeof(vals));
	return host_sum(vals, 3 * sizeof(vals[0]));
}
