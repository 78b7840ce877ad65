/* Verifier C corpus: context access per program kind.
 * @tp_ctx_write: reject "context is read-only" ; linux: same
 * @raw_tp_ctx_write: reject "context is read-only" ; linux: same
 * @raw_tp_ctx_read: accept ; linux: same
 * @kprobe_ctx_read: accept ; linux: same
 * @kprobe_ctx_oob: reject "invalid bpf_context access" ; linux: same
 * @raw_tp_ctx_var_offset: reject "dereference of modified ctx ptr" ; linux: same
 * @xdp_ctx_write: reject "context is read-only" ; linux: same
 * @kprobe_ctx_signed_var_offset_to_helper: accept ; linux: same
 * @kprobe_ctx_signed_var_offset_deref: reject "dereference of modified ctx ptr" ; linux: same
 * @raw_tp_ctx_as_probe_source: reject "leaks addr into helper" ; linux: accept (privileged Linux lets pointers leak (allow_ptr_leaks); bpfrt treats them like unprivileged Linux)
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

SEC("tp/bpfrt/test_event")
int tp_ctx_write(unsigned long long *ctx)
{
	*(volatile unsigned long long *)&ctx[1] = 1;
	return 0;
}

SEC("raw_tp/x")
int raw_tp_ctx_write(unsigned long long *ctx)
{
	*(volatile unsigned long long *)&ctx[0] = 1;
	return 0;
}

SEC("raw_tp/x")
int raw_tp_ctx_read(unsigned long long *ctx)
{
	return ctx[0] + ctx[1];
}

SEC("kprobe/x")
int kprobe_ctx_read(struct pt_regs *ctx)
{
	return ((unsigned long *)ctx)[14] + ((unsigned long *)ctx)[13];
}

SEC("kprobe/x")
int kprobe_ctx_oob(struct pt_regs *ctx)
{
	return *(volatile unsigned long *)((char *)ctx + 168);
}

SEC("raw_tp/x")
int raw_tp_ctx_var_offset(unsigned long long *ctx)
{
	return ctx[ctx[0] & 3];
}

SEC("xdp")
int xdp_ctx_write(struct xdp_md *ctx)
{
	*(volatile __u32 *)&ctx->data = 0;
	return XDP_PASS;
}

/* usdt.bpf.h reads a register as bpf_probe_read_kernel(ctx + reg_off),
 * reg_off a short: ctx plus a signed variable offset, handed to a helper
 * that takes any value. */
SEC("kprobe/x")
int kprobe_ctx_signed_var_offset_to_helper(struct pt_regs *ctx)
{
	short off = (short)bpf_get_prandom_u32();
	unsigned long v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (void *)ctx + off);
	return v;
}

/* The same pointer dereferenced: refused. */
SEC("kprobe/x")
int kprobe_ctx_signed_var_offset_deref(struct pt_regs *ctx)
{
	short off = (short)bpf_get_prandom_u32();

	return *(volatile long *)((void *)ctx + off);
}

/* Outside pt_regs contexts a context pointer handed to a helper as a
 * plain value stays a leak. */
SEC("raw_tp/x")
int raw_tp_ctx_as_probe_source(unsigned long long *ctx)
{
	unsigned long v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (void *)ctx + 8);
	return v;
}
