/* Linux's string helpers (string.c). */
#ifndef BPFRT_HELPERS_STRING_H
#define BPFRT_HELPERS_STRING_H

#include <stdint.h>

uint64_t bpfrt_bpf_strncmp(uint64_t s1, uint64_t s1_sz, uint64_t s2, uint64_t r4, uint64_t r5);

#endif
