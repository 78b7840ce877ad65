/* Programs for tests/test_kprobe.c: kprobes and kretprobes on host
 * functions (tests/host/kprobe_targets.c), written as for Linux with
 * bpf_tracing.h's PT_REGS_* and BPF_KPROBE/BPF_KRETPROBE macros. */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

long args_hits, ret_hits, off_hits, rip_hits, fact_hits, fact_ret_hits;
long args[6], ret_val, off_ax, off_ip, rip_di, entry_sp, ret_sp;
long fact_rets[16];

/* libbpf before 1.2 stops at PT_REGS_PARM5 (and BPF_KPROBE at 5 args);
 * newer ones read the 6th from r9, as here. */
#ifndef PT_REGS_PARM6
#define PT_REGS_PARM6(x) (((const struct pt_regs *)(x))->r9)
#endif

SEC("kprobe/kp_args6")
int BPF_KPROBE(on_args6, long a, long b, long c, long d, long e)
{
	long f = PT_REGS_PARM6(ctx);

	args[0] = a;
	args[1] = b;
	args[2] = c;
	args[3] = d;
	args[4] = e;
	args[5] = f;
	entry_sp = PT_REGS_SP(ctx);
	__sync_fetch_and_add(&args_hits, 1);
	return 0;
}

SEC("kretprobe/kp_args6")
int BPF_KRETPROBE(on_args6_ret, long ret)
{
	ret_val = ret;
	ret_sp = PT_REGS_SP(ctx);
	__sync_fetch_and_add(&ret_hits, 1);
	return 0;
}

/* After `mov kp_rip_data(%rip), %rax`: rax holds the loaded value. */
SEC("kprobe/kp_rip_load+7")
int on_rip_load_off(struct pt_regs *ctx)
{
	off_ax = ctx->rax;
	off_ip = PT_REGS_IP(ctx);
	__sync_fetch_and_add(&off_hits, 1);
	return 0;
}

SEC("kprobe/kp_rip_load")
int on_rip_load(struct pt_regs *ctx)
{
	rip_di = PT_REGS_PARM1(ctx);
	__sync_fetch_and_add(&rip_hits, 1);
	return 0;
}

SEC("kprobe/kp_fact")
int BPF_KPROBE(on_fact, long n)
{
	__sync_fetch_and_add(&fact_hits, 1);
	return 0;
}

SEC("kretprobe/kp_fact")
int BPF_KRETPROBE(on_fact_ret, long ret)
{
	long i = __sync_fetch_and_add(&fact_ret_hits, 1);

	fact_rets[i & 15] = ret;
	return 0;
}
