/* The packet behind a socket filter's (or tc program's) __sk_buff, for
 * the legacy packet loads (BPF_LD | BPF_ABS / BPF_IND): the context is the
 * user-visible __sk_buff, which holds no packet pointer, so whoever builds
 * one for a run (the host's test runs) names the packet here, per thread,
 * around the run. A load from a context no record names fails (the
 * program then returns 0), so a run given some other __sk_buff reads
 * nothing it was not handed. */
#ifndef BPFRT_HELPERS_SKB_LOAD_H
#define BPFRT_HELPERS_SKB_LOAD_H

#include <stdint.h>

struct bpfrt_skb_packet {
	const void *ctx;        /* the __sk_buff the run is given */
	const uint8_t *frame;   /* the packet from its link-layer header */
	uint32_t len;           /* bytes of frame */
	uint32_t data_off;      /* where skb->data points (offset 0 of BPF_ABS) */
	uint32_t net_off;       /* the network header (SKF_NET_OFF) */
};

/* Makes p (NULL: none) this thread's record; returns the one it replaces,
 * which the caller puts back after the run (nested runs). */
const struct bpfrt_skb_packet *bpfrt_skb_packet_swap(const struct bpfrt_skb_packet *p);

/* The internal helper the rewrite calls: r1 = the context, r2 = the
 * offset (its low 32 bits, signed: SKF_NET_OFF and SKF_LL_OFF as Linux),
 * r3 = 1, 2 or 4 bytes. Returns the bytes big-endian, zero-extended, or
 * -EFAULT (out of the packet, no record for this context). */
uint64_t bpfrt_skb_load_helper(uint64_t ctx, uint64_t off, uint64_t size, uint64_t r4,
			       uint64_t r5);

#endif
