/* Linux's string helpers (string.c). */
#ifndef BPFRT_HELPERS_STRING_H
#define BPFRT_HELPERS_STRING_H

#include <stdint.h>

uint64_t bpfrt_bpf_strncmp(uint64_t s1, uint64_t s1_sz, uint64_t s2, uint64_t r4, uint64_t r5);

uint64_t bpfrt_bpf_strtol(uint64_t buf, uint64_t buf_len, uint64_t flags, uint64_t res,
			  uint64_t r5);
uint64_t bpfrt_bpf_strtoul(uint64_t buf, uint64_t buf_len, uint64_t flags, uint64_t res,
			   uint64_t r5);

#endif
