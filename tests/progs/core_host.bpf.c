/* CO-RE: a host struct read through BPF_CORE_READ, built once
 * (tests/test_core.c runs it against two host builds whose layouts
 * differ, tests/core/host_v1.c and host_v2.c), and pt_regs read directly,
 * resolved against the kernel-layout types bpfrt provides. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

struct host_task {
	int pid;
	unsigned int uid;
	short prio;
	char comm[16];
	int nice;               /* only some builds have it */
} __attribute__((preserve_access_index));

struct pt_regs {
	unsigned long di, si;
} __attribute__((preserve_access_index));

__u64 out[8];

SEC("raw_tp/core_read")
int read_task(__u64 *ctx)
{
	struct host_task *t = (void *)ctx[0];
	char comm[8] = {};

	out[0] = BPF_CORE_READ(t, pid);
	out[1] = BPF_CORE_READ(t, uid);
	out[2] = (__u64)(__s64)BPF_CORE_READ(t, prio);
	out[3] = bpf_core_field_size(t->prio);
	bpf_core_read(&comm, sizeof(comm), &t->comm);
	__builtin_memcpy(&out[4], comm, 8);
	/* the read of nice is poisoned where it is missing, and dead there */
	if (bpf_core_field_exists(t->nice))
		out[5] = BPF_CORE_READ(t, nice) + 1000;
	else
		out[5] = 1;
	out[6] = bpf_core_field_offset(t->pid);
	out[7] = bpf_core_type_size(struct host_task);
	return 0;
}

__u64 regs_out[2];

SEC("kprobe/core_regs")
int read_regs(struct pt_regs *regs)
{
	regs_out[0] = regs->di;
	regs_out[1] = regs->si;
	return 0;
}
