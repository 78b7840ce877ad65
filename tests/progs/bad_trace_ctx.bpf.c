/* `bpfrt trace` tests: a uprobe the verifier refuses (it reads past the
 * end of pt_regs), so the target never runs and the log comes back. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

long sink;

SEC("uprobe/work")
int past_ctx(void *ctx)
{
	sink = *(long *)(ctx + 4096);
	return 0;
}
