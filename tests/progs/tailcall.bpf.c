/* Tail calls through a PROG_ARRAY that user space fills: a chain that
 * keeps the context, a jump to an empty slot that falls through, and a
 * program tail-calling itself until Linux's limit of 33 stops it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} jmp_table SEC(".maps");

long visits[4];
long self_calls;
long fallthrough_rc;    /* bpf_tail_call's return when it did not jump */
__u32 missing_slot = 5;

/* The chain: entry -> slot 1 (stage1) -> slot 2 (stage2). Each stage
 * reads the context args the test passed to entry. */
SEC("raw_tp/bpfrt_chain")
int chain_entry(struct bpf_raw_tracepoint_args *ctx)
{
	visits[0]++;
	fallthrough_rc = bpf_tail_call(ctx, &jmp_table, 1);
	return 1000;   /* only reached if the tail call failed */
}

SEC("raw_tp/bpfrt_chain")
int stage1(struct bpf_raw_tracepoint_args *ctx)
{
	visits[1] += ctx->args[0];
	fallthrough_rc = bpf_tail_call(ctx, &jmp_table, 2);
	return 1001;
}

SEC("raw_tp/bpfrt_chain")
int stage2(struct bpf_raw_tracepoint_args *ctx)
{
	visits[2]++;
	return ctx->args[0] + ctx->args[1];
}

/* A slot nobody filled: the program goes on after bpf_tail_call. */
SEC("raw_tp/bpfrt_missing")
int jump_to_missing(struct bpf_raw_tracepoint_args *ctx)
{
	fallthrough_rc = bpf_tail_call(ctx, &jmp_table, missing_slot);
	return 77;
}

/* Slot 3: counts and tail-calls itself. 33 tail calls succeed, so it
 * runs 33 times; the 34th attempt fails and that run returns. */
SEC("raw_tp/bpfrt_loop")
int self_loop(struct bpf_raw_tracepoint_args *ctx)
{
	self_calls++;
	fallthrough_rc = bpf_tail_call(ctx, &jmp_table, 3);
	return 33;
}

SEC("raw_tp/bpfrt_loop")
int loop_entry(struct bpf_raw_tracepoint_args *ctx)
{
	fallthrough_rc = bpf_tail_call(ctx, &jmp_table, 3);
	return 99;
}

/* A tail call from a subprogram: when it is taken the target replaces the
 * subprogram, and the target's exit returns to the subprogram's caller
 * with the target's r0; the caller's own registers and stack are kept. */
__u32 sub_slot = 2;

static __attribute__((noinline)) int sub_tail(struct bpf_raw_tracepoint_args *ctx)
{
	fallthrough_rc = bpf_tail_call(ctx, &jmp_table, sub_slot);
	/* only if the tail call failed; not a constant, which clang would
	 * fold into the caller as if the subprogram always returned */
	return ctx->args[0] + 995;
}

SEC("raw_tp/bpfrt_chain")
int sub_tail_entry(struct bpf_raw_tracepoint_args *ctx)
{
	volatile long kept = ctx->args[1] * 3;  /* on the caller's stack */
	long r = sub_tail(ctx);

	return r + kept;
}
