/* `bpfrt trace` tests (tests/test_trace.sh): work() of tests/trace/work.c
 * counted at entry and return, malloc(777) counted in libc, and a
 * trace_printk line for the first few calls. */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

long hits, ret_hits, ret_sum, mallocs;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, long);
	__type(value, long);
} per_a SEC(".maps");

SEC("uprobe/work")
int BPF_KPROBE(on_work, long a, long b)
{
	long one = 1, *v;
	long n = __sync_fetch_and_add(&hits, 1);

	v = bpf_map_lookup_elem(&per_a, &a);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&per_a, &a, &one, BPF_NOEXIST);
	if (n < 2)
		bpf_printk("work %ld %ld", a, b);
	return 0;
}

SEC("uretprobe/work")
int BPF_KRETPROBE(on_work_ret, long ret)
{
	__sync_fetch_and_add(&ret_hits, 1);
	__sync_fetch_and_add(&ret_sum, ret);
	return 0;
}

SEC("uprobe/libc.so.6:malloc")
int BPF_KPROBE(on_malloc, unsigned long size)
{
	if (size == 777)
		__sync_fetch_and_add(&mallocs, 1);
	return 0;
}

/* the first three returns of work() as ring buffer records */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

long ring_sent;

SEC("uretprobe/work")
int BPF_KRETPROBE(on_work_ring, long ret)
{
	long *rec;

	if (__sync_fetch_and_add(&ring_sent, 1) >= 3)
		return 0;
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec)
		return 0;
	*rec = ret;
	bpf_ringbuf_submit(rec, 0);
	return 0;
}
