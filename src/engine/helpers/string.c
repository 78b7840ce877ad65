/* bpf_strncmp(s1, s1_sz, s2): s1 is s1_sz readable bytes (the verifier's
 * PTR_TO_MEM + CONST_SIZE), s2 a NUL-terminated string in a read-only map
 * (PTR_TO_CONST_STR), so comparing at most s1_sz bytes reads only memory
 * the verifier proved. Returns -1, 0 or 1 as Linux's strncmp (lib/string.c
 * returns the sign, not the byte difference glibc may). */
#include "helpers/string.h"

#include <stddef.h>

uint64_t bpfrt_bpf_strncmp(uint64_t s1, uint64_t s1_sz, uint64_t s2, uint64_t r4, uint64_t r5)
{
	const unsigned char *a = (const unsigned char *)(uintptr_t)s1;
	const unsigned char *b = (const unsigned char *)(uintptr_t)s2;

	for (size_t i = 0; i < (uint32_t)s1_sz; i++) {
		if (a[i] != b[i])
			return a[i] < b[i] ? (uint64_t)-1 : 1;
		if (!a[i])
			break;
	}
	return 0;
}
