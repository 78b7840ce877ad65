/* Programs for tests/test_test_run.c: one of every kind bpfrt loads, each
 * reading its context (or its packet) so that bpfrt_prog_test_run_opts
 * must build the right one. The return values encode what was read. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

__u32 seen_ifindex, seen_rxq;
__u64 fentry_seen, fexit_seen;
__u32 skb_len, skb_proto, skb_pkt_type, skb_ifindex, skb_mark, skb_cb0;

/* Swaps the Ethernet source and destination addresses and flips the
 * EtherType's low byte; XDP_TX when the frame was 0x0800 (IPv4), else
 * XDP_PASS. A frame shorter than its header is XDP_ABORTED. */
SEC("xdp")
int xdp_rewrite(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	int ipv4;

	seen_ifindex = ctx->ingress_ifindex;
	seen_rxq = ctx->rx_queue_index;
	if (data + 14 > end)
		return XDP_ABORTED;
	for (int i = 0; i < 6; i++) {
		unsigned char t = data[i];

		data[i] = data[i + 6];
		data[i + 6] = t;
	}
	ipv4 = data[12] == 0x08 && data[13] == 0x00;
	data[13] ^= 0xff;
	return ipv4 ? XDP_TX : XDP_PASS;
}

/* Returns the packet's byte 59 when it has 60 bytes, else 1000. */
SEC("xdp")
int xdp_byte59(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 60 > end)
		return 1000;
	return data[59];
}

/* The metadata [data_meta, data): with at least 4 bytes, writes 0x77 to
 * its byte 1 and returns its byte 0; else 1000. */
SEC("xdp")
int xdp_meta(struct xdp_md *ctx)
{
	unsigned char *meta = (void *)(long)ctx->data_meta, *data = (void *)(long)ctx->data;

	if (meta + 4 > data)
		return 1000;
	meta[1] = 0x77;
	return meta[0];
}

/* __sk_buff fields a socket filter sees (it may write cb[] only);
 * returns len and leaves cb[0] + 1 in cb[1]. */
SEC("socket")
int socket_fields(struct __sk_buff *skb)
{
	skb_len = skb->len;
	skb_proto = skb->protocol;
	skb_pkt_type = skb->pkt_type;
	skb_ifindex = skb->ifindex;
	skb_mark = skb->mark;
	skb_cb0 = skb->cb[0];
	skb->cb[1] = skb->cb[0] + 1;
	return skb->len;
}

/* args[2] + 1: reads 24 bytes of the context */
SEC("raw_tp/bpfrt_test_run")
int raw_tp_arg2(unsigned long long *ctx)
{
	return ctx[2] + 1;
}

/* the first argument after the 8-byte header: reads 16 bytes */
SEC("tp/bpfrt/test_run")
int tp_arg0(unsigned long long *ctx)
{
	return ctx[1] + 2;
}

/* fentry and fexit must return 0 (as in Linux): what they read goes to
 * a global */
SEC("fentry/test_run_target")
int fentry_arg1(unsigned long long *ctx)
{
	fentry_seen = ctx[1] + 3;
	return 0;
}

/* the return value slot after 6 arguments */
SEC("fexit/test_run_target")
int fexit_ret(unsigned long long *ctx)
{
	fexit_seen = ctx[6] + 4;
	return 0;
}

SEC("fmod_ret/test_run_target")
int fmod_ret_arg0(unsigned long long *ctx)
{
	return ctx[0] + 5;
}

SEC("fentry.multi/test_run_*")
int fentry_multi_arg5(unsigned long long *ctx)
{
	return ctx[5] + 6;
}

/* x86-64 pt_regs: di at 112, ax at 80, si at 104 */
SEC("kprobe/test_run_target")
int kprobe_di(void *ctx)
{
	return ((unsigned long *)ctx)[14] + 7;
}

SEC("kretprobe/test_run_target")
int kretprobe_ax(void *ctx)
{
	return ((unsigned long *)ctx)[10] + 8;
}

SEC("uprobe")
int uprobe_si(void *ctx)
{
	return ((unsigned long *)ctx)[13] + 9;
}

/* reads nothing of its context */
SEC("raw_tp/bpfrt_test_run")
int raw_tp_no_ctx(void *ctx)
{
	return 10;
}

SEC("syscall")
int syscall_no_ctx(void *ctx)
{
	return 11;
}
