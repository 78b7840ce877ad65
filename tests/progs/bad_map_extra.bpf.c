/* Loader bad input: a map definition whose map_extra Linux and libbpf refuse
 * (tests/test_externs.c). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_extra, 3);
} bad_map_extra SEC(".maps");

SEC("syscall")
int use_map(void *ctx)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&bad_map_extra, &k) != 0;
}
