/* Loader bad input: a hash map whose key is one byte over Linux's limit
 * (MAX_BPF_STACK, 512 bytes): -E2BIG at load, naming the map. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct big_key {
	char bytes[513];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, struct big_key);
	__type(value, __u64);
} too_wide SEC(".maps");

SEC("tp/bpfrt/bad_key_size")
int use_too_wide(void *ctx)
{
	return 0;
}
