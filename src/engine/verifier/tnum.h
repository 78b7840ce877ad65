/* Tristate numbers: a 64-bit value whose bits are each 0, 1 or unknown.
 * value holds the known-one bits, mask the unknown ones (value & mask is
 * always 0). The verifier tracks every scalar's bits this way next to its
 * ranges; the operations here are over-approximations (every concrete
 * result of the operation on members of the inputs is a member of the
 * output). */
#ifndef BPFRT_TNUM_H
#define BPFRT_TNUM_H

#include <stdbool.h>
#include <stdint.h>

struct tnum {
	uint64_t value;
	uint64_t mask;
};

#define TNUM(v, m) ((struct tnum){ .value = (v), .mask = (m) })
#define TNUM_UNKNOWN TNUM(0, ~0ull)

static inline struct tnum tnum_const(uint64_t v) { return TNUM(v, 0); }
static inline bool tnum_is_const(struct tnum a) { return !a.mask; }
static inline bool tnum_is_unknown(struct tnum a) { return !~a.mask; }
static inline bool tnum_equals_const(struct tnum a, uint64_t v)
{
	return tnum_is_const(a) && a.value == v;
}
/* Smallest and largest unsigned members. */
static inline uint64_t tnum_umin(struct tnum a) { return a.value; }
static inline uint64_t tnum_umax(struct tnum a) { return a.value | a.mask; }

/* Every number in [min, max]. */
struct tnum tnum_range(uint64_t min, uint64_t max);
struct tnum tnum_add(struct tnum a, struct tnum b);
struct tnum tnum_sub(struct tnum a, struct tnum b);
struct tnum tnum_and(struct tnum a, struct tnum b);
struct tnum tnum_or(struct tnum a, struct tnum b);
struct tnum tnum_xor(struct tnum a, struct tnum b);
struct tnum tnum_mul(struct tnum a, struct tnum b);
struct tnum tnum_lshift(struct tnum a, unsigned shift);
struct tnum tnum_rshift(struct tnum a, unsigned shift);
struct tnum tnum_arshift(struct tnum a, unsigned shift, unsigned bits);
/* Bits known in both: the intersection of the two sets (a and b must
 * share a member). */
struct tnum tnum_intersect(struct tnum a, struct tnum b);
/* Smallest tnum holding both sets. */
struct tnum tnum_union(struct tnum a, struct tnum b);
/* Low `size` bytes, the rest zero. */
struct tnum tnum_cast(struct tnum a, unsigned size);
/* Low and high 32-bit halves. */
static inline struct tnum tnum_subreg(struct tnum a) { return tnum_cast(a, 4); }
struct tnum tnum_with_subreg(struct tnum a, struct tnum sub);
static inline struct tnum tnum_clear_subreg(struct tnum a)
{
	return TNUM(a.value & ~0xffffffffull, a.mask & ~0xffffffffull);
}
/* Is every member of b a member of a? */
bool tnum_in(struct tnum a, struct tnum b);
/* Writes "0x..;0x.." or the constant. */
int tnum_sprint(char *buf, unsigned len, struct tnum a);

#endif
