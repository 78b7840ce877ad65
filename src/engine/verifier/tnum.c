/* Tristate number arithmetic. Each operation is derived from the
 * carry/borrow structure of the operation on the two extreme members. */
#include "verifier/tnum.h"

#include <stdio.h>

struct tnum tnum_range(uint64_t min, uint64_t max)
{
	uint64_t diff = min ^ max;
	unsigned bits;
	uint64_t delta;

	if (min > max)
		return TNUM_UNKNOWN;
	if (!diff)
		return tnum_const(min);
	bits = 64 - (unsigned)__builtin_clzll(diff);
	if (bits > 63)
		return TNUM_UNKNOWN;
	delta = (1ull << bits) - 1;
	return TNUM(min & ~delta, delta);
}

struct tnum tnum_add(struct tnum a, struct tnum b)
{
	uint64_t sm = a.mask + b.mask;
	uint64_t sv = a.value + b.value;
	uint64_t sigma = sm + sv;
	uint64_t chi = sigma ^ sv;
	uint64_t mu = chi | a.mask | b.mask;

	return TNUM(sv & ~mu, mu);
}

struct tnum tnum_sub(struct tnum a, struct tnum b)
{
	uint64_t dv = a.value - b.value;
	uint64_t alpha = dv + a.mask;
	uint64_t beta = dv - b.mask;
	uint64_t chi = alpha ^ beta;
	uint64_t mu = chi | a.mask | b.mask;

	return TNUM(dv & ~mu, mu);
}

struct tnum tnum_and(struct tnum a, struct tnum b)
{
	uint64_t alpha = a.value | a.mask;
	uint64_t beta = b.value | b.mask;
	uint64_t v = a.value & b.value;

	return TNUM(v, alpha & beta & ~v);
}

struct tnum tnum_or(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value;
	uint64_t mu = a.mask | b.mask;

	return TNUM(v, mu & ~v);
}

struct tnum tnum_xor(struct tnum a, struct tnum b)
{
	uint64_t v = a.value ^ b.value;
	uint64_t mu = a.mask | b.mask;

	return TNUM(v & ~mu, mu);
}

/* Shift-and-add over the bits of a: known ones of a add b shifted, unknown
 * ones add b's bits as unknown. */
struct tnum tnum_mul(struct tnum a, struct tnum b)
{
	struct tnum acc_v = tnum_const(a.value * b.value);
	struct tnum acc_m = tnum_const(0);

	while (a.value || a.mask) {
		if (a.value & 1)
			acc_m = tnum_add(acc_m, TNUM(0, b.mask));
		else if (a.mask & 1)
			acc_m = tnum_add(acc_m, TNUM(0, b.value | b.mask));
		a = TNUM(a.value >> 1, a.mask >> 1);
		b = TNUM(b.value << 1, b.mask << 1);
	}
	return tnum_add(acc_v, acc_m);
}

struct tnum tnum_lshift(struct tnum a, unsigned shift)
{
	return TNUM(a.value << shift, a.mask << shift);
}

struct tnum tnum_rshift(struct tnum a, unsigned shift)
{
	return TNUM(a.value >> shift, a.mask >> shift);
}

struct tnum tnum_arshift(struct tnum a, unsigned shift, unsigned bits)
{
	if (bits == 32)
		return TNUM((uint32_t)((int32_t)(uint32_t)a.value >> shift),
			    (uint32_t)((int32_t)(uint32_t)a.mask >> shift));
	return TNUM((uint64_t)((int64_t)a.value >> shift),
		    (uint64_t)((int64_t)a.mask >> shift));
}

struct tnum tnum_intersect(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value;
	uint64_t mu = a.mask & b.mask;

	return TNUM(v & ~mu, mu);
}

struct tnum tnum_union(struct tnum a, struct tnum b)
{
	uint64_t mu = a.mask | b.mask | (a.value ^ b.value);

	return TNUM(a.value & ~mu, mu);
}

struct tnum tnum_cast(struct tnum a, unsigned size)
{
	uint64_t keep = size >= 8 ? ~0ull : (1ull << (size * 8)) - 1;

	return TNUM(a.value & keep, a.mask & keep);
}

struct tnum tnum_with_subreg(struct tnum a, struct tnum sub)
{
	struct tnum hi = tnum_clear_subreg(a);
	struct tnum lo = tnum_subreg(sub);

	return tnum_or(hi, lo);
}

bool tnum_in(struct tnum a, struct tnum b)
{
	if (b.mask & ~a.mask)
		return false;
	b.value &= ~a.mask;
	return a.value == b.value;
}

int tnum_sprint(char *buf, unsigned len, struct tnum a)
{
	if (tnum_is_const(a))
		return snprintf(buf, len, "%#llx", (unsigned long long)a.value);
	return snprintf(buf, len, "(%#llx; %#llx)", (unsigned long long)a.value,
			(unsigned long long)a.mask);
}
