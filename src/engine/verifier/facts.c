/* Static facts the walk uses, computed once per verification before it
 * into env->aux: the halves of each lddw and its map reference, where
 * states are saved (prune points), which registers are live at each insn
 * (isa/liveness.c; pruning compares only those) and which registers and
 * stack slots may decide a later branch (iterator widening leaves those
 * alone) or anything (pruning compares those, joins leave them alone). */
#include "verifier/vstate.h"
#include "verifier/validate.h"
#include "isa/liveness.h"
#include "helpers/iter.h"

#include <stdlib.h>
#include <string.h>

static void mark_prune_points(struct venv *env)
{
	for (uint32_t pc = 0; pc < env->n; pc++) {
		const struct bpf_insn *insn = &env->insns[pc];

		if (insn_is_lddw(insn)) {
			pc++;
			continue;
		}
		if (insn_is_branch(insn)) {
			env->aux[insn_branch_target(insn, pc)].prune_point = true;
			if (insn_op(insn) != BPF_JA)
				env->aux[pc + 1].prune_point = true;
		} else if (insn_is_call(insn) && pc + 1 < env->n) {
			env->aux[pc + 1].prune_point = true;
		}
		/* where an iterator or may_goto loop converges (iter.c,
		 * may_goto.c) */
		if (viter_call_op(env, pc) == BPFRT_ITER_OP_NEXT || insn_is_may_goto(insn))
			env->aux[pc].prune_point = true;
	}
	for (uint32_t s = 0; s < env->prog->subprog_cnt; s++)
		env->aux[env->prog->subprogs[s].start].prune_point = true;
}

/* The second half of every lddw (not an instruction of its own), and the
 * map reference of each relocated one. */
static void mark_lddws(struct venv *env)
{
	const struct bpfrt_prog *prog = env->prog;

	for (uint32_t pc = 0; pc + 1 < env->n; pc++)
		if (insn_is_lddw(&env->insns[pc]))
			env->aux[++pc].lddw_tail = true;
	for (uint32_t i = 0; i < prog->map_ref_cnt; i++)
		if (prog->map_refs[i].insn < env->n)
			env->aux[prog->map_refs[i].insn].map_ref = &prog->map_refs[i];
}

/* Registers possibly read before being written from each insn on (within
 * its subprogram; a local call reads its argument registers, a helper
 * call those of its prototype). Pruning compares only these. */
static int compute_liveness(struct venv *env)
{
	uint16_t *live = malloc((env->n ? env->n : 1) * sizeof(*live));

	if (!live || bpfrt_reg_liveness(env->prog, env->insns, env->n,
					BPFRT_LIVE_HELPER_PROTOTYPES, live, NULL)) {
		free(live);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < env->n; i++)
		env->aux[i].live = live[i];
	free(live);
	return 0;
}

/* Does r0 at the exit at pc decide anything? The main program's exit
 * only where its kind bounds the return value (Linux marks r0 precise
 * only for such return checks); a subprogram's where it goes on in a
 * caller that branches on it (sub_r0, from the callers' precise masks),
 * or is a callback's [0, 1] result. */
static bool exit_r0_precise(const struct venv *env, uint32_t pc, const bool *sub_r0)
{
	const struct bpfrt_prog *prog = env->prog;

	if (prog->subprog_cnt && pc >= prog->subprogs[0].end)
		return sub_r0[prog->insn_subprog[pc]];
	return env->kind && env->kind->returns_zero;
}

/* sub_r0[s]: subprogram s is a callback, or a call of it is followed by
 * r0 being precise. */
static void subprog_r0_precise(const struct venv *env, bool *sub_r0)
{
	const struct bpfrt_prog *prog = env->prog;

	memset(sub_r0, 0, prog->subprog_cnt * sizeof(*sub_r0));
	for (uint32_t pc = 0; pc < env->n; pc++) {
		int c = env->aux[pc].lddw_tail ? -1 : bpfrt_insn_callee(prog, pc);

		if (c < 0)
			continue;
		if (insn_is_lddw(&env->insns[pc]) || pc + 1 >= env->n ||
		    (env->aux[pc + 1].precise & REGMASK(BPF_R0)))
			sub_r0[c] = true;
	}
}

/* Which registers and stack slots (r10 + constant) may decide a later
 * branch, before each insn: values flowing into a conditional jump's
 * operands through moves, ALU operations and fills. The widening of
 * iterator loops (iter.c) leaves these alone, so loop counters are walked
 * iteration by iteration while accumulators are forgotten (what Linux's
 * precision tracking gives it, computed here statically and roughly;
 * soundness never depends on it). The decides mask below is no
 * replacement there: an accumulator handed to a helper or returned
 * decides something, and widening nothing of it, sum_range and
 * for_unknown_count (tests/progs/iters.bpf.c, verifier/progs/viters.bpf.c) never
 * converge. */
static int compute_precise(struct venv *env)
{
	struct insn_aux *aux = env->aux;
	bool *sub_r0 = calloc(env->prog->subprog_cnt ? env->prog->subprog_cnt : 1,
			      sizeof(*sub_r0));
	bool changed = true;

	if (!sub_r0)
		return -ENOMEM;
	while (changed) {
		changed = false;
		subprog_r0_precise(env, sub_r0);
		for (uint32_t i = env->n; i-- > 0;) {
			const struct bpf_insn *insn = &env->insns[i];
			uint16_t out = 0, in, dst = REGMASK(insn->dst_reg & 15);
			uint16_t src = REGMASK(insn->src_reg & 15);
			uint64_t sout = 0, sin;
			uint32_t succ[2];
			int32_t slot = -1;
			unsigned k;

			if (aux[i].lddw_tail)
				continue;
			k = bpfrt_insn_successors(env->insns, i, succ);
			for (unsigned j = 0; j < k; j++)
				if (succ[j] < env->n) {
					out |= aux[succ[j]].precise;
					sout |= aux[succ[j]].precise_slots;
				}
			if (bpfrt_insn_mem_base(insn) == BPF_R10 && insn->off < 0 && insn->off >= -512)
				slot = (-insn->off - 1) / 8;
			in = out;
			sin = sout;
			switch (insn_class(insn)) {
			case BPF_ALU:
			case BPF_ALU64:
				if (insn_op(insn) == BPF_MOV) {
					in = out & ~dst;
					if ((out & dst) && insn_src(insn) == BPF_X)
						in |= src;
				} else if ((out & dst) && insn_src(insn) == BPF_X) {
					in |= src;
				}
				break;
			case BPF_LDX:
				in = out & ~dst;
				if ((out & dst) && slot >= 0)
					sin |= 1ull << slot;
				break;
			case BPF_ST:
			case BPF_STX:
				if (slot < 0 || insn_mode(insn) == BPF_ATOMIC)
					break;
				if (insn_class(insn) == BPF_STX && (sout & (1ull << slot)))
					in |= src;
				if (insn_size(insn) == BPF_DW && insn->off % 8 == 0)
					sin &= ~(1ull << slot);
				break;
			case BPF_LD:
				if (insn_mode(insn) == BPF_ABS || insn_mode(insn) == BPF_IND)
					in = (uint16_t)(out & ~(ARG_REGS | REGMASK(0)));
				else
					in = out & ~dst;
				break;
			default:
				if (insn_is_exit(insn))
					in = exit_r0_precise(env, i, sub_r0) ? REGMASK(BPF_R0) : 0;
				else if (insn_is_call(insn) || insn_is_callx(insn))
					in = (uint16_t)((out & ~(ARG_REGS | REGMASK(0))) | ARG_REGS);
				else if (insn_op(insn) != BPF_JA && !insn_is_may_goto(insn))
					in = out | dst | (insn_src(insn) == BPF_X ? src : 0);
				break;
			}
			if (in != aux[i].precise || sin != aux[i].precise_slots) {
				aux[i].precise = in;
				aux[i].precise_slots = sin;
				changed = true;
			}
		}
	}
	free(sub_r0);
	return 0;
}

/* Does r0 at the exit at pc decide anything for soundness? Wherever the
 * exit checks it: a subprogram's (its caller goes on with it, a callback
 * returns [0, 1]) and the main program's where its kind bounds the
 * return value (check_return_value). */
static bool exit_r0_decides(const struct venv *env, uint32_t pc)
{
	const struct bpfrt_prog *prog = env->prog;
	int64_t lo, hi;

	if (prog->subprog_cnt && pc >= prog->subprogs[0].end)
		return true;
	return env->kind && bpfrt_prog_kind_ret_range(env->kind, prog->kind_variant,
						      prog->attach_target, &lo, &hi);
}

/* May the call at pc run BPF code that reads the caller's stack through
 * a pointer (a BPF call, a kfunc or a helper taking a callback)? */
static bool call_runs_bpf(const struct venv *env, const struct bpf_insn *insn)
{
	const struct bpfrt_helper *h;

	if (!insn_is_helper_call(insn))
		return true;
	h = bpfrt_prog_helper(env->prog, (uint32_t)insn->imm);
	if (!h || insn->imm < 0 || (uint32_t)insn->imm >= BPFRT_KFUNC_ID_BASE)
		return true;
	for (int i = 0; i < 5; i++)
		if (h->args[i] == BPFRT_ARG_PTR_TO_FUNC)
			return true;
	return false;
}

/* The slots of the current frame [lo, lo + size) touches (0 outside
 * the frame: the walk refuses such an access). */
static uint64_t fp_slots(int64_t lo, uint32_t size)
{
	int64_t hi = lo + (int64_t)size;
	uint64_t m = 0;

	if (lo < -512 || hi > 0)
		return 0;
	for (int64_t a = lo; a < hi; a++)
		m |= 1ull << ((-a - 1) / 8);
	return m;
}

/* Where each register may point into the stack before each insn (a
 * forward dataflow to the least fixed point, erring towards "anywhere"):
 * nowhere (not a stack pointer on any path), at r10 + a constant, or
 * anywhere in some stack (a variable offset, a subprogram's arguments: a
 * caller or bpf_loop may pass its stack, a fill from a slot that may hold
 * a spilled one (slot_ptr), the r0 of a kfunc or subprogram that may hand
 * an argument back).
 * Helpers return no stack pointer; loads from
 * maps, contexts and packets never give one. compute_decides counts a
 * load or store through a register as reaching the slots it may reach. */
enum { SP_NONE, SP_FP, SP_ANY };

struct sp_regs {
	uint8_t kind[BPF_NREGS];
	int32_t off[BPF_NREGS]; /* SP_FP: r10 + off */
	uint64_t slot_ptr;      /* the frame's slots that may hold a stack pointer */
};

static bool sp_join(struct sp_regs *to, const struct sp_regs *from)
{
	bool changed = (to->slot_ptr | from->slot_ptr) != to->slot_ptr;

	to->slot_ptr |= from->slot_ptr;
	for (int r = 0; r < BPF_NREGS; r++) {
		uint8_t k = to->kind[r];

		if (from->kind[r] == SP_NONE || k == SP_ANY)
			continue;
		if (k == SP_NONE) {
			to->kind[r] = from->kind[r];
			to->off[r] = from->off[r];
		} else if (from->kind[r] == SP_ANY || from->off[r] != to->off[r]) {
			to->kind[r] = SP_ANY;
		}
		changed |= to->kind[r] != k || (k == SP_NONE && to->kind[r] != SP_NONE);
	}
	return changed;
}

static void sp_any_if(struct sp_regs *st, int r, bool cond)
{
	st->kind[r] = cond ? SP_ANY : SP_NONE;
}

static int compute_stack_ptrs(struct venv *env, struct sp_regs *sp)
{
	const struct bpfrt_prog *prog = env->prog;
	bool changed = true;

	memset(sp, 0, env->n * sizeof(*sp));
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		uint32_t start = prog->subprogs[s].start;

		if (start >= env->n)
			continue;
		sp[start].kind[BPF_R10] = SP_FP;
		for (int r = BPF_R1; s && r <= BPF_R5; r++)
			sp[start].kind[r] = SP_ANY;
	}
	while (changed) {
		changed = false;
		for (uint32_t i = 0; i < env->n; i++) {
			const struct bpf_insn *insn = &env->insns[i];
			struct sp_regs out = sp[i];
			int d = insn->dst_reg & 15, sr = insn->src_reg & 15;
			bool x = insn_src(insn) == BPF_X;
			uint32_t succ[2];
			unsigned k;

			if (env->aux[i].lddw_tail || d >= BPF_NREGS || sr >= BPF_NREGS)
				continue;
			switch (insn_class(insn)) {
			case BPF_ALU:
			case BPF_ALU64:
				if (insn_op(insn) == BPF_MOV) {
					out.kind[d] = x ? sp[i].kind[sr] : SP_NONE;
					out.off[d] = x ? sp[i].off[sr] : 0;
					if (insn_class(insn) == BPF_ALU && out.kind[d])
						out.kind[d] = SP_ANY;
				} else if (insn_class(insn) == BPF_ALU64 && !x &&
					   (insn_op(insn) == BPF_ADD || insn_op(insn) == BPF_SUB) &&
					   sp[i].kind[d] == SP_FP) {
					int64_t o = (int64_t)sp[i].off[d] +
						    (insn_op(insn) == BPF_ADD ? insn->imm : -(int64_t)insn->imm);

					if (o < -(1 << 20) || o > (1 << 20))
						out.kind[d] = SP_ANY;
					else
						out.off[d] = (int32_t)o;
				} else {
					sp_any_if(&out, d, sp[i].kind[d] || (x && sp[i].kind[sr]));
				}
				break;
			case BPF_LDX: {
				/* a fill: a stack pointer only if one may be spilled there */
				uint64_t at = sp[i].kind[sr] == SP_FP ?
					fp_slots((int64_t)sp[i].off[sr] + insn->off,
						 bpf_size_bytes(insn_size(insn))) : 0;

				sp_any_if(&out, d, sp[i].kind[sr] == SP_ANY || (sp[i].slot_ptr & at));
				break;
			}
			case BPF_ST:
			case BPF_STX: {
				uint32_t size = bpf_size_bytes(insn_size(insn));
				bool val = insn_class(insn) == BPF_STX && sp[i].kind[sr] != SP_NONE;
				uint64_t at = sp[i].kind[d] == SP_FP ?
					fp_slots((int64_t)sp[i].off[d] + insn->off, size) : 0;

				if (insn_mode(insn) == BPF_ATOMIC && (insn->imm & BPF_FETCH))
					sp_any_if(&out, insn->imm == BPF_CMPXCHG ? BPF_R0 : sr,
						  sp[i].kind[d]);
				if (val && sp[i].kind[d] == SP_ANY)
					out.slot_ptr = ~0ull;
				else if (val)
					out.slot_ptr |= at;
				else if (insn_mode(insn) != BPF_ATOMIC && size == 8 &&
					 ((int64_t)sp[i].off[d] + insn->off) % 8 == 0)
					out.slot_ptr &= ~at;
				break;
			}
			case BPF_LD:
				out.kind[d] = SP_NONE;
				break;
			default:
				if (insn_is_call(insn) || insn_is_callx(insn)) {
					bool arg = false;

					for (int r = BPF_R1; r <= BPF_R5; r++) {
						arg |= sp[i].kind[r] != SP_NONE;
						out.kind[r] = SP_NONE;
					}
					/* BPF code it runs may spill one through an argument */
					if (arg && (insn_is_callx(insn) || call_runs_bpf(env, insn)))
						out.slot_ptr = ~0ull;
					/* a helper returns no stack pointer; a kfunc
					 * or subprogram may return its argument */
					sp_any_if(&out, BPF_R0, arg && (!insn_is_helper_call(insn) ||
									insn->imm < 0 ||
									insn->imm >= BPFRT_KFUNC_ID_BASE));
				}
				break;
			}
			out.kind[BPF_R10] = SP_FP;
			out.off[BPF_R10] = 0;
			k = bpfrt_insn_successors(env->insns, i, succ);
			for (unsigned j = 0; j < k; j++)
				if (succ[j] < env->n && sp_join(&sp[succ[j]], &out))
					changed = true;
		}
	}
	return 0;
}

/* Which registers' values may decide anything from each insn on: a
 * branch (both operands, whether or not the walk resolves it), pointer
 * arithmetic (both operands of every add and sub: the walk alone knows
 * which are pointers), a call's argument registers (sizes, flags, keys:
 * every argument of every call), the exit's r0 where it is checked, and
 * whatever flows into those through moves, ALU operations, stack spills
 * and fills. A scalar outside this set at a prune point is imprecise:
 * pruning lets any scalar stand for it (states.c), and joins widen only
 * such scalars. Unlike the precise mask (iterator widening only),
 * soundness rests on this one, so it errs towards precise: a store through a register other than r10 that may point into
 * a stack (compute_may_stack) keeps its source (a later fill may read
 * it), a fill through one reads any slot, and a call that may run BPF
 * code may read any slot of the caller's frame. decides_slots are the
 * current frame's r10 slots whose spilled value may decide something
 * (pruning lets an imprecise scalar spill cover any data there). */
static int compute_decides(struct venv *env)
{
	struct insn_aux *aux = env->aux;
	struct sp_regs *sp = malloc((env->n ? env->n : 1) * sizeof(*sp));
	bool changed = true;

	if (!sp)
		return -ENOMEM;
	compute_stack_ptrs(env, sp);

	while (changed) {
		changed = false;
		for (uint32_t i = env->n; i-- > 0;) {
			const struct bpf_insn *insn = &env->insns[i];
			uint16_t out = 0, in, dst = REGMASK(insn->dst_reg & 15);
			uint16_t src = REGMASK(insn->src_reg & 15);
			uint64_t sout = 0, sin, slots;
			uint32_t succ[2], size = bpf_size_bytes(insn_size(insn));
			bool x = insn_src(insn) == BPF_X;
			int base = bpfrt_insn_mem_base(insn) & 15;
			/* a load or store through a register that may point
			 * anywhere into a stack */
			bool indirect = base < BPF_NREGS && sp[i].kind[base] == SP_ANY;
			/* ...or at r10 + a constant: these slots */
			bool at_fp = base < BPF_NREGS && sp[i].kind[base] == SP_FP;
			int64_t fp_off = at_fp ? (int64_t)sp[i].off[base] + insn->off : 0;
			unsigned k;

			if (aux[i].lddw_tail)
				continue;
			k = bpfrt_insn_successors(env->insns, i, succ);
			for (unsigned j = 0; j < k; j++)
				if (succ[j] < env->n) {
					out |= aux[succ[j]].decides;
					sout |= aux[succ[j]].decides_slots;
				}
			in = out;
			sin = sout;
			switch (insn_class(insn)) {
			case BPF_ALU:
			case BPF_ALU64:
				if (insn_op(insn) == BPF_MOV) {
					in = out & ~dst;
					if ((out & dst) && x)
						in |= src;
				} else if (x && (insn_op(insn) == BPF_ADD || insn_op(insn) == BPF_SUB)) {
					in = out | dst | src;
				} else if ((out & dst) && x) {
					in |= src;
				}
				break;
			case BPF_LDX:
				in = out & ~dst;
				if (out & dst)
					sin |= at_fp ? fp_slots(fp_off, size) : indirect ? ~0ull : 0;
				break;
			case BPF_ST:
			case BPF_STX:
				slots = at_fp ? fp_slots(fp_off, size) : 0;
				if (insn_mode(insn) == BPF_ATOMIC) {
					in = out | src | REGMASK(BPF_R0);
					if (indirect || at_fp)
						sin = ~0ull;
					break;
				}
				if (insn_class(insn) == BPF_STX && (indirect || (sout & slots)))
					in |= src;
				if (at_fp && size == 8 && fp_off % 8 == 0)
					sin &= ~slots;
				break;
			case BPF_LD:
				if (insn_is_lddw(insn))
					in = out & ~dst;
				else
					in = out | src | REGMASK(BPF_R6);
				break;
			default:
				if (insn_is_exit(insn)) {
					in = exit_r0_decides(env, i) ? REGMASK(BPF_R0) : 0;
					sin = 0;
				} else if (insn_is_call(insn) || insn_is_callx(insn)) {
					in = (uint16_t)((out & ~(ARG_REGS | REGMASK(0))) | ARG_REGS);
					if (insn_is_callx(insn))
						in |= dst;
					if (insn_is_callx(insn) || call_runs_bpf(env, insn))
						sin = ~0ull;
				} else if (insn_op(insn) != BPF_JA && !insn_is_may_goto(insn)) {
					in = out | dst | (x ? src : 0);
				}
				break;
			}
			if (in != aux[i].decides || sin != aux[i].decides_slots) {
				aux[i].decides = in;
				aux[i].decides_slots = sin;
				changed = true;
			}
		}
	}
	free(sp);
	return 0;
}

int vcompute_insn_facts(struct venv *env)
{
	mark_lddws(env);
	if (compute_liveness(env))
		return -ENOMEM;
	if (compute_precise(env))
		return -ENOMEM;
	if (compute_decides(env))
		return -ENOMEM;
	mark_prune_points(env);
	return 0;
}
