/* Counts calls of the host function work(x) per argument with fentry,
 * for arguments at or above a knob set before load, and sums its return
 * values with fexit. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* The knob: a const volatile in .rodata, set through the skeleton
 * (skel->rodata->min_arg) between open and load; the verifier then sees
 * it as a constant. */
const volatile int min_arg = 0;

/* calls per argument */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, int);
	__type(value, __u64);
} calls SEC(".maps");

__u64 ret_sum;  /* .bss: read by the host through skel->bss->ret_sum */

SEC("fentry/work")
int BPF_PROG(count_entry, int x)
{
	__u64 one = 1, *n;

	if (x < min_arg)
		return 0;
	n = bpf_map_lookup_elem(&calls, &x);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&calls, &x, &one, BPF_NOEXIST);
	return 0;
}

/* fexit sees the arguments, then the return value */
SEC("fexit/work")
int BPF_PROG(sum_exit, int x, int ret)
{
	__sync_fetch_and_add(&ret_sum, ret);
	return 0;
}
