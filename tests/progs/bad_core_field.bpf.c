/* CO-RE bad input: a field no target BTF has, read on a path the program
 * takes. The load must fail naming the field (tests/test_core.c). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

struct host_task {
	int pid;
	int not_in_any_build;
} __attribute__((preserve_access_index));

SEC("raw_tp/core_bad")
int read_missing(__u64 *ctx)
{
	struct host_task *t = (void *)ctx[0];

	return BPF_CORE_READ(t, not_in_any_build);
}
