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

int vcompute_insn_facts(struct venv *env)
{
	mark_lddws(env);
	if (compute_liveness(env))
		return -ENOMEM;
	compute_precise(env);
	mark_prune_points(env);
	return 0;
}
