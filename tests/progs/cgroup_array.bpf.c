/* A cgroup array as tools declare one, and bpf_current_task_under_cgroup
 * on it: in bpfrt it lists no cgroup (docs/MAPS.md). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

long rc[2];

SEC("tp/bpfrt/cgroup_array")
int under_cgroup(void *ctx)
{
	rc[0] = bpf_current_task_under_cgroup(&cgroups, 0);
	rc[1] = bpf_current_task_under_cgroup(&cgroups, 5);
	return 0;
}
