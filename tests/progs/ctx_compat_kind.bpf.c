/* A prog array first referenced by a raw_tp program, then by a kprobe
 * program: a tail call would hand raw_tp targets a pt_regs, so the object
 * must not load (test_ctx_compat). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} jmp SEC(".maps");

SEC("raw_tp/cc_two")
int raw_dispatch(void *ctx)
{
	bpf_tail_call(ctx, &jmp, 0);
	return 0;
}

SEC("kprobe/cc_probed")
int kprobe_dispatch(void *ctx)
{
	bpf_tail_call(ctx, &jmp, 0);
	return 0;
}
