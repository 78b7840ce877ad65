/* bpfrt trace demo and test: the sizes a program asks malloc for, as a
 * log2 histogram (sizes_log2[k] counts sizes in [2^k, 2^(k+1))), and the
 * bytes asked for in all. `make run` traces find(1) with it. */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} sizes_log2 SEC(".maps");

__u64 calls, bytes;

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

SEC("uprobe/libc.so.6:malloc")
int BPF_KPROBE(malloc_size, __u64 size)
{
	__u32 k = log2_u64(size);
	__u64 *slot = bpf_map_lookup_elem(&sizes_log2, &k);

	if (slot)
		__sync_fetch_and_add(slot, 1);
	__sync_fetch_and_add(&calls, 1);
	__sync_fetch_and_add(&bytes, size);
	return 0;
}
