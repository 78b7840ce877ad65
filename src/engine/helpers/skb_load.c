/* The legacy packet loads' helper and the per-thread packet record
 * (skb_load.h). */
#include "helpers/skb_load.h"

#include <errno.h>
#include <stddef.h>

/* Linux's SKF_NET_OFF and SKF_LL_OFF (linux/filter.h): negative offsets
 * relative to the network and the link-layer header. */
#define SKF_NET_OFF_ (-0x100000)
#define SKF_LL_OFF_  (-0x200000)

static __thread const struct bpfrt_skb_packet *cur_packet;

const struct bpfrt_skb_packet *bpfrt_skb_packet_swap(const struct bpfrt_skb_packet *p)
{
	const struct bpfrt_skb_packet *old = cur_packet;

	cur_packet = p;
	return old;
}

uint64_t bpfrt_skb_load_helper(uint64_t ctx, uint64_t off, uint64_t size, uint64_t r4,
			       uint64_t r5)
{
	const struct bpfrt_skb_packet *p = cur_packet;
	int32_t k = (int32_t)(uint32_t)off;
	int64_t at;
	uint64_t v = 0;

	(void)r4;
	(void)r5;
	if (!p || p->ctx != (const void *)(uintptr_t)ctx || (size != 1 && size != 2 && size != 4))
		return (uint64_t)-EFAULT;
	if (k >= 0)
		at = (int64_t)p->data_off + k;
	else if (k >= SKF_NET_OFF_)
		at = (int64_t)p->net_off + (k - SKF_NET_OFF_);
	else if (k >= SKF_LL_OFF_)
		at = (int64_t)(k - SKF_LL_OFF_);
	else
		return (uint64_t)-EFAULT;
	if (at < 0 || at + (int64_t)size > (int64_t)p->len)
		return (uint64_t)-EFAULT;
	for (uint64_t i = 0; i < size; i++)
		v = v << 8 | p->frame[at + (int64_t)i];
	return v;
}
