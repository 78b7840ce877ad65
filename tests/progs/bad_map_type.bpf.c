/* Loader bad input: a .maps definition whose type no kernel knows
 * (test_loader_badinput.c). Open succeeds, load fails naming the map. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, 4242);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} weird SEC(".maps");

SEC("tp/bpfrt/bad_map_type")
int use_weird(void *ctx)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&weird, &k) != 0;
}
