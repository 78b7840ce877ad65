/* Verifier C corpus: XDP packet access.
 * @pkt_no_bounds_check: reject "invalid access to packet" ; linux: same
 * @pkt_bounds_checked: accept ; linux: same
 * @pkt_check_off_by_one: reject "invalid access to packet" ; linux: same
 * @pkt_write_checked: accept ; linux: same
 * @pkt_var_offset_unchecked: reject "packet" ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

SEC("xdp")
int pkt_no_bounds_check(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;

	return data[0] ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int pkt_bounds_checked(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 14 > end)
		return XDP_DROP;
	return data[13] ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int pkt_check_off_by_one(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 14 > end)
		return XDP_DROP;
	return ((volatile unsigned char *)data)[14] ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int pkt_write_checked(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 4 > end)
		return XDP_DROP;
	data[3] = 1;
	return XDP_PASS;
}

SEC("xdp")
int pkt_var_offset_unchecked(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 1 > end)
		return XDP_DROP;
	return ((volatile unsigned char *)data)[data[0]];
}
