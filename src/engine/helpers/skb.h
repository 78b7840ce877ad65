/* Linux's socket-buffer helpers that read a packet or sum bytes (skb.c):
 * bpf_skb_load_bytes (26), bpf_skb_load_bytes_relative (68) and
 * bpf_csum_diff (28). */
#ifndef BPFRT_HELPERS_SKB_H
#define BPFRT_HELPERS_SKB_H

#include <stdint.h>

uint64_t bpfrt_bpf_skb_load_bytes(uint64_t ctx, uint64_t off, uint64_t to, uint64_t len,
				  uint64_t r5);
uint64_t bpfrt_bpf_skb_load_bytes_relative(uint64_t ctx, uint64_t off, uint64_t to,
					   uint64_t len, uint64_t start_header);
/* bpf_csum_update (40): -ENOTSUPP, Linux's answer for a packet without
 * a CHECKSUM_COMPLETE sum (bpfrt's have none) */
uint64_t bpfrt_bpf_csum_update(uint64_t ctx, uint64_t csum, uint64_t r3, uint64_t r4, uint64_t r5);
uint64_t bpfrt_bpf_csum_diff(uint64_t from, uint64_t from_size, uint64_t to, uint64_t to_size,
			     uint64_t seed);

#endif
