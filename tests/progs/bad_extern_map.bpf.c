/* Loader bad input: a program referencing a map that no section of this
 * object defines (extern, as a multi-file build that was never linked
 * leaves it). Load must fail naming the symbol. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

extern struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} elsewhere_map SEC(".maps");

/* A real map beside it: the extern must not be taken for this one. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} here_map SEC(".maps");

SEC("tp/bpfrt/bad_extern_map")
int use_elsewhere_map(void *ctx)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&elsewhere_map, &k) != 0;
}

SEC("tp/bpfrt/good_map")
int use_here_map(void *ctx)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&here_map, &k) != 0;
}
