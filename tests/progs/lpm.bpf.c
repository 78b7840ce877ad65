/* An LPM trie from .maps (struct bpf_lpm_trie_key_u8 layout: prefixlen,
 * then the data in network order) driven from BPF: lookups take the
 * longest stored prefix, updates and deletes the exact one. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct key4 {
	__u32 prefixlen;
	__u8 data[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 16);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct key4);
	__type(value, __u64);
} routes SEC(".maps");

long rc[8];

static long match(__u8 a, __u8 b, __u8 c, __u8 d)
{
	struct key4 k = { 32, { a, b, c, d } };
	__u64 *v = bpf_map_lookup_elem(&routes, &k);

	return v ? (long)*v : -1;
}

SEC("tp/bpfrt/lpm")
int lpm_ops(void *ctx)
{
	struct key4 k24 = { 24, { 10, 1, 2, 0 } };
	__u64 v = 24;

	rc[0] = match(10, 1, 2, 3);
	rc[1] = bpf_map_update_elem(&routes, &k24, &v, BPF_NOEXIST);
	rc[2] = match(10, 1, 2, 3);
	rc[3] = match(10, 2, 0, 0);
	rc[4] = bpf_map_update_elem(&routes, &k24, &v, BPF_NOEXIST);
	rc[5] = bpf_map_delete_elem(&routes, &k24);
	rc[6] = bpf_map_delete_elem(&routes, &k24);
	rc[7] = match(10, 1, 2, 3);
	return 8;
}
