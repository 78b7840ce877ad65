/* Cgroup storage as cgroup programs declare it, through
 * bpf_get_local_storage: bpfrt keeps one storage, which the programs of
 * the map share (docs/MAPS.md). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, __u64[2]);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, __u64);
} percpu_counts SEC(".maps");

SEC("cgroup_skb/egress")
int count_packets(struct __sk_buff *skb)
{
	__u64 *c = bpf_get_local_storage(&counts, 0);
	__u64 *pc = bpf_get_local_storage(&percpu_counts, 0);

	__sync_fetch_and_add(&c[0], 1);
	c[1] += skb->len;
	*pc += 1;
	return 1;
}

/* a second program of the map sees the same storage */
SEC("cgroup_skb/ingress")
int read_count(struct __sk_buff *skb)
{
	__u64 *c = bpf_get_local_storage(&counts, 0);

	return c[0] == 3 ? 1 : 0;
}
