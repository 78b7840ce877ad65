/* Verifier C corpus: tail calls from subprograms and callbacks. A tail
 * call that succeeds in a subprogram returns the target's r0 to the
 * subprogram's caller; both outcomes are walked.
 * @tc_sub_caller_derefs_result: reject "invalid mem access 'scalar'" ; linux: same
 * @tc_sub_caller_indexes_with_result: reject "map_value pointer" ; linux: same
 * @tc_sub_caller_checks_result: accept ; linux: same
 * @tc_in_callback: reject "tail_call in a callback" ; linux: same
 * @tc_sub_big_caller_stack: reject "call stack of previous frames" ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[16]);
} vals SEC(".maps");

long fallback;
__u32 slot = 1;

/* When the tail call fails: a map value; when it succeeds: the target's
 * number. */
static __attribute__((noinline)) char *value_or_tail_call(void *ctx)
{
	__u32 k = 0;
	char *v = bpf_map_lookup_elem(&vals, &k);

	if (!v)
		return (char *)&fallback;
	bpf_tail_call(ctx, &progs, slot);
	return v;
}

SEC("raw_tp/x")
int tc_sub_caller_derefs_result(void *ctx)
{
	return *value_or_tail_call(ctx);
}

/* 0..15 when the tail call fails */
static __attribute__((noinline)) long index_or_tail_call(void *ctx)
{
	bpf_tail_call(ctx, &progs, slot);
	return fallback & 15;
}

SEC("raw_tp/x")
int tc_sub_caller_indexes_with_result(void *ctx)
{
	__u32 k = 0;
	long i = index_or_tail_call(ctx);
	char *v = bpf_map_lookup_elem(&vals, &k);

	if (!v)
		return 0;
	return v[i];
}

/* any number either way (read through volatile: clang cannot assume a
 * range and drop the caller's checks) */
static __attribute__((noinline)) long number_or_tail_call(void *ctx)
{
	bpf_tail_call(ctx, &progs, slot);
	return *(volatile long *)&fallback;
}

SEC("raw_tp/x")
int tc_sub_caller_checks_result(void *ctx)
{
	__u32 k = 0;
	long i = number_or_tail_call(ctx);
	char *v = bpf_map_lookup_elem(&vals, &k);

	if (!v || i < 0 || i > 15)
		return 0;
	return v[i];
}

static long loop_body(__u32 i, void *data)
{
	bpf_tail_call(*(void **)data, &progs, slot);
	return 0;
}

SEC("raw_tp/x")
int tc_in_callback(void *ctx)
{
	void *c = ctx;

	bpf_loop(2, loop_body, &c, 0);
	return 0;
}

SEC("raw_tp/x")
int tc_sub_big_caller_stack(void *ctx)
{
	char buf[300];

	buf[0] = 1;
	buf[299] = 2;
	asm volatile("" : : "r"(buf) : "memory"); /* the whole array stays on the stack */
	return index_or_tail_call(ctx) + buf[0] + buf[299];
}
