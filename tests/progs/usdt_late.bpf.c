/* Programs for tests/test_usdt.c: USDT probes of libusdt_late.so
 * (tests/trace/usdt_late.c), named before the library is loaded, read
 * with libbpf's usdt.bpf.h unmodified. */
#define __TARGET_ARCH_x86
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

char _license[] SEC("license") = "GPL";

long fire_hits, fire_a, fire_b, fire_cookie;
long guarded_hits, guarded_sum;

SEC("usdt/libusdt_late.so:bpfrt_late:fire")
int BPF_USDT(on_late_fire, long a, int b)
{
	__sync_fetch_and_add(&fire_hits, 1);
	fire_a = a;
	fire_b = b;
	fire_cookie = bpf_usdt_cookie(ctx);
	return 0;
}

SEC("usdt/libusdt_late.so:bpfrt_late:guarded")
int BPF_USDT(on_late_guarded, int x)
{
	__sync_fetch_and_add(&guarded_hits, 1);
	__sync_fetch_and_add(&guarded_sum, x);
	return 0;
}
