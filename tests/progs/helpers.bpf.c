/* The Linux helpers a tracing program uses, each writing what it saw into
 * globals for the test to check: clocks, random numbers, CPU, pid/tgid,
 * comm, bpf_printk, probe reads and bpf_loop. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u64 mono[2], boot[2];
__u32 rnd[16];
__u32 cpu;
__u64 pid_tgid;
char comm[16];
long comm_rc;

SEC("tp/bpfrt/clocks")
int clocks(void *ctx)
{
	mono[0] = bpf_ktime_get_ns();
	boot[0] = bpf_ktime_get_boot_ns();
	mono[1] = bpf_ktime_get_ns();
	boot[1] = bpf_ktime_get_boot_ns();
	return 0;
}

SEC("tp/bpfrt/random")
int random(void *ctx)
{
	for (int i = 0; i < 16; i++)
		rnd[i] = bpf_get_prandom_u32();
	return 0;
}

SEC("tp/bpfrt/whoami")
int whoami(void *ctx)
{
	cpu = bpf_get_smp_processor_id();
	pid_tgid = bpf_get_current_pid_tgid();
	comm_rc = bpf_get_current_comm(comm, sizeof(comm));
	return 0;
}

int printk_value = 42;

SEC("tp/bpfrt/printk")
int printk(void *ctx)
{
	char word[] = "world";

	bpf_printk("progs: hello %d %s", printk_value, word);
	/* more than three arguments: bpf_trace_vprintk */
	bpf_printk("progs: four %d %d %d %u", 1, 2, 3, printk_value);
	return 0;
}

/* Probe reads: the test points src at good or bad memory; dst is left as
 * the helper wrote it, together with the helper's return value. */
__u64 src;
__u32 len = 16;
char dst_user[16], dst_kernel[16], dst_user_str[16], dst_kernel_str[16];
long rc_user, rc_kernel, rc_user_str, rc_kernel_str;

SEC("tp/bpfrt/probe")
int probe(void *ctx)
{
	const void *p = (const void *)src;

	rc_user = bpf_probe_read_user(dst_user, sizeof(dst_user), p);
	rc_kernel = bpf_probe_read_kernel(dst_kernel, sizeof(dst_kernel), p);
	rc_user_str = bpf_probe_read_user_str(dst_user_str, sizeof(dst_user_str), p);
	rc_kernel_str = bpf_probe_read_kernel_str(dst_kernel_str, sizeof(dst_kernel_str), p);
	return 0;
}

/* bpf_loop: sums i over the iterations and breaks once i reaches stop_at. */
struct loop_ctx {
	__u64 sum;
	__u32 stop_at;
	__u32 calls;
};

__u32 loop_nr = 100, loop_stop_at = 10;
long loop_rc, loop_bad_flags_rc;
__u64 loop_sum;
__u32 loop_calls;

static long loop_body(__u64 i, void *data)
{
	struct loop_ctx *lc = data;

	lc->calls++;
	lc->sum += i;
	return i >= lc->stop_at;   /* 1: stop */
}

SEC("tp/bpfrt/loop")
int loop(void *ctx)
{
	struct loop_ctx lc = { .stop_at = loop_stop_at };

	loop_rc = bpf_loop(loop_nr, loop_body, &lc, 0);
	loop_sum = lc.sum;
	loop_calls = lc.calls;
	loop_bad_flags_rc = bpf_loop(1, loop_body, &lc, 1);
	return 0;
}
