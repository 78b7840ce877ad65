/* `bpfrt trace` tests of maps read while the target runs
 * (tests/test_trace_live.sh): work() of tests/trace/stepper.c counted in
 * an array, a per-CPU array and a hash map, its arguments sent through a
 * ring buffer; the second object on a target another controller traces. */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} calls_pcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, long);
	__type(value, long);
} by_a SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} args SEC(".maps");

SEC("uprobe/work")
int BPF_KPROBE(count_work, long a, long b)
{
	__u32 zero = 0, one = 1;
	long first = 1, *v;
	__u64 *c;

	c = bpf_map_lookup_elem(&calls, &zero);
	if (c)
		__sync_fetch_and_add(c, 1);
	c = bpf_map_lookup_elem(&calls, &one);
	if (c)
		__sync_fetch_and_add(c, b);
	c = bpf_map_lookup_elem(&calls_pcpu, &zero);
	if (c)
		__sync_fetch_and_add(c, 1);
	v = bpf_map_lookup_elem(&by_a, &a);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&by_a, &a, &first, BPF_NOEXIST);
	/* the first calls of each run of work(7, i): i < 2 */
	if (b < 2)
		bpf_ringbuf_output(&args, &b, sizeof(b), 0);
	return 0;
}
