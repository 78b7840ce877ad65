/* Static facts the walk uses, computed once per verification before it
 * into env->aux: the halves of each lddw and its map reference, where
 * states are saved (prune points), which registers are live at each insn
 * (isa/liveness.c; pruning compares only those) and which registers and
 * stack slots may decide a later branch (joins leave those alone). */
#include "verifier/vstate.h"
#include "verifier/validate.h"
#include "isa/liveness.h"

#include <stdlib.h>

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
 * only for such return checks); a subprogram's r0 goes on in its caller,
 * or is a callback's [0, 1] result. */
static bool exit_r0_precise(const struct venv *env, uint32_t pc)
{
	const struct bpfrt_prog *prog = env->prog;

	if (prog->subprog_cnt && pc >= prog->subprogs[0].end)
		return true;
	return env->kind && env->kind->returns_zero;
}

/* Which registers and stack slots (r10 + constant) may decide a later
 * branch, before each insn: values flowing into a conditional jump's
 * operands through moves, ALU operations and fills. Joins leave these
 * alone, so loop counters are walked iteration by iteration (what Linux's
 * precision tracking gives it, computed here statically and roughly: it
 * only steers joins, soundness never depends on it). */
static void compute_precise(struct venv *env)
{
	struct insn_aux *aux = env->aux;
	bool changed = true;

	while (changed) {
		changed = false;
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
				in = out & ~dst;
				break;
			default:
				if (insn_is_exit(insn))
					in = exit_r0_precise(env, i) ? REGMASK(BPF_R0) : 0;
				else if (insn_is_call(insn) || insn_is_callx(insn))
					in = (uint16_t)((out & ~(ARG_REGS | REGMASK(0))) | ARG_REGS);
				else if (insn_op(insn) != BPF_JA)
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

/* The r10 + constant slots [off, off + size) touches (0 if it is not one). */
static uint64_t r10_slots(const struct bpf_insn *insn, uint32_t size)
{
	int32_t lo = insn->off, hi = insn->off + (int32_t)size;
	uint64_t m = 0;

	if (bpfrt_insn_mem_base(insn) != BPF_R10 || lo < -512 || hi > 0)
		return 0;
	for (int32_t a = lo; a < hi; a++)
		m |= 1ull << ((-a - 1) / 8);
	return m;
}

/* Which registers' values may decide anything from each insn on: a
 * branch (both operands, whether or not the walk resolves it), pointer
 * arithmetic (both operands of every add and sub: the walk alone knows
 * which are pointers), a call's argument registers (sizes, flags, keys:
 * every argument of every call), the exit's r0 where it is checked, and
 * whatever flows into those through moves, ALU operations, stack spills
 * and fills. A scalar outside this set at a prune point is imprecise:
 * pruning lets any scalar stand for it (states.c). Unlike the precise
 * mask (joins only), soundness rests on this one, so it errs towards
 * precise: a store through a register other than r10 keeps its source
 * (it may be a stack slot a later fill reads), a fill through one reads
 * any slot, and a call that may run BPF code may read any slot of the
 * caller's frame. Stack slots (decides_slots) only serve the registers'
 * mask: pruning compares every slot it compares in full. */
static void compute_decides(struct venv *env)
{
	struct insn_aux *aux = env->aux;
	bool changed = true;

	while (changed) {
		changed = false;
		for (uint32_t i = env->n; i-- > 0;) {
			const struct bpf_insn *insn = &env->insns[i];
			uint16_t out = 0, in, dst = REGMASK(insn->dst_reg & 15);
			uint16_t src = REGMASK(insn->src_reg & 15);
			uint64_t sout = 0, sin, slots;
			uint32_t succ[2], size = bpf_size_bytes(insn_size(insn));
			bool x = insn_src(insn) == BPF_X;
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
				if (out & dst) {
					slots = r10_slots(insn, size);
					sin |= insn->src_reg == BPF_R10 ? slots : ~0ull;
				}
				break;
			case BPF_ST:
			case BPF_STX:
				slots = r10_slots(insn, size);
				if (insn_mode(insn) == BPF_ATOMIC) {
					in = out | src | REGMASK(BPF_R0);
					sin = ~0ull;
					break;
				}
				if (insn_class(insn) == BPF_STX &&
				    (insn->dst_reg != BPF_R10 || (sout & slots)))
					in |= src;
				if (insn->dst_reg == BPF_R10 && size == 8 && insn->off % 8 == 0)
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
				} else if (insn_op(insn) != BPF_JA) {
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
}

int vcompute_insn_facts(struct venv *env)
{
	mark_lddws(env);
	if (compute_liveness(env))
		return -ENOMEM;
	compute_precise(env);
	compute_decides(env);
	mark_prune_points(env);
	return 0;
}
