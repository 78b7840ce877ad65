/* bpf_skb_load_bytes, bpf_skb_load_bytes_relative and bpf_csum_diff with
 * Linux's semantics (include/uapi/linux/bpf.h describes them).
 *
 * The packet: the record a test run names for the context it built
 * (skb_load.h; offset 0 is skb->data, the network header for a socket
 * filter as in Linux's test runs). A context no run named (a raw run,
 * another thread's) has no packet: -EFAULT, as Linux answers an offset
 * past the end. The destination is zeroed on every error: the
 * verifier counts it written (ARG_PTR_TO_UNINIT_MEM), as Linux does. */
#include "helpers/skb.h"
#include "helpers/skb_load.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define PTR(x) ((void *)(uintptr_t)(x))

/* Copies len bytes from offset off of the packet, counted from base
 * (skb->data, or a header's start) into to; -EFAULT (to zeroed) when any
 * of them is outside it or no test run named a packet for ctx. */
static long load(uint64_t ctx, int which, uint64_t off, void *to, uint32_t len)
{
	/* this thread's record (skb_load.h): taken and put back */
	const struct bpfrt_skb_packet *p = bpfrt_skb_packet_swap(NULL);
	uint64_t base, start;

	bpfrt_skb_packet_swap(p);
	if (!p || p->ctx != PTR(ctx) || p->data_off > p->len || p->net_off > p->len)
		goto fault;
	base = which == 0 ? p->data_off : which == 1 ? 0 : p->net_off;
	start = base + (uint32_t)off;
	/* Linux takes the offset as u32 and rejects one above 0xffff */
	if ((uint32_t)off > 0xffff || start > p->len || len > p->len - start)
		goto fault;
	memcpy(to, p->frame + start, len);
	return 0;
fault:
	memset(to, 0, len);
	return -EFAULT;
}

uint64_t bpfrt_bpf_skb_load_bytes(uint64_t ctx, uint64_t off, uint64_t to, uint64_t len,
				  uint64_t r5)
{
	return (uint64_t)load(ctx, 0, off, PTR(to), (uint32_t)len);
}

/* From the MAC header (the frame's start) or the network header. */
uint64_t bpfrt_bpf_skb_load_bytes_relative(uint64_t ctx, uint64_t off, uint64_t to,
					   uint64_t len, uint64_t start_header)
{
	if (start_header != BPF_HDR_START_MAC && start_header != BPF_HDR_START_NET) {
		memset(PTR(to), 0, (uint32_t)len);
		return (uint64_t)-EINVAL;
	}
	return (uint64_t)load(ctx, start_header == BPF_HDR_START_MAC ? 1 : 2, off, PTR(to),
			      (uint32_t)len);
}

/* ---- bpf_csum_diff -------------------------------------------------------- */

/* Linux sums through a per-CPU scratch of MAX_BPF_STACK bytes: from and
 * to together may not be larger. */
#define CSUM_DIFF_MAX 512

/* The 32-bit one's-complement sum of n bytes (n a multiple of 4) added to
 * sum, taken as 32-bit words in memory order: the sum of the 16-bit
 * words, which is what the packet's checksum needs. */
static uint32_t add32(uint32_t sum, uint32_t w)
{
	sum += w;
	return sum + (sum < w); /* end-around carry */
}

static uint32_t sum_words(uint32_t sum, const uint8_t *p, uint32_t n, bool invert)
{
	for (uint32_t i = 0; i < n; i += 4) {
		uint32_t w;

		memcpy(&w, p + i, 4);
		sum = add32(sum, invert ? ~w : w);
	}
	return sum;
}

/* seed + sum(to) - sum(from), in one's complement, folded to 16 bits as
 * current Linux returns it on every architecture (older x86 kernels
 * returned the unfolded 32-bit sum, equal modulo 0xffff). */
uint64_t bpfrt_bpf_csum_diff(uint64_t from, uint64_t from_size, uint64_t to, uint64_t to_size,
			     uint64_t seed)
{
	uint32_t fs = (uint32_t)from_size, ts = (uint32_t)to_size;
	uint32_t sum = (uint32_t)seed;

	if (((fs | ts) & 3) || (uint64_t)fs + ts > CSUM_DIFF_MAX)
		return (uint64_t)-EINVAL;
	if (fs)
		sum = sum_words(sum, PTR(from), fs, true);
	if (ts)
		sum = sum_words(sum, PTR(to), ts, false);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* Linux's ENOTSUPP (524, a kernel-internal errno) */
#define ENOTSUPP_ 524

uint64_t bpfrt_bpf_csum_update(uint64_t ctx, uint64_t csum, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return (uint64_t)-ENOTSUPP_;
}
