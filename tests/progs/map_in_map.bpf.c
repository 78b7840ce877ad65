/* Map-in-map from .maps as libbpf declares it: inner map templates with
 * __array(values, struct inner_map), initial slots from .values, and
 * programs that look an inner map up and use it with the map helpers. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct inner_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} inner_a SEC(".maps"), inner_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__array(values, struct inner_map);
} outer_arr SEC(".maps") = {
	.values = { [0] = &inner_a, [2] = &inner_b },
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 8);
	__type(key, __u32);
	__array(values, struct inner_map);
} outer_hash SEC(".maps") = {
	.values = { [1] = &inner_b },
};

long rc[8];

SEC("tp/bpfrt/map_in_map")
int map_in_map(void *ctx)
{
	__u32 k = 0, ik = 1;
	__u64 v = 11, *pv;
	void *inner;

	inner = bpf_map_lookup_elem(&outer_arr, &k);
	rc[0] = inner ? 1 : 0;                                       /* 1 */
	if (inner)
		rc[1] = bpf_map_update_elem(inner, &ik, &v, BPF_ANY);  /* 0: inner_a[1] = 11 */
	k = 1;
	rc[2] = bpf_map_lookup_elem(&outer_arr, &k) ? 1 : 0;         /* 0: empty slot */
	k = 2;
	inner = bpf_map_lookup_elem(&outer_arr, &k);
	rc[3] = -1;
	if (inner) {
		pv = bpf_map_lookup_elem(inner, &ik);
		rc[3] = pv ? (long)*pv : -2;                            /* user's inner_b[1] */
	}
	k = 1;
	inner = bpf_map_lookup_elem(&outer_hash, &k);
	rc[4] = -1;
	if (inner) {
		v = 22;
		ik = 3;
		rc[4] = bpf_map_update_elem(inner, &ik, &v, BPF_ANY);  /* 0: inner_b[3] = 22 */
	}
	k = 9;
	rc[5] = bpf_map_lookup_elem(&outer_arr, &k) ? 1 : 0;         /* 0: out of range */
	return 6;
}
