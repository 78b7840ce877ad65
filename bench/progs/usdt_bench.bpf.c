/* The USDT trigger rows' program (bench_usdt.c with bpfrt, trig-usdt in
 * bench_trigger.c with the kernel): libbpf's usdt.bpf.h unmodified; the
 * argument is read through the spec and used, so its cost is in (the
 * producers pass x >= 0: one hit per event). hits is the only .bss
 * variable: the kernel row maps .bss and reads its first word. */
#define __TARGET_ARCH_x86
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

char _license[] SEC("license") = "GPL";

long hits = 0;

SEC("usdt/bpfrt_bench:site")
int BPF_USDT(bench_usdt, long x)
{
	__sync_fetch_and_add(&hits, 1 + (x < 0));
	return 0;
}

/* The same site with no argument read: what the probe itself costs. */
SEC("usdt/bpfrt_bench:site")
int BPF_USDT(bench_usdt_noarg)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}
