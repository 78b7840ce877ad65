/* ALU instructions on registers (scalar arithmetic is scalar.c's; pointer
 * arithmetic and what may be done with a pointer here) and conditional
 * jumps: which way a branch goes, the refinement of both sides (scalar
 * bounds, null checks, packet ranges). */
#include "verifier/vstate.h"

#include <string.h>

/* ---- ALU ---- */

static const char *alu_name(uint8_t op)
{
	static const char *const names[16] = {
		"+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=",
		"neg", "%=", "^=", "=", "s>>=", "bswap", "?", "?",
	};
	return names[op >> 4];
}

/* ptr +/- scalar (or scalar + ptr): the pointer keeps its kind, constant
 * steps move off, variable ones its var part. */
static int ptr_arith(struct venv *env, const struct bpf_insn *insn, struct vreg *dst,
		     const struct vreg *ptr, const struct vreg *scalar)
{
	uint8_t op = insn_op(insn);
	struct vreg res = *ptr;

	if (ptr->flags & PTR_MAYBE_NULL)
		return verr(env, "R%d pointer arithmetic on %s prohibited, null-check it first",
			    insn->dst_reg, vreg_type_str(ptr));
	switch (ptr->type) {
	case CONST_PTR_TO_MAP:
	case PTR_TO_PACKET_END:
	case PTR_TO_FUNC:
	case CONST_PTR_TO_DYNPTR:
	case PTR_TO_SOCKET:
	case PTR_TO_SOCK_COMMON:
	case PTR_TO_TCP_SOCK:
		return verr(env, "R%d pointer arithmetic on %s prohibited", insn->dst_reg,
			    vreg_type_str(ptr));
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		if (!kind_has_packet(env))
			return verr(env, "R%d pointer arithmetic on pkt prohibited", insn->dst_reg);
		break;
	default:
		break;
	}
	if (scalar->smin < -MAX_VAR_OFF || scalar->smax > MAX_VAR_OFF)
		return verr(env, "R%d math between %s pointer and register with unbounded "
			    "min value is not allowed", insn->dst_reg, vreg_type_names[ptr->type]);
	if (vreg_is_const(scalar)) {
		int64_t c = (int64_t)scalar->var_off.value;
		int64_t off = op == BPF_ADD ? (int64_t)ptr->off + c : (int64_t)ptr->off - c;

		if (off < -MAX_VAR_OFF || off > MAX_VAR_OFF)
			return verr(env, "R%d pointer offset %lld is not allowed", insn->dst_reg,
				    (long long)off);
		res.off = (int32_t)off;
	} else {
		struct vreg var = *ptr, s = *scalar;
		struct bpf_insn alu = *insn;

		/* the variable parts combine like two scalars */
		var.type = SCALAR;
		s.type = SCALAR;
		alu.code = BPF_ALU64 | BPF_X | op;
		vscalar_alu(env, &alu, &var, &s, true);
		/* A ctx pointer with a variable part is never dereferenced nor
		 * passed as a context (mem.c, calls.c refuse any var_off), so
		 * a signed offset (usdt.bpf.h's ctx + reg_off, a short) may
		 * wrap its unsigned range, as Linux allows. So may a stack
		 * pointer's: every access through one is checked by its signed
		 * bounds against the frame (mem.c, stack_range), and a frame
		 * lies below r10, so its variable part is often negative
		 * (r10 + [-8, -4]). Others may not. */
		if (var.smin < -MAX_VAR_OFF || var.smax > MAX_VAR_OFF ||
		    (var.umax > (1ull << 62) && ptr->type != PTR_TO_CTX &&
		     ptr->type != PTR_TO_STACK))
			return verr(env, "R%d variable offset of %s pointer out of bounds",
				    insn->dst_reg, vreg_type_names[ptr->type]);
		res.var_off = var.var_off;
		res.smin = var.smin, res.smax = var.smax;
		res.umin = var.umin, res.umax = var.umax;
		res.s32min = var.s32min, res.s32max = var.s32max;
		res.u32min = var.u32min, res.u32max = var.u32max;
		if (is_pkt_pointer(ptr)) {
			/* a new family: nothing is known about its range yet */
			res.id = ++env->id_gen;
			res.range = 0;
		}
	}
	*dst = res;
	return 0;
}

int vdo_alu(struct venv *env, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool x = insn_src(insn) == BPF_X;
	uint8_t op = insn_op(insn);
	struct vreg *dst = reg_at(env, insn->dst_reg);
	struct vreg src;
	int err;

	if (op == BPF_MOV) {
		if (!x) {
			memset(dst, 0, sizeof(*dst));
			dst->type = SCALAR;
			if (is64)
				vreg_mark_const(dst, (uint64_t)(int64_t)insn->imm);
			else
				vreg_mark_const(dst, (uint32_t)insn->imm);
			return 0;
		}
		if ((err = vcheck_reg_init(env, insn->src_reg)))
			return err;
		src = *reg_at(env, insn->src_reg);
		if (insn->off) { /* movsx */
			if (src.type != SCALAR) {
				if ((err = vcheck_ptr_leak(env, &src, "R%d sign-extension part of "
							  "pointer", insn->src_reg)))
					return err;
				vreg_mark_unknown(dst);
				if (!is64)
					vreg_zext32(dst);
				return 0;
			}
			*dst = src;
			dst->id = 0;
			vscalar_sext(dst, (unsigned)insn->off, is64);
			return 0;
		}
		if (!is64) {
			if (src.type != SCALAR) {
				if ((err = vcheck_ptr_leak(env, &src, "R%d partial copy of pointer",
							  insn->src_reg)))
					return err;
				vreg_mark_unknown(dst); /* a pointer's low half is a number */
			} else {
				*dst = src;
				dst->id = 0;
			}
			vreg_zext32(dst);
			return 0;
		}
		if (src.type == SCALAR && !vreg_is_const(&src) && !src.id) {
			/* copies share an id so a bound learnt on one holds for both */
			src.id = ++env->id_gen;
			reg_at(env, insn->src_reg)->id = src.id;
		}
		*dst = src;
		return 0;
	}
	if ((err = vcheck_reg_init(env, insn->dst_reg)))
		return err;
	if (op == BPF_NEG || op == BPF_END) {
		if (dst->type != SCALAR) {
			if ((err = vcheck_ptr_leak(env, dst, "R%d pointer arithmetic with %s prohibited",
						  insn->dst_reg, op == BPF_NEG ? "neg" : "bswap")))
				return err;
			vreg_mark_unknown(dst); /* a number made of a pointer */
		}
		return vscalar_alu(env, insn, dst, NULL, is64);
	}
	if (x) {
		if ((err = vcheck_reg_init(env, insn->src_reg)))
			return err;
		src = *reg_at(env, insn->src_reg);
	} else {
		memset(&src, 0, sizeof(src));
		src.type = SCALAR;
		vreg_mark_const(&src, is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm);
	}
	if ((op == BPF_DIV || op == BPF_MOD) && !x && insn->imm == 0)
		return verr(env, "div by zero");
	if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) && !x &&
	    (uint32_t)insn->imm >= (is64 ? 64u : 32u))
		return verr(env, "invalid shift %d", insn->imm);
	if (dst->type == SCALAR && src.type == SCALAR)
		return vscalar_alu(env, insn, dst, &src, is64);
	if (vbtf_alu_demote(insn, dst, &src, is64))
		return vscalar_alu(env, insn, dst, &src, is64);

	/* at least one pointer */
	if (!is64) {
		/* a 32-bit subtraction makes a number of a pointer's low half
		 * (privileged Linux allows it, a pointer leak); any other
		 * 32-bit arithmetic on a pointer is refused */
		if (op == BPF_SUB && ptr_leaks_allowed(env)) {
			vreg_mark_unknown(dst);
			vreg_zext32(dst);
			return 0;
		}
		return verr(env, "R%d 32-bit pointer arithmetic prohibited", insn->dst_reg);
	}
	if (op == BPF_ADD) {
		if (is_ptr(dst) && is_ptr(&src))
			return verr(env, "R%d pointer += pointer prohibited", insn->dst_reg);
		return is_ptr(dst) ? ptr_arith(env, insn, dst, dst, &src)
				   : ptr_arith(env, insn, dst, &src, dst);
	}
	if (op == BPF_SUB) {
		if (is_ptr(dst) && is_ptr(&src)) {
			/* two of the packet's pointers (its start, end, metadata)
			 * differ by an offset into one packet, which says nothing
			 * of the address layout; any other difference does (two
			 * map values, two elements), and one of pointers of two
			 * kinds is a number only privileged programs may make
			 * (as privileged Linux) */
			if (is_pkt_family(dst) && is_pkt_family(&src)) {
				vreg_mark_unknown(dst);
				return 0;
			}
			if ((dst->type != src.type ||
			     (dst->type == PTR_TO_STACK && dst->frameno != src.frameno)) &&
			    !ptr_leaks_allowed(env))
				return verr(env, "R%d pointer -= pointer of another kind prohibited",
					    insn->dst_reg);
			if ((err = vcheck_ptr_leak(env, dst, "R%d pointer -= pointer prohibited",
						  insn->dst_reg)))
				return err;
			vreg_mark_unknown(dst);
			return 0;
		}
		if (!is_ptr(dst))
			return verr(env, "R%d tried to subtract pointer from scalar", insn->dst_reg);
		return ptr_arith(env, insn, dst, dst, &src);
	}
	return verr(env, "R%d pointer arithmetic with %s operator prohibited", insn->dst_reg,
		    alu_name(op));
}

/* ---- conditional jumps ---- */

/* Null check outcome for every register sharing the pointer's id. */
static void mark_null_outcome(struct vstate *st, uint32_t id, bool is_null)
{
	uint32_t ref = 0;

	for_each_reg(st, r, {
		if (r->id != id || !(r->flags & PTR_MAYBE_NULL))
			continue;
		if (is_null) {
			/* only the acquiring pointer's NULL was never acquired:
			 * a cast of a socket (its own id) NULL keeps the
			 * socket's reference, a dynptr slice's id is its
			 * dynptr's, which stays */
			if (r->ref_obj_id && r->ref_obj_id == id && !(r->flags & PTR_DYNPTR_SLICE))
				ref = r->ref_obj_id;
			memset(r, 0, sizeof(*r));
			r->type = SCALAR;
			vreg_mark_const(r, 0);
		} else {
			r->flags &= (uint8_t)~PTR_MAYBE_NULL;
		}
	});
	if (ref) /* NULL was never acquired */
		vrelease_ref_state(st, ref);
}

/* pkt' (off bytes past its family's variable part) lies at or before
 * its bound (right_open: before it): off bytes of the family are inside
 * (one more), for every register of the family (same type and id). */
static void set_packet_range(struct vstate *st, const struct vreg *pkt, bool right_open)
{
	int64_t range = (int64_t)pkt->off + (right_open ? 1 : 0);

	/* the family's variable part plus off must stay a packet offset */
	if (pkt->off < 0 || range > MAX_PACKET_OFF || pkt->umax > MAX_PACKET_OFF ||
	    pkt->umax + (uint64_t)pkt->off > MAX_PACKET_OFF)
		return;
	for_each_reg(st, r, {
		if (r->type == pkt->type && r->id == pkt->id && r->range < range)
			r->range = (int32_t)range;
	});
}

/* The packet's start itself, as the context gave it (Linux's
 * reg_is_init_pkt_pointer): where the metadata ends. */
static bool is_pkt_start(const struct vreg *r)
{
	return r->type == PTR_TO_PACKET && r->off == 0 && tnum_equals_const(r->var_off, 0);
}

/* Does `bound` bound `p` from above: a packet pointer by the packet's end,
 * a metadata pointer by the packet's start (its end)? */
static bool pkt_bounded_by(const struct vreg *p, const struct vreg *bound)
{
	return (p->type == PTR_TO_PACKET && bound->type == PTR_TO_PACKET_END) ||
	       (p->type == PTR_TO_PACKET_META && is_pkt_start(bound));
}

/* pkt <op> pkt_end or meta <op> data (or swapped): which side proves how
 * many bytes (both directions of each comparison: the branch where the
 * pointer is at or before its bound). */
static void packet_compare(struct venv *env, struct vstate *taken, struct vstate *fall,
			   const struct vreg *dst, const struct vreg *src, uint8_t op)
{
	bool swapped = !pkt_bounded_by(dst, src);
	const struct vreg *pkt = swapped ? src : dst;

	if (swapped) { /* end OP pkt  ==  pkt OP' end */
		switch (op) {
		case BPF_JGT: op = BPF_JLT; break;
		case BPF_JGE: op = BPF_JLE; break;
		case BPF_JLT: op = BPF_JGT; break;
		case BPF_JLE: op = BPF_JGE; break;
		}
	}
	switch (op) {
	case BPF_JGT: /* fall through: pkt <= end */
		set_packet_range(fall, pkt, false);
		break;
	case BPF_JGE: /* fall through: pkt < end */
		set_packet_range(fall, pkt, true);
		break;
	case BPF_JLT:
		set_packet_range(taken, pkt, true);
		break;
	case BPF_JLE:
		set_packet_range(taken, pkt, false);
		break;
	}
}

/* Bounds learnt on a scalar hold for its copies (same id). */
static void sync_scalar_copies(struct vstate *st, const struct vreg *known)
{
	if (!known->id || known->type != SCALAR)
		return;
	for_each_reg(st, r, {
		if (r->type == SCALAR && r->id == known->id)
			*r = *known;
	});
}

static struct vreg *state_reg(struct vstate *st, int regno)
{
	return &st->frames[st->curframe]->regs[regno];
}

static void apply_refined(struct vstate *st, const struct bpf_insn *insn, bool x,
			  const struct vreg *d, const struct vreg *s)
{
	*state_reg(st, insn->dst_reg) = *d;
	sync_scalar_copies(st, d);
	if (x) {
		*state_reg(st, insn->src_reg) = *s;
		sync_scalar_copies(st, s);
	}
}

int vdo_cond_jmp(struct venv *env, const struct bpf_insn *insn, uint32_t *next)
{
	bool is32 = insn_class(insn) == BPF_JMP32;
	bool x = insn_src(insn) == BPF_X;
	uint8_t op = insn_op(insn);
	uint32_t target = (uint32_t)insn_branch_target(insn, env->insn);
	struct vreg *dst = reg_at(env, insn->dst_reg), src;
	struct vstate *other;
	int taken = -1, err;

	if ((err = vcheck_reg_init(env, insn->dst_reg)))
		return err;
	if (x) {
		if ((err = vcheck_reg_init(env, insn->src_reg)))
			return err;
		src = *reg_at(env, insn->src_reg);
	} else {
		memset(&src, 0, sizeof(src));
		src.type = SCALAR;
		vreg_mark_const(&src, is32 ? (uint32_t)insn->imm : (uint64_t)(int64_t)insn->imm);
	}

	if (dst->type == SCALAR && src.type == SCALAR)
		taken = vscalar_branch_taken(dst, &src, op, is32);
	else if (!is32 && (op == BPF_JEQ || op == BPF_JNE) &&
		 ((is_ptr(dst) && !(dst->flags & PTR_MAYBE_NULL) && vreg_is_zero(&src) &&
		   dst->type != PTR_TO_BTF_ID) ||
		  (is_ptr(&src) && !(src.flags & PTR_MAYBE_NULL) && vreg_is_zero(dst) &&
		   src.type != PTR_TO_BTF_ID)))
		taken = op == BPF_JNE; /* a valid pointer is never NULL (a typed argument may be) */

	if (taken == 1) {
		*next = target;
		return 0;
	}
	if (taken == 0) {
		*next = env->insn + 1;
		return 0;
	}
	*next = env->insn + 1;

	if (dst->type == SCALAR && src.type == SCALAR) {
		struct vreg td = *dst, ts = src, fd = *dst, fs = src;
		bool t_ok = vscalar_refine(&td, &ts, op, is32, true);
		bool f_ok = vscalar_refine(&fd, &fs, op, is32, false);

		if (t_ok && f_ok) {
			other = vpush_branch(env, target);
			if (!other)
				return -ENOMEM;
			apply_refined(other, insn, x, &td, &ts);
		} else if (t_ok) {
			*next = target;
			apply_refined(env->cur, insn, x, &td, &ts);
			return 0;
		} else if (!f_ok) {
			return verr(env, "both branches of the jump are impossible (bounds bug)");
		}
		apply_refined(env->cur, insn, x, &fd, &fs);
		return 0;
	}
	/* a pointer may only be null-checked or compared with a packet
	 * pointer: any other comparison reveals bits of its address */
	if (!(!is32 && (op == BPF_JEQ || op == BPF_JNE) &&
	      (((dst->flags & PTR_MAYBE_NULL) && vreg_is_zero(&src)) ||
	       (x && (src.flags & PTR_MAYBE_NULL) && vreg_is_zero(dst)))) &&
	    !(!is32 && x && is_pkt_family(dst) && is_pkt_family(&src))) {
		bool d = is_ptr(dst);

		if ((err = vcheck_ptr_leak(env, d ? dst : &src, "R%d pointer comparison prohibited",
					  d ? insn->dst_reg : insn->src_reg)))
			return err;
	}
	other = vpush_branch(env, target);
	if (!other)
		return -ENOMEM;
	if (!is32 && (op == BPF_JEQ || op == BPF_JNE)) {
		const struct vreg *p = NULL;

		if ((dst->flags & PTR_MAYBE_NULL) && vreg_is_zero(&src))
			p = dst;
		else if (x && (src.flags & PTR_MAYBE_NULL) && vreg_is_zero(dst))
			p = &src;
		if (p) {
			uint32_t id = p->id;

			mark_null_outcome(other, id, op == BPF_JEQ);
			mark_null_outcome(env->cur, id, op != BPF_JEQ);
			return 0;
		}
		/* a pointer equal to a non-NULL one is not NULL (on the
		 * equal side; that register only, as Linux) */
		if (x && is_ptr(dst) && is_ptr(&src) &&
		    !(dst->flags & PTR_MAYBE_NULL) != !(src.flags & PTR_MAYBE_NULL) &&
		    dst->type != PTR_TO_BTF_ID && src.type != PTR_TO_BTF_ID) {
			struct vstate *eq = op == BPF_JEQ ? other : env->cur;
			int regno = (dst->flags & PTR_MAYBE_NULL) ? insn->dst_reg : insn->src_reg;

			state_reg(eq, regno)->flags &= (uint8_t)~PTR_MAYBE_NULL;
			return 0;
		}
	}
	if (!is32 && x && op != BPF_JEQ && op != BPF_JNE && op != BPF_JSET &&
	    (pkt_bounded_by(dst, &src) || pkt_bounded_by(&src, dst)))
		packet_compare(env, other, env->cur, dst, &src, op);
	return 0;
}
