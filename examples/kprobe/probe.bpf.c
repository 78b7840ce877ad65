/* A kprobe and a kretprobe on parse_number(): the argument string of the
 * last call and the sum of the results, read from the x86-64 registers
 * with bpf_tracing.h's BPF_KPROBE/BPF_KRETPROBE (-D__TARGET_ARCH_x86). */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

__u64 calls;
__s64 sum;
__u64 failures;
char last[16];

SEC("kprobe/parse_number")
int BPF_KPROBE(on_parse, const char *s)
{
	__sync_fetch_and_add(&calls, 1);
	bpf_probe_read_user_str(last, sizeof(last), s);
	return 0;
}

SEC("kretprobe/parse_number")
int BPF_KRETPROBE(on_parse_ret, long ret)
{
	if (ret < 0)
		__sync_fetch_and_add(&failures, 1);
	else
		__sync_fetch_and_add(&sum, ret);
	return 0;
}
