/* Verifier C corpus: ringbuf references.
 * @reserve_not_released: reject "Unreleased reference" ; linux: same
 * @reserve_submitted: accept ; linux: same
 * @reserve_leak_one_path: reject "Unreleased reference" ; linux: same
 * @reserve_null_unchecked: reject "invalid mem access 'mem_or_null'" ; linux: same
 * @use_after_submit: reject "R6 !read_ok" ; linux: same
 * @reserve_oob_write: reject "invalid access to memory" ; linux: same
 * @reserve_discarded: accept ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

SEC("raw_tp/x")
int reserve_not_released(void *ctx)
{
	long *e = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!e)
		return 0;
	*e = 1;
	return 1;
}

SEC("raw_tp/x")
int reserve_submitted(void *ctx)
{
	long *e = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!e)
		return 0;
	*e = 1;
	bpf_ringbuf_submit(e, 0);
	return 1;
}

SEC("raw_tp/x")
int reserve_leak_one_path(unsigned long long *ctx)
{
	long *e = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!e)
		return 0;
	if (ctx[0] == 7)
		return 2;
	bpf_ringbuf_submit(e, 0);
	return 1;
}

SEC("raw_tp/x")
int reserve_null_unchecked(void *ctx)
{
	long *e = bpf_ringbuf_reserve(&rb, 8, 0);

	*e = 1;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/x")
int use_after_submit(void *ctx)
{
	long *e = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!e)
		return 0;
	bpf_ringbuf_submit(e, 0);
	return *(volatile long *)e;
}

SEC("raw_tp/x")
int reserve_oob_write(void *ctx)
{
	long *e = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!e)
		return 0;
	((volatile long *)e)[1] = 1;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/x")
int reserve_discarded(void *ctx)
{
	long *e = bpf_ringbuf_reserve(&rb, 16, 0);

	if (!e)
		return 0;
	e[1] = 2;
	bpf_ringbuf_discard(e, 0);
	return 0;
}
