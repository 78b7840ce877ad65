/* The dynptr helpers (dynptr.c) and the layout they share with the user
 * ringbuf drain (maps/user_ringbuf.c). */
#ifndef BPFRT_HELPERS_DYNPTR_H
#define BPFRT_HELPERS_DYNPTR_H

#include "bpfrt/dynptr.h"

#include <stdbool.h>
#include <stdint.h>

void bpfrt_dynptr_init(struct bpfrt_dynptr *p, void *data, enum bpfrt_dynptr_kind kind,
		       uint32_t size, bool rdonly);
void bpfrt_dynptr_set_null(struct bpfrt_dynptr *p);
uint32_t bpfrt_dynptr_size(const struct bpfrt_dynptr *p);
bool bpfrt_dynptr_rdonly(const struct bpfrt_dynptr *p);

uint64_t bpfrt_bpf_dynptr_from_mem(uint64_t data, uint64_t size, uint64_t flags, uint64_t ptr,
				   uint64_t r5);
uint64_t bpfrt_bpf_ringbuf_reserve_dynptr(uint64_t map, uint64_t size, uint64_t flags,
					  uint64_t ptr, uint64_t r5);
uint64_t bpfrt_bpf_ringbuf_submit_dynptr(uint64_t ptr, uint64_t flags, uint64_t r3,
					 uint64_t r4, uint64_t r5);
uint64_t bpfrt_bpf_ringbuf_discard_dynptr(uint64_t ptr, uint64_t flags, uint64_t r3,
					  uint64_t r4, uint64_t r5);
uint64_t bpfrt_bpf_dynptr_read(uint64_t dst, uint64_t len, uint64_t src, uint64_t offset,
			       uint64_t flags);
uint64_t bpfrt_bpf_dynptr_write(uint64_t dst, uint64_t offset, uint64_t src, uint64_t len,
				uint64_t flags);
uint64_t bpfrt_bpf_dynptr_data(uint64_t ptr, uint64_t offset, uint64_t len, uint64_t r4,
			       uint64_t r5);

#endif
