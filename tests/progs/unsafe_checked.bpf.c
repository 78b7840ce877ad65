/* Programs the verifier must reject, for the checking interpreter to catch
 * when they are loaded trusted (unverified): each does one unsafe thing
 * after some safe ones; the *_ok programs are safe (the controls, and a
 * tail call into whatever the test puts in slot 0). test_verifier checks
 * both verdicts for every unsafe_*.bpf.o. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} vals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} jmp SEC(".maps");

/* Programs may only write it (BPF_F_WRONLY_PROG). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_WRONLY_PROG);
	__type(key, __u32);
	__type(value, __u64);
} wronly SEC(".maps");

/* The test sets these; volatile so that clang cannot fold the indexes. */
volatile __u32 idx = 1;
volatile __u32 len = 16;
char small[8];

SEC("syscall")
int value_write_ok(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&vals, &k);

	if (!v)
		return 0;
	*v = 7;
	return 1;
}

/* vals' value is 8 bytes: v[1] is the next element's (or nothing). */
SEC("syscall")
int value_write_past_end(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&vals, &k);

	if (!v)
		return 0;
	v[idx] = 7;
	return 1;
}

/* A global (.bss, a map value reached through lddw) written past its end. */
SEC("syscall")
int global_write_past_end(void *ctx)
{
	small[idx + 7] = 1;  /* in bounds with idx 0 */
	return small[idx + 7];
}

/* ringbuf_output reads len bytes from an 8-byte value. */
SEC("syscall")
int helper_reads_past_value(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&vals, &k);

	if (!v)
		return 0;
	return bpf_ringbuf_output(&rb, v, len, 0);
}

SEC("syscall")
int ringbuf_record_ok(void *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!r)
		return 0;
	*r = 1;
	bpf_ringbuf_submit(r, 0);
	return 1;
}

SEC("syscall")
int write_after_submit(void *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!r)
		return 0;
	*r = 1;
	bpf_ringbuf_submit(r, 0);
	*(volatile __u64 *)r = 2;
	return 1;
}

SEC("syscall")
int discard_after_submit(void *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!r)
		return 0;
	bpf_ringbuf_submit(r, 0);
	bpf_ringbuf_discard(r, 0);
	return 1;
}

SEC("syscall")
int write_only_map_write_ok(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&wronly, &k);

	if (!v)
		return 0;
	*v = 3;
	return 1;
}

SEC("syscall")
int write_only_map_read(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&wronly, &k);

	if (!v)
		return 0;
	return *(volatile __u64 *)v;
}

/* Slot 0 of jmp: the tail-call target runs checked too. */
SEC("syscall")
int tail_call_ok(void *ctx)
{
	bpf_tail_call(ctx, &jmp, 0);
	return 0;
}

/* A bpf_loop callback runs checked: it writes past the value it got. */
static long write_past(__u64 i, void *data)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&vals, &k);

	if (v)
		v[i + idx] = i;  /* in bounds for idx 0 and i 0 */
	return 0;
}

SEC("syscall")
int loop_callback_writes_past(void *ctx)
{
	return bpf_loop(2, write_past, NULL, 0);
}

/* The packet is [data, data_end): a read before data (still the packet's
 * page) and one past data_end, with idx 0 and len 16 as the test sets. */
SEC("xdp")
int xdp_read_before_data(struct xdp_md *ctx)
{
	unsigned char *d = (unsigned char *)(long)ctx->data;

	return *(volatile unsigned char *)(d - 1 - idx);
}

SEC("xdp")
int xdp_read_past_end(struct xdp_md *ctx)
{
	unsigned char *d = (unsigned char *)(long)ctx->data;

	return *(volatile unsigned char *)(d + len);
}

/* The metadata is [data_meta, data): a read just before it, and a 2-byte
 * read from its last byte into the packet (idx 1), which neither region
 * holds whole. */
SEC("xdp")
int xdp_meta_read_before(struct xdp_md *ctx)
{
	unsigned char *m = (unsigned char *)(long)ctx->data_meta;

	return *(volatile unsigned char *)(m - idx);
}

SEC("xdp")
int xdp_meta_read_into_data(struct xdp_md *ctx)
{
	unsigned char *d = (unsigned char *)(long)ctx->data;

	return *(volatile unsigned short *)(d - idx);
}
