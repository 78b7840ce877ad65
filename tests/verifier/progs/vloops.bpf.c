/* Verifier C corpus: loops and callbacks.
 * @infinite_loop: reject "infinite loop" ; linux: same
 * @bounded_loop: accept ; linux: same
 * @loop_callback_ok: accept ; linux: same
 * @loop_combinations: accept ; linux: same
 * @loop_combinations_value_decides: reject "invalid access to map value" ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

SEC("raw_tp/x")
int infinite_loop(unsigned long long *ctx)
{
	unsigned long long v = ctx[0];

	for (;;)
		if (v == 5)
			break;
	return 0;
}

SEC("raw_tp/x")
int bounded_loop(unsigned long long *ctx)
{
	int s = 0;

	for (int i = 0; i < 100; i++)
		s += i ^ (int)ctx[0];
	return s;
}

static long add_cb(__u32 i, void *c)
{
	*(long *)c += i;
	return 0;
}

SEC("raw_tp/x")
int loop_callback_ok(void *ctx)
{
	long sum = 0;

	bpf_loop(10, add_cb, &sum, 0);
	return sum;
}


/* The kernel selftests' loop4 shape: each iteration may set a bit of the
 * result, 2^20 combinations of a value that decides nothing but the
 * return value (joins widen it; the loop counter stays exact). */
SEC("socket")
int loop_combinations(struct __sk_buff *skb)
{
	int ret = 0;

#pragma clang loop unroll(disable)
	for (int i = 0; i < 20; i++)
		if (skb->len)
			ret |= 1 << i;
	return ret;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, char[1 << 19]);
} combos SEC(".maps");

/* The same combinations deciding a map access: the widened value must
 * not pass for the exact ones (bit 19 set makes the offset too large). */
SEC("socket")
int loop_combinations_value_decides(struct __sk_buff *skb)
{
	int ret = 0, zero = 0;
	char *v;

#pragma clang loop unroll(disable)
	for (int i = 0; i < 20; i++)
		if (skb->len)
			ret |= 1 << i;
	v = bpf_map_lookup_elem(&combos, &zero);
	if (!v)
		return 0;
	return v[ret];
}
