/* `bpfrt trace` tests: plugin_fn of a library the target loads with
 * dlopen after the probe was attached (pending until then). */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

long plugin_hits, plugin_ret_sum;

SEC("uprobe/libtrace_plugin.so:plugin_fn")
int BPF_KPROBE(on_plugin, long x)
{
	__sync_fetch_and_add(&plugin_hits, 1);
	return 0;
}

SEC("uretprobe/libtrace_plugin.so:plugin_fn")
int BPF_KRETPROBE(on_plugin_ret, long ret)
{
	__sync_fetch_and_add(&plugin_ret_sum, ret);
	return 0;
}
