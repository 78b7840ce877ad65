/* bpf_strncmp(s1, s1_sz, s2): s1 is s1_sz readable bytes (the verifier's
 * PTR_TO_MEM + CONST_SIZE), s2 a NUL-terminated string in a read-only map
 * (PTR_TO_CONST_STR), so comparing at most s1_sz bytes reads only memory
 * the verifier proved. Returns -1, 0 or 1 as Linux's strncmp (lib/string.c
 * returns the sign, not the byte difference glibc may). */
#include "helpers/string.h"

#include <errno.h>
#include <stdbool.h>
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

/* ---- bpf_strtol (105), bpf_strtoul (106) ----------------------------------
 *
 * bpf_strtol(buf, buf_len, flags, res): Linux's semantics. flags is the
 * base (0: from the prefix, "0x" 16, "0" 8, else 10; or 8, 10, 16), no
 * other bit; leading white space and one '-' are skipped; at most 63
 * characters after them are parsed (Linux copies them to a 64-byte
 * string); the result is the number of characters consumed, -EINVAL for
 * no digits, a bad base or flags, (strtoul) a '-', -ERANGE on overflow.
 * *res is written on success and zeroed on an error (the verifier counts
 * it written, as Linux's ARG_PTR_TO_LONG). */

#define STRTOX_BASE_MASK 0x1f
#define STRTOX_MAX_DIGITS 63

/* Linux's isspace (its ctype is Latin-1: 0xa0 is a space too). */
static bool kernel_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static int digit_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return 99;
}

static long parse_u64(const char *buf, uint32_t buf_len, uint64_t flags, uint64_t *res,
		      bool *negative)
{
	const char *p = buf, *end = buf + buf_len, *s, *s_end;
	uint32_t base = (uint32_t)(flags & STRTOX_BASE_MASK);
	uint64_t val = 0;
	bool overflow = false;
	long digits = 0;

	if (flags & ~(uint64_t)STRTOX_BASE_MASK)
		return -EINVAL;
	if (base != 0 && base != 8 && base != 10 && base != 16)
		return -EINVAL;
	if (!buf_len)
		return -EINVAL;
	while (p < end && kernel_isspace((unsigned char)*p))
		p++;
	*negative = p < end && *p == '-';
	if (*negative)
		p++;
	if (p == end)
		return -EINVAL;
	s = p;
	s_end = p + ((size_t)(end - p) < STRTOX_MAX_DIGITS ? (size_t)(end - p) : STRTOX_MAX_DIGITS);
	/* the copy ends at the buffer's first NUL too */
	for (const char *q = s; q < s_end; q++)
		if (!*q) {
			s_end = q;
			break;
		}
	if (base == 0) {
		if (s < s_end && s[0] == '0')
			base = s + 2 < s_end && (s[1] | 0x20) == 'x' &&
			       digit_value((unsigned char)s[2]) < 16 ? 16 : 8;
		else
			base = 10;
	}
	if (base == 16 && s + 1 < s_end && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	for (; s + digits < s_end; digits++) {
		int d = digit_value((unsigned char)s[digits]);

		if (d >= (int)base)
			break;
		if (val > (UINT64_MAX - (uint64_t)d) / base)
			overflow = true;
		val = val * base + (uint64_t)d;
	}
	if (overflow)
		return -ERANGE;
	if (!digits)
		return -EINVAL;
	*res = val;
	return (long)(s + digits - buf);
}

uint64_t bpfrt_bpf_strtol(uint64_t buf, uint64_t buf_len, uint64_t flags, uint64_t res,
			  uint64_t r5)
{
	int64_t *out = (int64_t *)(uintptr_t)res;
	uint64_t v = 0;
	bool neg = false;
	long n = parse_u64((const char *)(uintptr_t)buf, (uint32_t)buf_len, flags, &v, &neg);

	if (n >= 0 && (neg ? (int64_t)-v > 0 : (int64_t)v < 0))
		n = -ERANGE;
	*out = n < 0 ? 0 : neg ? (int64_t)-v : (int64_t)v;
	return (uint64_t)n;
}

uint64_t bpfrt_bpf_strtoul(uint64_t buf, uint64_t buf_len, uint64_t flags, uint64_t res,
			   uint64_t r5)
{
	uint64_t *out = (uint64_t *)(uintptr_t)res;
	uint64_t v = 0;
	bool neg = false;
	long n = parse_u64((const char *)(uintptr_t)buf, (uint32_t)buf_len, flags, &v, &neg);

	if (n >= 0 && neg)
		n = -EINVAL;
	*out = n < 0 ? 0 : v;
	return (uint64_t)n;
}
