/* bpfrt trace per-event cost (docs/PERFORMANCE.md): the smallest useful
 * uprobe and uretprobe on work() of tests/trace/work.c, each a counter. */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

long entries, returns;

#ifdef RETPROBE
SEC("uretprobe/work")
int BPF_KRETPROBE(count_return, long ret)
{
	__sync_fetch_and_add(&returns, 1);
	return 0;
}
#else
SEC("uprobe/work")
int BPF_KPROBE(count_entry, long a, long b)
{
	__sync_fetch_and_add(&entries, 1);
	return 0;
}
#endif
