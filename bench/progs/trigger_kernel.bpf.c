/* The kernel side of the trigger benchmarks (loaded with libbpf, root). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

long hits = 0;

#define NR_getpgid 121 /* x86-64 */

SEC("tp/syscalls/sys_enter_getpgid")
int bench_trigger_ktp(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

/* raw_tp/sys_enter: ctx[0] = struct pt_regs *, ctx[1] = syscall id */
SEC("raw_tp/sys_enter")
int bench_trigger_krawtp(__u64 *ctx)
{
	if (ctx[1] == NR_getpgid)
		__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("uprobe")
int bench_trigger_uprobe(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}
