/* The tail-call limit (33 per run, Linux's MAX_TAIL_CALL_CNT) counted
 * across everything a run does: a program that tail-calls itself (slot 0)
 * entered from the main program, from a subprogram and from bpf_loop
 * callbacks; each run executes exactly 33 tail calls whatever the path. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} jmp_table SEC(".maps");

long calls;        /* runs of self_loop: tail calls taken */
long iterations;   /* bpf_loop callback invocations */
volatile long failed = 100; /* what a program returns when its tail call failed */

SEC("raw_tp/bpfrt_count")
int self_loop(void *ctx)
{
	calls++;
	bpf_tail_call(ctx, &jmp_table, 0);
	return 0;   /* the limit stopped it: 0 keeps a bpf_loop going */
}

SEC("raw_tp/bpfrt_count")
int from_main(void *ctx)
{
	bpf_tail_call(ctx, &jmp_table, 0);
	return failed;
}

/* A successful tail call replaces the subprogram's frame: the chain's r0
 * (0) comes back to from_subprog. */
static __attribute__((noinline)) int tail_from_sub(void *ctx)
{
	bpf_tail_call(ctx, &jmp_table, 0);
	return failed;
}

SEC("raw_tp/bpfrt_count")
int from_subprog(void *ctx)
{
	return tail_from_sub(ctx) + 1;
}

struct cb_ctx {
	void *ctx;
};

/* Each iteration tries the chain again: the first one takes all 33 tail
 * calls, the next ones find the run's count exhausted. The tail call is
 * made by a subprogram of the callback: the verifier refuses one in the
 * callback itself (taken, it would return the chain's r0 to bpf_loop,
 * which only takes 0 or 1; Linux refuses it too). */
static long tail_from_callback(__u64 i, struct cb_ctx *c)
{
	iterations++;
	tail_from_sub(c->ctx);
	return 0;
}

SEC("raw_tp/bpfrt_count")
int from_callback(void *ctx)
{
	struct cb_ctx c = { .ctx = ctx };

	bpf_loop(3, tail_from_callback, &c, 0);
	/* and once more from the main program afterwards */
	bpf_tail_call(ctx, &jmp_table, 0);
	return failed;
}
