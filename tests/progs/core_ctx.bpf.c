/* CO-RE on program contexts, as a vmlinux.h program has them: every struct
 * of linux/bpf.h carries preserve_access_index, so its context reads are
 * CO-RE relocations with no btf_custom_path to resolve them against. They
 * resolve to the UAPI layout (tests/test_core.c). */
#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)
#include <linux/bpf.h>
#pragma clang attribute pop
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* the packet's length, from a field past the start of __sk_buff */
SEC("socket")
int skb_core(struct __sk_buff *skb)
{
	return skb->len * 256 + skb->pkt_type;
}

/* the packet's first byte, through data and data_end */
SEC("xdp")
int xdp_core(struct xdp_md *x)
{
	unsigned char *data = (void *)(long)x->data, *end = (void *)(long)x->data_end;

	if (data + 1 > end)
		return 0;
	return data[0];
}
