/* Programs for tests/test_stackmap.c: bpf_get_stackid and bpf_get_stack
 * from a kprobe on tests/host/stack_chain.c's leaf (written as for Linux),
 * every flag's answer, and bpf_map_lookup_percpu_elem. */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

#define DEPTH 4

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16);
	__type(key, __u32);
	__uint(value_size, DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/* one slot: every trace has stack id 0, so two traces collide */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__uint(value_size, DEPTH * sizeof(__u64));
} one SEC(".maps");

/* two ids, two buckets: a trace whose id is taken can take it with
 * REUSE_STACKID while a bucket is free (test_stackmap's reuse test) */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 2);
	__type(key, __u32);
	__uint(value_size, DEPTH * sizeof(__u64));
} two SEC(".maps");

long hits, stack_id, stack_len, rc[20], two_rc;
__u64 two_flags;
__u64 stack_buf[DEPTH], skip2_buf[2], scratch[2];
__u64 odd_buf[3];

#define USER BPF_F_USER_STACK

SEC("kprobe/stack_chain_leaf")
int on_leaf(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	stack_id = bpf_get_stackid(ctx, &stacks, USER);
	stack_len = bpf_get_stack(ctx, stack_buf, sizeof(stack_buf), USER);
	rc[0] = bpf_get_stackid(ctx, &stacks, 0);                 /* kernel stack: none */
	rc[1] = bpf_get_stackid(ctx, &stacks, USER | (1ull << 12)); /* unknown flag */
	rc[2] = bpf_get_stackid(ctx, &stacks, USER | 200);        /* skips past the end */
	rc[3] = bpf_get_stackid(ctx, &stacks, USER | BPF_F_USER_BUILD_ID);
	two_rc = bpf_get_stackid(ctx, &two, USER | two_flags);
	/* the one-slot map, whose one bucket the first trace keeps */
	rc[4] = bpf_get_stackid(ctx, &one, USER);
	rc[5] = bpf_get_stackid(ctx, &one, USER | 1);
	rc[6] = bpf_get_stackid(ctx, &one, USER | 1 | BPF_F_FAST_STACK_CMP);
	rc[7] = bpf_get_stackid(ctx, &one, USER | 1 | BPF_F_REUSE_STACKID);
	rc[8] = bpf_get_stackid(ctx, &one, USER | 1);
	rc[9] = bpf_get_stackid(ctx, &one, USER | BPF_F_FAST_STACK_CMP);
	/* get_stack */
	rc[10] = bpf_get_stack(ctx, odd_buf, 12, USER);          /* not a multiple of 8 */
	scratch[0] = scratch[1] = ~0ull;
	rc[11] = bpf_get_stack(ctx, scratch, sizeof(scratch), 0);   /* kernel: 0 bytes */
	rc[12] = scratch[0] | scratch[1];                           /* zeroed */
	scratch[0] = scratch[1] = ~0ull;
	rc[13] = bpf_get_stack(ctx, scratch, sizeof(scratch), USER | BPF_F_USER_BUILD_ID);
	rc[14] = scratch[0] | scratch[1];
	rc[15] = bpf_get_stack(ctx, scratch, sizeof(scratch), USER | 200);
	rc[16] = bpf_get_stack(ctx, scratch, sizeof(scratch), 1);   /* kernel, skip 1 */
	rc[17] = bpf_get_stack(ctx, skip2_buf, sizeof(skip2_buf), USER | 2);
	rc[18] = bpf_get_stack(ctx, scratch, 0, USER);
	rc[19] = bpf_get_stackid(ctx, &stacks, USER | BPF_F_SKIP_FIELD_MASK | (1ull << 13));
	return 0;
}

/* bpf_map_lookup_percpu_elem: the sum of every CPU's value of key 0, and
 * the answers for a missing key and a CPU past the last. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_lru SEC(".maps");

__u32 nr_cpus;
__u64 sums[3];
long missing[3], past_end[3];

static __u64 sum_of(void *map, __u32 key)
{
	__u64 sum = 0;

	for (__u32 cpu = 0; cpu < 64; cpu++) {
		__u64 *v;

		if (cpu >= nr_cpus)
			break;
		v = bpf_map_lookup_percpu_elem(map, &key, cpu);
		if (v)
			sum += *v;
	}
	return sum;
}

SEC("syscall")
int percpu(void *ctx)
{
	__u32 key = 0, absent = 3;

	sums[0] = sum_of(&pcpu_array, key);
	sums[1] = sum_of(&pcpu_hash, key);
	sums[2] = sum_of(&pcpu_lru, key);
	missing[0] = bpf_map_lookup_percpu_elem(&pcpu_array, &(__u32){ 7 }, 0) != 0;
	missing[1] = bpf_map_lookup_percpu_elem(&pcpu_hash, &absent, 0) != 0;
	missing[2] = bpf_map_lookup_percpu_elem(&pcpu_lru, &absent, 0) != 0;
	past_end[0] = bpf_map_lookup_percpu_elem(&pcpu_array, &key, nr_cpus) != 0;
	past_end[1] = bpf_map_lookup_percpu_elem(&pcpu_hash, &key, nr_cpus) != 0;
	past_end[2] = bpf_map_lookup_percpu_elem(&pcpu_lru, &key, nr_cpus) != 0;
	return 0;
}

/* A kretprobe's stack starts at its return address, in the caller. */
__u64 ret_buf[3];
long ret_len;

SEC("kretprobe/stack_chain_leaf")
int on_leaf_ret(struct pt_regs *ctx)
{
	ret_len = bpf_get_stack(ctx, ret_buf, sizeof(ret_buf), BPF_F_USER_STACK);
	return 0;
}
