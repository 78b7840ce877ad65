/* A user ring buffer consumer: bpf_user_ringbuf_drain hands each sample
 * user space submitted to a callback as a dynptr, which reads it with
 * bpf_dynptr_read, sums it and checks the order; echo copies each sample
 * on into a ring buffer through a ringbuf dynptr (reserve_dynptr,
 * dynptr_write, submit_dynptr), and local_sum reads a map value through a
 * local dynptr and its data slice. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct sample {
	__u64 seq;
	__u64 value;
};

struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, 4096);
} urb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample);
} vals SEC(".maps");

__u64 total, count, next_seq, bad_order, read_errors, short_samples;
long drained, echo_errors;
__u32 stop_after; /* the callback stops after this many in one drain (0: never) */

struct drain_ctx {
	__u32 seen;
};

static long take(struct bpf_dynptr *dynptr, void *data)
{
	struct drain_ctx *dc = data;
	struct sample s;
	long err = bpf_dynptr_read(&s, sizeof(s), dynptr, 0, 0);

	if (err == -7) { /* -E2BIG: a sample shorter than struct sample */
		short_samples++;
		return 0;
	}
	if (err) {
		read_errors++;
		return 0;
	}
	if (s.seq != next_seq)
		bad_order++;
	next_seq = s.seq + 1;
	total += s.value;
	count++;
	dc->seen++;
	return stop_after && dc->seen >= stop_after;
}

SEC("tp/bpfrt/drain")
int drain(void *ctx)
{
	struct drain_ctx dc = { 0 };

	drained = bpf_user_ringbuf_drain(&urb, take, &dc, 0);
	return 0;
}

static long copy_out(struct bpf_dynptr *dynptr, void *data)
{
	struct bpf_dynptr rec;
	struct sample s;

	if (bpf_dynptr_read(&s, sizeof(s), dynptr, 0, 0)) {
		echo_errors++;
		return 0;
	}
	/* the reference must go on every path, reserved or not */
	if (bpf_ringbuf_reserve_dynptr(&out, sizeof(s), 0, &rec)) {
		echo_errors++;
		bpf_ringbuf_discard_dynptr(&rec, 0);
		return 1;
	}
	if (bpf_dynptr_write(&rec, 0, &s, sizeof(s), 0))
		echo_errors++;
	bpf_ringbuf_submit_dynptr(&rec, 0);
	return 0;
}

SEC("tp/bpfrt/echo")
int echo(void *ctx)
{
	drained = bpf_user_ringbuf_drain(&urb, copy_out, NULL, 0);
	return 0;
}

SEC("tp/bpfrt/local_sum")
int local_sum(void *ctx)
{
	struct bpf_dynptr d;
	struct sample *v, *slice;
	__u32 key = 0;
	__u64 seq = 0;

	v = bpf_map_lookup_elem(&vals, &key);
	if (!v)
		return -1;
	if (bpf_dynptr_from_mem(v, sizeof(*v), 0, &d))
		return -2;
	if (bpf_dynptr_read(&seq, sizeof(seq), &d, 0, 0))
		return -3;
	slice = bpf_dynptr_data(&d, 0, sizeof(*slice));
	if (!slice)
		return -4;
	slice->value += seq;
	/* past the end: -E2BIG, as Linux */
	return bpf_dynptr_read(&seq, sizeof(seq), &d, 12, 0) == -7 ? 0 : -5;
}
