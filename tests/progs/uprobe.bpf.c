/* Programs for tests/test_uprobe.c: uprobes and uretprobes on functions
 * built with plain gcc -O2 (tests/trace/uprobe_funcs.c), on libc and on a
 * library loaded later, written as for Linux with bpf_tracing.h. */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

/* libbpf 1.2 added these as the kprobe macros under new names (Debian
 * 12's 1.1 has only BPF_KPROBE/BPF_KRETPROBE): the same definitions. */
#ifndef BPF_UPROBE
#define BPF_UPROBE(name, args...) BPF_KPROBE(name, ##args)
#define BPF_URETPROBE(name, args...) BPF_KRETPROBE(name, ##args)
#endif

long add_hits, add_ret_hits, add_ret_sum, add_arg_sum;
long malloc_hits, free_hits, late_hits, late_ret, any_hits;
unsigned long free_watch;
long any_cookie;

SEC("uprobe/up_add")
int BPF_UPROBE(on_add, long a, long b)
{
	__sync_fetch_and_add(&add_hits, 1);
	__sync_fetch_and_add(&add_arg_sum, a + b);
	return 0;
}

SEC("uretprobe/up_add")
int BPF_URETPROBE(on_add_ret, long ret)
{
	__sync_fetch_and_add(&add_ret_hits, 1);
	__sync_fetch_and_add(&add_ret_sum, ret);
	return 0;
}

SEC("uprobe/libc.so.6:malloc")
int BPF_UPROBE(on_malloc, unsigned long size)
{
	if (size == 12345)
		__sync_fetch_and_add(&malloc_hits, 1);
	return 0;
}

SEC("uprobe/libc:free")
int BPF_UPROBE(on_free, void *p)
{
	if (free_watch && (unsigned long)p == free_watch)
		__sync_fetch_and_add(&free_hits, 1);
	return 0;
}

SEC("uretprobe/libuprobe_late.so:late_mul")
int BPF_URETPROBE(on_late_ret, long ret)
{
	__sync_fetch_and_add(&late_hits, 1);
	late_ret = ret;
	return 0;
}

long fib_entries, fib_rets, fib_last_ret;

SEC("uprobe/up_fib")
int BPF_UPROBE(on_fib, long n)
{
	__sync_fetch_and_add(&fib_entries, 1);
	return 0;
}

SEC("uretprobe/up_fib")
int BPF_URETPROBE(on_fib_ret, long ret)
{
	__sync_fetch_and_add(&fib_rets, 1);
	fib_last_ret = ret;
	return 0;
}

/* attached by hand (bpfrt_uprobe_attach) */
SEC("uprobe")
int on_any(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&any_hits, 1);
	any_cookie = bpf_get_attach_cookie(ctx);
	return 0;
}
