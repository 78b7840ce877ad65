/* bpf_for_each_map_elem (for_each.c). */
#ifndef BPFRT_HELPERS_FOR_EACH_H
#define BPFRT_HELPERS_FOR_EACH_H

#include <stdint.h>

uint64_t bpfrt_bpf_for_each_map_elem(uint64_t map, uint64_t callback, uint64_t ctx,
				     uint64_t flags, uint64_t r5);

#endif
