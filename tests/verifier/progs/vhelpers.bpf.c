/* Verifier C corpus: helper arguments.
 * @probe_read_unbounded_size: reject "R2" ; linux: same
 * @probe_read_bounded_size: accept ; linux: same
 * @comm_size_too_big: reject "stack" ; linux: same
 * @comm_ok: accept ; linux: same
 * @helper_ctx_as_map: reject "R1" ; linux: same
 * @printk_ok: accept ; linux: same
 * @ringbuf_reserve_on_hash: reject "map" ; linux: same
 * @kprobe_ctx_write: reject "context is read-only" ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

SEC("raw_tp/x")
int probe_read_unbounded_size(unsigned long long *ctx)
{
	char buf[16];

	bpf_probe_read_kernel(buf, ctx[0], (void *)ctx[1]);
	return buf[0];
}

SEC("raw_tp/x")
int probe_read_bounded_size(unsigned long long *ctx)
{
	char buf[16] = {};
	unsigned long n = ctx[0];

	if (n > sizeof(buf))
		return 0;
	bpf_probe_read_kernel(buf, n, (void *)ctx[1]);
	return buf[0];
}

SEC("raw_tp/x")
int comm_size_too_big(void *ctx)
{
	char comm[16];

	bpf_get_current_comm(comm, 32);
	return comm[0];
}

SEC("raw_tp/x")
int comm_ok(void *ctx)
{
	char comm[16];

	bpf_get_current_comm(comm, sizeof(comm));
	return comm[0];
}

SEC("raw_tp/x")
int helper_ctx_as_map(void *ctx)
{
	int k = 0;

	return bpf_map_lookup_elem(ctx, &k) != 0;
}

SEC("raw_tp/x")
int printk_ok(void *ctx)
{
	bpf_printk("x %d", 1);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, long);
} hm SEC(".maps");

SEC("raw_tp/x")
int ringbuf_reserve_on_hash(void *ctx)
{
	long *e = bpf_ringbuf_reserve(&hm, 8, 0);

	if (!e)
		return 0;
	bpf_ringbuf_discard(e, 0);
	return 0;
}

SEC("kprobe/x")
int kprobe_ctx_write(unsigned long *ctx)
{
	*(volatile unsigned long *)&ctx[14] = 1;
	return 0;
}
