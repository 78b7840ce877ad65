/* Queue, stack, bloom filter and LRU per-CPU hash from .maps, driven from
 * BPF with map_push_elem, map_pop_elem and map_peek_elem (and the element
 * helpers for the LRU map): the results and error codes a program sees,
 * recorded in rc[] in order. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 3);
	__type(value, __u32);
} queue SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 3);
	__type(value, __u32);
} stack SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(max_entries, 64);
	__type(value, __u64);
	__uint(map_extra, 3);
} bloom SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} lru_pcpu SEC(".maps");

long rc[40];

/* Pushes 1, 2, 3 (full), then 4 (-E2BIG, then BPF_EXIST drops the
 * oldest), and pops everything back. */
static int queue_or_stack(void *map, int i)
{
	__u32 v;

	for (v = 1; v <= 3; v++)
		rc[i++] = bpf_map_push_elem(map, &v, BPF_ANY);       /* 0 0 0 */
	v = 4;
	rc[i++] = bpf_map_push_elem(map, &v, BPF_ANY);               /* -E2BIG */
	rc[i++] = bpf_map_push_elem(map, &v, BPF_NOEXIST);           /* -EINVAL */
	rc[i++] = bpf_map_push_elem(map, &v, BPF_EXIST);             /* 0: 1 goes */
	v = 0;
	rc[i++] = bpf_map_peek_elem(map, &v) ? -1 : v;               /* queue 2, stack 4 */
	rc[i++] = bpf_map_pop_elem(map, &v) ? -1 : v;                /* queue 2, stack 4 */
	rc[i++] = bpf_map_pop_elem(map, &v) ? -1 : v;                /* 3, 3 */
	rc[i++] = bpf_map_pop_elem(map, &v) ? -1 : v;                /* queue 4, stack 2 */
	rc[i++] = bpf_map_pop_elem(map, &v);                         /* -ENOENT */
	rc[i++] = bpf_map_peek_elem(map, &v);                        /* -ENOENT */
	return i;
}

SEC("tp/bpfrt/keyless")
int keyless(void *ctx)
{
	__u64 x = 42, y = 43;
	__u32 k;
	int i = 0;

	i = queue_or_stack(&queue, i);                               /* rc[0..10] */
	i = queue_or_stack(&stack, i);                               /* rc[11..21] */
	rc[i++] = bpf_map_peek_elem(&bloom, &x);                     /* -ENOENT */
	rc[i++] = bpf_map_push_elem(&bloom, &x, BPF_ANY);            /* 0 */
	rc[i++] = bpf_map_peek_elem(&bloom, &x);                     /* 0 */
	rc[i++] = bpf_map_push_elem(&bloom, &y, BPF_EXIST);          /* -EINVAL */
	/* an LRU map makes room: the fifth key evicts one */
	for (k = 0; k < 5; k++)
		rc[i++] = bpf_map_update_elem(&lru_pcpu, &k, &x, BPF_ANY); /* 0 x5 */
	k = 4;
	rc[i++] = bpf_map_lookup_elem(&lru_pcpu, &k) ? 1 : 0;        /* 1 */
	rc[i++] = bpf_map_update_elem(&lru_pcpu, &k, &x, BPF_NOEXIST); /* -EEXIST */
	return i;
}

/* Pops what user space pushed into the queue and adds it up. */
SEC("tp/bpfrt/keyless_sum")
int keyless_sum(void *ctx)
{
	__u32 v, sum = 0;

	for (int n = 0; n < 8; n++) {
		if (bpf_map_pop_elem(&queue, &v))
			break;
		sum += v;
	}
	return sum;
}
