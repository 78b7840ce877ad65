/* A prog array first referenced by a raw_tp program of cc_six (6 u64
 * arguments, so its targets may read 48 bytes), then by one of cc_two,
 * which has 16 bytes to pass on: the object must not load
 * (test_ctx_compat). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} jmp SEC(".maps");

SEC("raw_tp/cc_six")
int six_dispatch(void *ctx)
{
	bpf_tail_call(ctx, &jmp, 0);
	return 0;
}

SEC("raw_tp/cc_two")
int two_dispatch(void *ctx)
{
	bpf_tail_call(ctx, &jmp, 0);
	return 0;
}
