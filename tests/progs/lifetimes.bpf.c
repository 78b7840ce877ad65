/* Programs that outlive their object (test_loader): the test opens this
 * object twice, A and B, puts A's target into B's prog array and closes
 * A; B's caller then tail-calls into A's target, which updates A's map
 * and A's global. raw_tp programs of the host tracepoint lt_probe. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} jmp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

__u64 hits;     /* .bss */

SEC("raw_tp/lt_probe")
int caller(struct bpf_raw_tracepoint_args *ctx)
{
	bpf_tail_call(ctx, &jmp, 0);
	return 1000;    /* the slot was empty */
}

/* counts[0] += 1, hits += 100; returns their sum */
SEC("raw_tp/lt_probe")
int target(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (!v)
		return 2000;
	*v += 1;
	hits += 100;
	return *v + hits;
}
