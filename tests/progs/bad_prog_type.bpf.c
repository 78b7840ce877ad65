/* Loader bad input: a section name in a Linux program type's family that
 * is not one of libbpf's names (cgroup/connect4 takes no target). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("cgroup/connect4/extra")
int in_odd_section(void *ctx)
{
	return 0;
}
