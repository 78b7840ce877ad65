/* Scalar tracking: bounds through ALU operations and branch refinement.
 *
 * A scalar carries a tnum (known bits) and four ranges: unsigned and
 * signed, over all 64 bits and over the low 32 bits. Every operation
 * computes what it can for one view and vreg_bounds_sync() then tightens
 * each view from the others until they agree. Everything is an
 * over-approximation: a concrete value the program may compute always lies
 * inside every view. */
#include "verifier/vstate.h"

#include <string.h>

#define U32_MAXV 0xffffffffull

void vreg_mark_unknown(struct vreg *r)
{
	memset(r, 0, sizeof(*r));
	r->type = SCALAR;
	r->var_off = TNUM_UNKNOWN;
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
	r->umin = 0;
	r->umax = UINT64_MAX;
	r->s32min = INT32_MIN;
	r->s32max = INT32_MAX;
	r->u32min = 0;
	r->u32max = UINT32_MAX;
}

/* Sets the value (of a scalar) or the variable offset (of a pointer). */
void vreg_mark_const(struct vreg *r, uint64_t v)
{
	r->var_off = tnum_const(v);
	r->smin = r->smax = (int64_t)v;
	r->umin = r->umax = v;
	r->s32min = r->s32max = (int32_t)(uint32_t)v;
	r->u32min = r->u32max = (uint32_t)v;
	r->id = 0;
}

void vreg_mark_const32(struct vreg *r, uint32_t v)
{
	vreg_mark_const(r, v);
}

bool vreg_is_const(const struct vreg *r)
{
	return tnum_is_const(r->var_off);
}

static void unknown64(struct vreg *r)
{
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
	r->umin = 0;
	r->umax = UINT64_MAX;
}

static void unknown32(struct vreg *r)
{
	r->s32min = INT32_MIN;
	r->s32max = INT32_MAX;
	r->u32min = 0;
	r->u32max = UINT32_MAX;
}

static int64_t max_s(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min_s(int64_t a, int64_t b) { return a < b ? a : b; }
static uint64_t max_u(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min_u(uint64_t a, uint64_t b) { return a < b ? a : b; }

static void sync_from_tnum(struct vreg *r)
{
	const uint64_t sign = 1ull << 63;
	struct tnum s = tnum_subreg(r->var_off);
	uint64_t v = r->var_off.value, m = r->var_off.mask;

	r->umin = max_u(r->umin, v);
	r->umax = min_u(r->umax, v | m);
	r->smin = max_s(r->smin, (int64_t)(v | (m & sign)));
	r->smax = min_s(r->smax, (int64_t)(v | (m & ~sign)));
	r->u32min = (uint32_t)max_u(r->u32min, s.value);
	r->u32max = (uint32_t)min_u(r->u32max, s.value | s.mask);
	r->s32min = (int32_t)max_s(r->s32min,
				   (int32_t)(uint32_t)(s.value | (s.mask & 0x80000000u)));
	r->s32max = (int32_t)min_s(r->s32max,
				   (int32_t)(uint32_t)(s.value | (s.mask & 0x7fffffffu)));
}

static void sync_sign32(struct vreg *r)
{
	/* an unsigned range on one side of the sign bit is a signed one too */
	if ((int32_t)r->u32min <= (int32_t)r->u32max) {
		r->s32min = (int32_t)max_s(r->s32min, (int32_t)r->u32min);
		r->s32max = (int32_t)min_s(r->s32max, (int32_t)r->u32max);
	}
	if (r->s32min >= 0 || r->s32max < 0) {
		r->u32min = (uint32_t)max_u(r->u32min, (uint32_t)r->s32min);
		r->u32max = (uint32_t)min_u(r->u32max, (uint32_t)r->s32max);
	}
}

static void sync_sign64(struct vreg *r)
{
	if ((int64_t)r->umin <= (int64_t)r->umax) {
		r->smin = max_s(r->smin, (int64_t)r->umin);
		r->smax = min_s(r->smax, (int64_t)r->umax);
	}
	if (r->smin >= 0 || r->smax < 0) {
		r->umin = max_u(r->umin, (uint64_t)r->smin);
		r->umax = min_u(r->umax, (uint64_t)r->smax);
	}
}

/* The 64-bit range within one 4 GiB block fixes the low half's range. */
static void sync_64_to_32(struct vreg *r)
{
	if ((r->umin >> 32) == (r->umax >> 32)) {
		r->u32min = (uint32_t)max_u(r->u32min, (uint32_t)r->umin);
		r->u32max = (uint32_t)min_u(r->u32max, (uint32_t)r->umax);
	}
	if ((r->smin >> 32) == (r->smax >> 32) && (int32_t)r->smin <= (int32_t)r->smax) {
		r->s32min = (int32_t)max_s(r->s32min, (int32_t)r->smin);
		r->s32max = (int32_t)min_s(r->s32max, (int32_t)r->smax);
	}
}

/* Known upper half: the low half's range bounds the whole. */
static void sync_32_to_64(struct vreg *r)
{
	uint64_t hi_mask = r->var_off.mask >> 32, hi = r->var_off.value & ~U32_MAXV;

	if (hi_mask)
		return;
	r->umin = max_u(r->umin, hi | r->u32min);
	r->umax = min_u(r->umax, hi | r->u32max);
	if (!hi && r->s32min >= 0) {
		r->smin = max_s(r->smin, r->s32min);
		r->smax = min_s(r->smax, r->s32max);
	}
}

static void tnum_from_bounds(struct vreg *r)
{
	struct tnum t = tnum_intersect(r->var_off, tnum_range(r->umin, r->umax));
	struct tnum s = tnum_intersect(tnum_subreg(t), tnum_range(r->u32min, r->u32max));

	r->var_off = tnum_with_subreg(t, s);
}

void vreg_bounds_sync(struct vreg *r)
{
	for (int i = 0; i < 2; i++) {
		sync_from_tnum(r);
		sync_sign32(r);
		sync_sign64(r);
		sync_64_to_32(r);
		sync_32_to_64(r);
		sync_sign32(r);
		sync_sign64(r);
		tnum_from_bounds(r);
	}
}

void vreg_bounds_from_var_off(struct vreg *r)
{
	unknown64(r);
	unknown32(r);
	vreg_bounds_sync(r);
}

static bool bounds_sane(const struct vreg *r)
{
	return r->umin <= r->umax && r->smin <= r->smax && r->u32min <= r->u32max &&
	       r->s32min <= r->s32max && !(r->var_off.value & r->var_off.mask) &&
	       tnum_umin(r->var_off) <= r->umax && tnum_umax(r->var_off) >= r->umin;
}

void vreg_zext32(struct vreg *r)
{
	r->var_off = tnum_subreg(r->var_off);
	r->umin = r->u32min;
	r->umax = r->u32max;
	r->smin = r->u32min;
	r->smax = r->u32max;
	r->id = 0;
	vreg_bounds_sync(r);
}

void vreg_coerce(struct vreg *r, unsigned size)
{
	uint64_t mask;

	if (size >= 8)
		return;
	mask = (1ull << (size * 8)) - 1;
	if (r->umax <= mask) {
		/* already fits: nothing lost */
		return;
	}
	r->var_off = tnum_cast(r->var_off, size);
	unknown64(r);
	unknown32(r);
	r->umax = mask;
	r->id = 0;
	vreg_bounds_sync(r);
}

void vreg_set_range(struct vreg *r, int64_t smin, int64_t smax)
{
	r->smin = smin;
	r->smax = smax;
	vreg_bounds_sync(r);
}

void vreg_set_urange(struct vreg *r, uint64_t umin, uint64_t umax)
{
	r->umin = umin;
	r->umax = umax;
	vreg_bounds_sync(r);
}

void vreg_mark_load(struct vreg *r, unsigned size, bool sext)
{
	vreg_mark_unknown(r);
	if (size >= 8)
		return;
	r->var_off = tnum_range(0, (1ull << (size * 8)) - 1);
	r->umax = (1ull << (size * 8)) - 1;
	vreg_bounds_sync(r);
	if (sext)
		vscalar_sext(r, size * 8, true);
}

/* Sign extension of the low `bits` to 64 (or 32, then zero-extended). */
void vscalar_sext(struct vreg *r, unsigned bits, bool is64)
{
	uint64_t lo_mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
	uint64_t sign = 1ull << (bits - 1);

	if (tnum_is_const(r->var_off)) {
		uint64_t v = r->var_off.value & lo_mask;

		if (v & sign)
			v |= ~lo_mask;
		if (!is64)
			v &= U32_MAXV;
		vreg_mark_const(r, v);
		return;
	}
	if (r->umax <= lo_mask >> 1 && bits < 64) {
		/* the sign bit is clear: the value is unchanged */
		if (!is64)
			vreg_zext32(r);
		return;
	}
	vreg_mark_unknown(r);
	if (bits < 64) {
		r->smin = -(int64_t)sign;
		r->smax = (int64_t)(sign - 1);
	}
	vreg_bounds_sync(r);
	if (!is64)
		vreg_zext32(r);
}

/* ---- ALU ----------------------------------------------------------------------------- */

/* One view of a scalar at a width (64, or 32 with values in the low half). */
struct view {
	uint64_t umin, umax;
	int64_t smin, smax;
	struct tnum t;
	unsigned bits;
};

static struct view view_of(const struct vreg *r, bool is64)
{
	if (is64)
		return (struct view){ r->umin, r->umax, r->smin, r->smax, r->var_off, 64 };
	return (struct view){ r->u32min, r->u32max, r->s32min, r->s32max,
			      tnum_subreg(r->var_off), 32 };
}

static uint64_t vmask(const struct view *v)
{
	return v->bits == 64 ? ~0ull : U32_MAXV;
}

static int64_t vsmin(const struct view *v)
{
	return v->bits == 64 ? INT64_MIN : INT32_MIN;
}

static int64_t vsmax(const struct view *v)
{
	return v->bits == 64 ? INT64_MAX : INT32_MAX;
}

static void view_unknown_s(struct view *v)
{
	v->smin = vsmin(v);
	v->smax = vsmax(v);
}

static void view_unknown_u(struct view *v)
{
	v->umin = 0;
	v->umax = vmask(v);
}

static bool add_overflows(int64_t a, int64_t b, int64_t *res, unsigned bits)
{
	if (__builtin_add_overflow(a, b, res))
		return true;
	return bits == 32 && (*res < INT32_MIN || *res > INT32_MAX);
}

static bool sub_overflows(int64_t a, int64_t b, int64_t *res, unsigned bits)
{
	if (__builtin_sub_overflow(a, b, res))
		return true;
	return bits == 32 && (*res < INT32_MIN || *res > INT32_MAX);
}

static void view_add(struct view *d, const struct view *s)
{
	int64_t lo, hi;
	uint64_t ulo = d->umin + s->umin, uhi = d->umax + s->umax;

	if (add_overflows(d->smin, s->smin, &lo, d->bits) ||
	    add_overflows(d->smax, s->smax, &hi, d->bits))
		view_unknown_s(d);
	else
		d->smin = lo, d->smax = hi;
	if ((d->bits == 64 && (uhi < d->umax || ulo < d->umin)) ||
	    (d->bits == 32 && uhi > U32_MAXV))
		view_unknown_u(d);
	else
		d->umin = ulo, d->umax = uhi;
	d->t = tnum_add(d->t, s->t);
}

static void view_sub(struct view *d, const struct view *s)
{
	int64_t lo, hi;

	if (sub_overflows(d->smin, s->smax, &lo, d->bits) ||
	    sub_overflows(d->smax, s->smin, &hi, d->bits))
		view_unknown_s(d);
	else
		d->smin = lo, d->smax = hi;
	if (d->umin < s->umax)
		view_unknown_u(d);
	else
		d->umin -= s->umax, d->umax -= s->umin;
	d->t = tnum_sub(d->t, s->t);
}

static void view_mul(struct view *d, const struct view *s)
{
	uint64_t half = d->bits == 64 ? U32_MAXV : 0xffff;

	d->t = tnum_mul(d->t, s->t);
	if (d->umax > half || s->umax > half) {
		view_unknown_u(d);
		view_unknown_s(d);
		return;
	}
	d->umin *= s->umin;
	d->umax *= s->umax;
	if (d->smin >= 0 && s->smin >= 0 && (int64_t)d->umax <= vsmax(d)) {
		d->smin = (int64_t)d->umin;
		d->smax = (int64_t)d->umax;
	} else {
		view_unknown_s(d);
	}
}

static bool view_const(const struct view *v)
{
	return tnum_is_const(v->t);
}

static void view_from_urange(struct view *d, uint64_t lo, uint64_t hi)
{
	d->umin = lo;
	d->umax = hi;
	d->t = tnum_range(lo, hi);
	view_unknown_s(d);
}

static void view_shift(struct view *d, const struct view *s, uint8_t op)
{
	uint64_t k;

	if (!view_const(s) || s->t.value >= d->bits) {
		/* variable shifts: only the width is known */
		d->t = TNUM(0, vmask(d));
		view_unknown_u(d);
		view_unknown_s(d);
		return;
	}
	k = s->t.value;
	switch (op) {
	case BPF_LSH:
		d->t = tnum_cast(tnum_lshift(d->t, (unsigned)k), d->bits / 8);
		if (k && d->umax > (vmask(d) >> k))
			view_unknown_u(d);
		else
			d->umin <<= k, d->umax <<= k;
		view_unknown_s(d);
		break;
	case BPF_RSH:
		d->t = tnum_rshift(d->t, (unsigned)k);
		d->umin >>= k;
		d->umax >>= k;
		view_unknown_s(d);
		break;
	default: /* BPF_ARSH */
		d->t = tnum_cast(tnum_arshift(d->t, (unsigned)k, d->bits), d->bits / 8);
		d->smin >>= k;
		d->smax >>= k;
		view_unknown_u(d);
		break;
	}
}

static uint64_t bswap_const(uint64_t v, int width, bool to_be)
{
	if (!to_be) /* host is little-endian: le truncates */
		return width == 64 ? v : v & ((1ull << width) - 1);
	switch (width) {
	case 16: return __builtin_bswap16((uint16_t)v);
	case 32: return __builtin_bswap32((uint32_t)v);
	default: return __builtin_bswap64(v);
	}
}

static void do_end(struct vreg *dst, const struct bpf_insn *insn, bool is64)
{
	int width = insn->imm;
	bool to_be = is64 || insn_src(insn) == BPF_TO_BE; /* ALU64 END is bswap */

	if (vreg_is_const(dst)) {
		vreg_mark_const(dst, bswap_const(dst->var_off.value, width, to_be));
		return;
	}
	if (!to_be) {
		if (width < 64)
			vreg_coerce(dst, (unsigned)width / 8);
		if (width == 32)
			vreg_zext32(dst);
		return;
	}
	vreg_mark_unknown(dst);
	if (width < 64) {
		dst->var_off = tnum_range(0, (1ull << width) - 1);
		dst->umax = (1ull << width) - 1;
		vreg_bounds_sync(dst);
	}
}

static void const_fold(struct vreg *dst, uint64_t a, uint64_t b, uint8_t op, bool is64,
		       bool sign)
{
	uint64_t r;

	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	switch (op) {
	case BPF_ADD: r = a + b; break;
	case BPF_SUB: r = a - b; break;
	case BPF_MUL: r = a * b; break;
	case BPF_OR:  r = a | b; break;
	case BPF_AND: r = a & b; break;
	case BPF_XOR: r = a ^ b; break;
	case BPF_LSH: r = a << (b & (is64 ? 63 : 31)); break;
	case BPF_RSH: r = a >> (b & (is64 ? 63 : 31)); break;
	case BPF_ARSH:
		r = is64 ? (uint64_t)((int64_t)a >> (b & 63))
			 : (uint32_t)((int32_t)(uint32_t)a >> (b & 31));
		break;
	case BPF_DIV:
		if (!b)
			r = 0;
		else if (!sign)
			r = a / b;
		else if (is64)
			r = ((int64_t)b == -1) ? (uint64_t)0 - a : (uint64_t)((int64_t)a / (int64_t)b);
		else
			r = ((int32_t)b == -1) ? (uint32_t)(0 - (uint32_t)a)
					       : (uint32_t)((int32_t)a / (int32_t)b);
		break;
	case BPF_MOD:
		if (!b)
			r = a;
		else if (!sign)
			r = a % b;
		else if (is64)
			r = ((int64_t)b == -1) ? 0 : (uint64_t)((int64_t)a % (int64_t)b);
		else
			r = ((int32_t)b == -1) ? 0 : (uint32_t)((int32_t)a % (int32_t)b);
		break;
	default: /* NEG */
		r = 0 - a;
		break;
	}
	if (!is64)
		r = (uint32_t)r;
	vreg_mark_const(dst, r);
}

int vscalar_alu(struct venv *env, const struct bpf_insn *insn, struct vreg *dst,
		const struct vreg *src, bool is64)
{
	uint8_t op = insn_op(insn);
	bool sign = (op == BPF_DIV || op == BPF_MOD) && insn->off == 1;
	struct view d, s;

	(void)env;
	dst->id = 0;
	if (op == BPF_END) {
		do_end(dst, insn, is64);
		return 0;
	}
	if (vreg_is_const(dst) && (op == BPF_NEG || (src && vreg_is_const(src)))) {
		const_fold(dst, dst->var_off.value, src ? src->var_off.value : 0, op, is64, sign);
		return 0;
	}
	d = view_of(dst, is64);
	if (src)
		s = view_of(src, is64);
	switch (op) {
	case BPF_ADD:
		view_add(&d, &s);
		break;
	case BPF_SUB:
		view_sub(&d, &s);
		break;
	case BPF_MUL:
		view_mul(&d, &s);
		break;
	case BPF_AND:
		d.t = tnum_and(d.t, s.t);
		view_from_urange(&d, d.t.value, min_u(min_u(d.umax, s.umax), tnum_umax(d.t)));
		break;
	case BPF_OR:
		d.t = tnum_or(d.t, s.t);
		d.umin = max_u(max_u(d.umin, s.umin), d.t.value);
		d.umax = tnum_umax(d.t);
		view_unknown_s(&d);
		break;
	case BPF_XOR:
		d.t = tnum_xor(d.t, s.t);
		view_from_urange(&d, d.t.value, tnum_umax(d.t));
		break;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH:
		view_shift(&d, &s, op);
		break;
	case BPF_DIV:
		if (sign)
			goto unknown;
		view_from_urange(&d, view_const(&s) && s.t.value ? d.umin / s.t.value : 0,
				 view_const(&s) && s.t.value ? d.umax / s.t.value : d.umax);
		break;
	case BPF_MOD:
		if (sign)
			goto unknown;
		if (s.umin > 0)
			view_from_urange(&d, 0, min_u(d.umax, s.umax - 1));
		else
			view_from_urange(&d, 0, d.umax);
		break;
	default: /* NEG, anything else */
		goto unknown;
	}
	goto done;
unknown:
	d.t = TNUM(0, vmask(&d));
	view_unknown_u(&d);
	view_unknown_s(&d);
done:
	if (is64) {
		dst->var_off = d.t;
		dst->umin = d.umin, dst->umax = d.umax;
		dst->smin = d.smin, dst->smax = d.smax;
		unknown32(dst);
	} else {
		dst->var_off = tnum_subreg(d.t);
		dst->u32min = (uint32_t)d.umin, dst->u32max = (uint32_t)d.umax;
		dst->s32min = (int32_t)d.smin, dst->s32max = (int32_t)d.smax;
		dst->umin = d.umin, dst->umax = d.umax;
		dst->smin = 0, dst->smax = (int64_t)U32_MAXV;
		unknown64(dst);
		dst->umax = U32_MAXV;
	}
	vreg_bounds_sync(dst);
	if (!bounds_sane(dst)) /* never expected; stay sound */
		vreg_mark_unknown(dst), dst->var_off = is64 ? TNUM_UNKNOWN : TNUM(0, U32_MAXV),
			vreg_bounds_sync(dst);
	return 0;
}

/* ---- branches ---------------------------------------------------------------------------- */

static uint8_t negate_op(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return BPF_JNE;
	case BPF_JNE: return BPF_JEQ;
	case BPF_JGT: return BPF_JLE;
	case BPF_JGE: return BPF_JLT;
	case BPF_JLT: return BPF_JGE;
	case BPF_JLE: return BPF_JGT;
	case BPF_JSGT: return BPF_JSLE;
	case BPF_JSGE: return BPF_JSLT;
	case BPF_JSLT: return BPF_JSGE;
	case BPF_JSLE: return BPF_JSGT;
	default: return op; /* JSET: handled by its caller */
	}
}

/* 1 if `a op b` holds for every pair of values, 0 if for none, else -1. */
static int view_taken(const struct view *a, const struct view *b, uint8_t op)
{
	switch (op) {
	case BPF_JEQ:
		if (view_const(a) && view_const(b))
			return a->t.value == b->t.value;
		if (a->umin > b->umax || a->umax < b->umin || a->smin > b->smax ||
		    a->smax < b->smin)
			return 0;
		if ((a->t.value ^ b->t.value) & ~(a->t.mask | b->t.mask))
			return 0;
		return -1;
	case BPF_JNE: {
		int r = view_taken(a, b, BPF_JEQ);

		return r < 0 ? r : !r;
	}
	case BPF_JSET:
		if (a->t.value & b->t.value)
			return 1;
		if (!((a->t.value | a->t.mask) & (b->t.value | b->t.mask)))
			return 0;
		return -1;
	case BPF_JGT:
		return a->umin > b->umax ? 1 : a->umax <= b->umin ? 0 : -1;
	case BPF_JGE:
		return a->umin >= b->umax ? 1 : a->umax < b->umin ? 0 : -1;
	case BPF_JLT:
		return a->umax < b->umin ? 1 : a->umin >= b->umax ? 0 : -1;
	case BPF_JLE:
		return a->umax <= b->umin ? 1 : a->umin > b->umax ? 0 : -1;
	case BPF_JSGT:
		return a->smin > b->smax ? 1 : a->smax <= b->smin ? 0 : -1;
	case BPF_JSGE:
		return a->smin >= b->smax ? 1 : a->smax < b->smin ? 0 : -1;
	case BPF_JSLT:
		return a->smax < b->smin ? 1 : a->smin >= b->smax ? 0 : -1;
	case BPF_JSLE:
		return a->smax <= b->smin ? 1 : a->smin > b->smax ? 0 : -1;
	default:
		return -1;
	}
}

int vscalar_branch_taken(const struct vreg *a, const struct vreg *b, uint8_t op, bool is32)
{
	struct view va = view_of(a, !is32), vb = view_of(b, !is32);

	return view_taken(&va, &vb, op);
}

/* Applies `a op b` (known to hold) to both views. */
static void view_refine(struct view *a, struct view *b, uint8_t op)
{
	switch (op) {
	case BPF_JEQ: {
		uint64_t ulo = max_u(a->umin, b->umin), uhi = min_u(a->umax, b->umax);
		int64_t slo = max_s(a->smin, b->smin), shi = min_s(a->smax, b->smax);
		struct tnum t = tnum_intersect(a->t, b->t);

		a->umin = b->umin = ulo;
		a->umax = b->umax = uhi;
		a->smin = b->smin = slo;
		a->smax = b->smax = shi;
		a->t = b->t = t;
		break;
	}
	case BPF_JNE:
		if (view_const(b)) {
			if (a->umin == b->t.value && a->umin < a->umax)
				a->umin++;
			else if (a->umax == b->t.value && a->umax > a->umin)
				a->umax--;
			if (a->smin == (int64_t)b->t.value && a->smin < a->smax)
				a->smin++;
			else if (a->smax == (int64_t)b->t.value && a->smax > a->smin)
				a->smax--;
		} else if (view_const(a)) {
			view_refine(b, a, BPF_JNE);
		}
		break;
	case BPF_JSET:
		if (view_const(b) && b->t.value && !(b->t.value & (b->t.value - 1)))
			a->t = tnum_or(a->t, b->t); /* the one bit is set */
		break;
	case BPF_JGT:
		if (b->umin == vmask(b))
			a->umin = 1, a->umax = 0; /* infeasible */
		else
			a->umin = max_u(a->umin, b->umin + 1);
		if (a->umax == 0)
			b->umin = 1, b->umax = 0;
		else
			b->umax = min_u(b->umax, a->umax - 1);
		break;
	case BPF_JGE:
		a->umin = max_u(a->umin, b->umin);
		b->umax = min_u(b->umax, a->umax);
		break;
	case BPF_JLT:
		view_refine(b, a, BPF_JGT);
		break;
	case BPF_JLE:
		view_refine(b, a, BPF_JGE);
		break;
	case BPF_JSGT:
		if (b->smin == vsmax(b))
			a->smin = 1, a->smax = 0;
		else
			a->smin = max_s(a->smin, b->smin + 1);
		if (a->smax == vsmin(a))
			b->smin = 1, b->smax = 0;
		else
			b->smax = min_s(b->smax, a->smax - 1);
		break;
	case BPF_JSGE:
		a->smin = max_s(a->smin, b->smin);
		b->smax = min_s(b->smax, a->smax);
		break;
	case BPF_JSLT:
		view_refine(b, a, BPF_JSGT);
		break;
	case BPF_JSLE:
		view_refine(b, a, BPF_JSGE);
		break;
	}
}

static void view_store(struct vreg *r, const struct view *v, bool is64)
{
	if (is64) {
		r->umin = v->umin, r->umax = v->umax;
		r->smin = v->smin, r->smax = v->smax;
		r->var_off = tnum_intersect(r->var_off, v->t);
	} else {
		r->u32min = (uint32_t)v->umin, r->u32max = (uint32_t)v->umax;
		r->s32min = (int32_t)v->smin, r->s32max = (int32_t)v->smax;
		r->var_off = tnum_with_subreg(r->var_off,
					      tnum_intersect(tnum_subreg(r->var_off), v->t));
	}
}

static bool view_sane(const struct view *v)
{
	return v->umin <= v->umax && v->smin <= v->smax && !(v->t.value & v->t.mask) &&
	       tnum_umin(v->t) <= v->umax;
}

bool vscalar_refine(struct vreg *a, struct vreg *b, uint8_t op, bool is32, bool taken)
{
	struct view va = view_of(a, !is32), vb = view_of(b, !is32);

	if (!taken && op == BPF_JSET) {
		/* no common bits: a constant mask's bits are clear in a */
		if (view_const(&vb))
			va.t = tnum_and(va.t, TNUM(~vb.t.value, 0));
		else if (view_const(&va))
			vb.t = tnum_and(vb.t, TNUM(~va.t.value, 0));
	} else {
		view_refine(&va, &vb, taken ? op : negate_op(op));
	}
	if (!view_sane(&va) || !view_sane(&vb))
		return false;
	view_store(a, &va, !is32);
	view_store(b, &vb, !is32);
	vreg_bounds_sync(a);
	vreg_bounds_sync(b);
	return bounds_sane(a) && bounds_sane(b);
}

bool vscalar_range_within(const struct vreg *old, const struct vreg *cur)
{
	return old->smin <= cur->smin && old->smax >= cur->smax &&
	       old->umin <= cur->umin && old->umax >= cur->umax &&
	       tnum_in(old->var_off, cur->var_off);
}
