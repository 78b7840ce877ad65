/* A map declared the pre-BTF way, in SEC("maps") as struct bpf_map_def
 * (libbpf 1.0 dropped both; older objects and samples still use them). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

struct bpf_map_def SEC("maps") legacy_counts = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u64),
	.max_entries = 4,
};

struct bpf_map_def SEC("maps") legacy_array = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u32),
	.max_entries = 2,
};

SEC("tp/bpfrt/legacy")
int legacy_count(void *ctx)
{
	__u32 k = 5, ak = 1;
	__u64 one = 1, *v = bpf_map_lookup_elem(&legacy_counts, &k);
	__u32 *a = bpf_map_lookup_elem(&legacy_array, &ak);

	if (a)
		*a += 10;
	if (v) {
		__sync_fetch_and_add(v, 1);
		return (int)*v;
	}
	return bpf_map_update_elem(&legacy_counts, &k, &one, BPF_NOEXIST) ? -1 : 1;
}
