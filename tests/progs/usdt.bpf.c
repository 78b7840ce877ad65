/* Programs for tests/test_usdt.c and tests/test_trace_usdt.sh: USDT
 * probes of tests/trace/usdt_sites.c and usdt_guarded.c read with
 * libbpf's own usdt.bpf.h (bpf_usdt_arg, bpf_usdt_arg_cnt,
 * bpf_usdt_cookie), unmodified. */
#define __TARGET_ARCH_x86
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

char _license[] SEC("license") = "GPL";

long consts_hits, consts_a, consts_b, consts_c, consts_cnt;
long regs_hits, regs_a, regs_b, regs_c, regs_d, regs_cookie;
long mem_hits, mem_a, mem_b, mem_c, mem_d, mem_bad_arg;
long guarded_hits, guarded_sum;

SEC("usdt/bpfrt_test:consts")
int BPF_USDT(on_consts, long a, long b, long c)
{
	__sync_fetch_and_add(&consts_hits, 1);
	consts_a = a;
	consts_b = b;
	consts_c = c;
	consts_cnt = bpf_usdt_arg_cnt(ctx);
	return 0;
}

SEC("usdt/bpfrt_test:regs")
int BPF_USDT(on_regs, long a, long b, long c, long d)
{
	__sync_fetch_and_add(&regs_hits, 1);
	regs_a = a;
	regs_b = b;
	regs_c = c;
	regs_d = d;
	regs_cookie = bpf_usdt_cookie(ctx);
	return 0;
}

SEC("usdt/bpfrt_test:mem")
int BPF_USDT(on_mem, long a, long b, long c, long d)
{
	long x;

	__sync_fetch_and_add(&mem_hits, 1);
	mem_a = a;
	mem_b = b;
	mem_c = c;
	mem_d = d;
	mem_bad_arg = bpf_usdt_arg(ctx, 4, &x);   /* past the last: -ENOENT */
	return 0;
}

SEC("usdt/bpfrt_test:guarded")
int BPF_USDT(on_guarded, int x)
{
	__sync_fetch_and_add(&guarded_hits, 1);
	__sync_fetch_and_add(&guarded_sum, x);
	return 0;
}
