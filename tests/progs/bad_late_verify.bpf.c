/* An object whose first program verifies and whose second does not (a
 * map value read at an unbounded index): its load fails after the first
 * program is prepared. test_loader checks that the first is never run,
 * attached or slotted meanwhile (the failure strips its code). Both are
 * raw_tp programs of the host tracepoint lt_probe, like those of
 * lifetimes.bpf.c, so its prog array would take the first. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[4]);
} vals SEC(".maps");

SEC("raw_tp/lt_probe")
int fine(struct bpf_raw_tracepoint_args *ctx)
{
	return 7;
}

SEC("raw_tp/lt_probe")
int unbounded(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&vals, &k);

	if (!v)
		return 0;
	return v[ctx->args[0]];
}
