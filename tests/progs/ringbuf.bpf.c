/* A ring buffer producer: records written with reserve/submit, dropped
 * with reserve/discard and copied with ringbuf_output, then the ring's
 * state read back with ringbuf_query. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct event {
	__u32 seq;
	__u32 kind;       /* 1: output, 2: reserve+submit (3: discarded) */
	__u64 payload;
	char tag[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 4096);
} rb SEC(".maps");

const volatile __u32 nr_events = 30;
__u32 next_seq;
long errors;
__u64 avail_data, ring_size, cons_pos, prod_pos;
long too_big_failed;
long overflow_sent, overflow_rc;

SEC("tp/bpfrt/produce")
int produce(void *ctx)
{
	for (__u32 i = 0; i < nr_events; i++) {
		__u32 seq = next_seq++;
		struct event *e;

		if (seq % 3 == 0) {
			struct event out = { .seq = seq, .kind = 1, .payload = seq * 1000ull };

			__builtin_memcpy(out.tag, "output", 7);
			if (bpf_ringbuf_output(&rb, &out, sizeof(out), 0))
				errors++;
			continue;
		}
		e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
		if (!e) {
			errors++;
			continue;
		}
		e->seq = seq;
		e->payload = seq * 1000ull;
		if (seq % 3 == 2) {
			e->kind = 3;
			__builtin_memcpy(e->tag, "discard", 8);
			bpf_ringbuf_discard(e, 0);
		} else {
			e->kind = 2;
			__builtin_memcpy(e->tag, "submit", 7);
			bpf_ringbuf_submit(e, 0);
		}
	}
	/* A reservation larger than the ring always fails. */
	too_big_failed = bpf_ringbuf_reserve(&rb, 8 * 4096, 0) == 0;
	avail_data = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	ring_size = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	cons_pos = bpf_ringbuf_query(&rb, BPF_RB_CONS_POS);
	prod_pos = bpf_ringbuf_query(&rb, BPF_RB_PROD_POS);
	return 0;
}

/* Fills the ring without a consumer: ringbuf_output fails once full. */
SEC("tp/bpfrt/overflow")
int overflow(void *ctx)
{
	__u64 blob[16] = { 0 };   /* 128 bytes + 8 header: 120 records in 16 KiB */

	for (int i = 0; i < 200; i++) {
		blob[0] = i;
		overflow_rc = bpf_ringbuf_output(&rb, blob, sizeof(blob), 0);
		if (overflow_rc)
			break;
		overflow_sent++;
	}
	return 0;
}

/* One record, with a wakeup forced or suppressed by the test's choice. */
__u64 notify_flags = BPF_RB_FORCE_WAKEUP;

SEC("tp/bpfrt/notify")
int notify(void *ctx)
{
	__u64 *v = bpf_ringbuf_reserve(&rb, sizeof(*v), 0);

	if (!v)
		return 1;
	*v = 0xfeed;
	bpf_ringbuf_submit(v, notify_flags);
	return 0;
}
