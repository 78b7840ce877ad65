/* Verifier C corpus: sign-extending loads (ldsx, cpu v4). The loads are
 * written as inline asm so the file builds for any -mcpu.
 * @sext_ctx_signed_check_only: reject "map_value pointer" ; linux: same
 * @sext_ctx_both_checks: accept ; linux: same
 * @sext_xdp_data_pointer: reject "sign extension of packet pointers" ; linux: same
 * @sext_pkt_signed_check_only: reject "map_value pointer" ; linux: same
 * @sext_pkt_both_checks: accept ; linux: same
 * @sext_stack_signed_check_only: reject "map_value pointer" ; linux: same
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[16]);
} vals SEC(".maps");

/* *(s8 *)p and *(s32 *)p, sign-extended to 64 bits */
#define LDSX8(p) ({ long v_; asm volatile("%0 = *(s8 *)(%1 + 0)" : "=r"(v_) : "r"(p)); v_; })
#define LDSX32(p) ({ long v_; asm volatile("%0 = *(s32 *)(%1 + 0)" : "=r"(v_) : "r"(p)); v_; })

static __always_inline int value_at(long i)
{
	__u32 k = 0;
	char *v = bpf_map_lookup_elem(&vals, &k);

	if (!v)
		return 0;
	/* a signed bound only: a negative i passes */
	if (i > 15)
		return 0;
	return v[i];
}

static __always_inline int value_at_checked(long i)
{
	__u32 k = 0;
	char *v = bpf_map_lookup_elem(&vals, &k);

	if (!v || i > 15 || i < 0)
		return 0;
	return v[i];
}

/* A context byte of 0x80..0xff reads as a negative number. */
SEC("kprobe/x")
int sext_ctx_signed_check_only(struct pt_regs *ctx)
{
	return value_at(LDSX8(ctx));
}

SEC("kprobe/x")
int sext_ctx_both_checks(struct pt_regs *ctx)
{
	return value_at_checked(LDSX8(ctx));
}

/* (long)(int)ctx->data is no packet address */
SEC("xdp")
int sext_xdp_data_pointer(struct xdp_md *ctx)
{
	unsigned char *data = (unsigned char *)LDSX32(ctx);
	unsigned char *end = (void *)(long)ctx->data_end;

	if (data + 1 > end)
		return XDP_DROP;
	return data[0] ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int sext_pkt_signed_check_only(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 4 > end)
		return XDP_DROP;
	return value_at(LDSX8(data + 3)) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int sext_pkt_both_checks(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 4 > end)
		return XDP_DROP;
	return value_at_checked(LDSX8(data + 3)) ? XDP_PASS : XDP_DROP;
}

/* a spilled byte of the context, filled sign-extended */
SEC("kprobe/x")
int sext_stack_signed_check_only(struct pt_regs *ctx)
{
	volatile long slot = *(unsigned char *)ctx;

	return value_at(LDSX8(&slot));
}
