/* Tail-call targets of one prog array, owned by dispatch (the first
 * program that references it): a raw_tp of the host tracepoint cc_two,
 * whose context is 2 u64 arguments. Which of the others a slot takes
 * (test_ctx_compat): the raw_tp reading args[1] fits, the raw_tp of cc_six
 * reading args[5] reads past cc_two's context, tp and kprobe programs
 * have other contexts. */
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
int dispatch(__u64 *ctx)
{
	bpf_tail_call(ctx, &jmp, 0);
	return 1000;    /* the slot was empty */
}

SEC("raw_tp/cc_two")
int read_arg1(__u64 *ctx)
{
	return ctx[1];
}

SEC("raw_tp/cc_six")
int read_arg5(__u64 *ctx)
{
	return ctx[5];
}

SEC("tp/cc/cc_two")
int tp_read_arg0(__u64 *ctx)
{
	return ctx[1];  /* after the 8-byte trace entry */
}

SEC("kprobe/cc_probed")
int kprobe_read_ax(__u64 *ctx)
{
	return ctx[10];
}
