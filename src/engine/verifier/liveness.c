/* Static facts the walk uses, computed once per verification before it:
 * where states are saved (prune points), which registers are live at each
 * insn (pruning compares only those) and which registers and stack slots
 * may decide a later branch (joins leave those alone). */
#include "verifier/vstate.h"
#include "verifier/validate.h"

#include <stdlib.h>

void vmark_prune_points(struct venv *env)
{
	for (uint32_t pc = 0; pc < env->n; pc++) {
		const struct bpf_insn *insn = &env->insns[pc];

		if (insn_is_lddw(insn)) {
			pc++;
			continue;
		}
		if (insn_is_branch(insn)) {
			env->prune_point[insn_branch_target(insn, pc)] = 1;
			if (insn_op(insn) != BPF_JA)
				env->prune_point[pc + 1] = 1;
		} else if (insn_is_call(insn) && pc + 1 < env->n) {
			env->prune_point[pc + 1] = 1;
		}
	}
	for (uint32_t s = 0; s < env->prog->subprog_cnt; s++)
		env->prune_point[env->prog->subprogs[s].start] = 1;
}

/* 1 at the second half of every lddw (not an instruction of its own), or
 * NULL without memory. */
static uint8_t *lddw_tails(const struct venv *env)
{
	uint8_t *tail = calloc(env->n, 1);

	if (tail)
		for (uint32_t pc = 0; pc + 1 < env->n; pc++)
			if (insn_is_lddw(&env->insns[pc]))
				tail[++pc] = 1;
	return tail;
}

/* Registers possibly read before being written from each insn on (within
 * its subprogram; a local call reads its argument registers). Pruning
 * compares only these. */
int vcompute_liveness(struct venv *env, uint16_t **out)
{
	uint16_t *live = calloc(env->n, sizeof(*live));
	uint8_t *tail = lddw_tails(env);
	bool changed = true;

	if (!live || !tail) {
		free(live);
		free(tail);
		return -ENOMEM;
	}
	while (changed) {
		changed = false;
		for (uint32_t i = env->n; i-- > 0;) {
			const struct bpf_insn *insn = &env->insns[i];
			struct bpfrt_reg_use u;
			uint32_t succ[2];
			uint16_t lo = 0, in;
			unsigned k;

			if (tail[i])
				continue;
			k = bpfrt_insn_successors(env->insns, i, succ);
			for (unsigned j = 0; j < k; j++)
				if (succ[j] < env->n)
					lo |= live[succ[j]];
			bpfrt_insn_reg_use(env->prog, insn, &u);
			if (insn_is_local_call(insn) || insn_is_callx(insn))
				u.use |= ARG_REGS;
			in = (uint16_t)(u.use | (lo & ~(u.def | u.kill)));
			if (in != live[i]) {
				live[i] = in;
				changed = true;
			}
		}
	}
	free(tail);
	*out = live;
	return 0;
}

/* Which registers and stack slots (r10 + constant) may decide a later
 * branch, before each insn: values flowing into a conditional jump's
 * operands through moves, ALU operations and fills. Joins leave these
 * alone, so loop counters are walked iteration by iteration (what Linux's
 * precision tracking gives it, computed here statically and roughly: it
 * only steers joins, soundness never depends on it). */
int vcompute_precise(struct venv *env)
{
	uint8_t *tail = lddw_tails(env);
	bool changed = true;

	env->precise = calloc(env->n, sizeof(*env->precise));
	env->precise_slots = calloc(env->n, sizeof(*env->precise_slots));
	if (!tail || !env->precise || !env->precise_slots) {
		free(tail);
		return -ENOMEM;
	}
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

			if (tail[i])
				continue;
			k = bpfrt_insn_successors(env->insns, i, succ);
			for (unsigned j = 0; j < k; j++)
				if (succ[j] < env->n) {
					out |= env->precise[succ[j]];
					sout |= env->precise_slots[succ[j]];
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
					in = REGMASK(BPF_R0);
				else if (insn_is_call(insn) || insn_is_callx(insn))
					in = (uint16_t)((out & ~(ARG_REGS | REGMASK(0))) | ARG_REGS);
				else if (insn_op(insn) != BPF_JA)
					in = out | dst | (insn_src(insn) == BPF_X ? src : 0);
				break;
			}
			if (in != env->precise[i] || sin != env->precise_slots[i]) {
				env->precise[i] = in;
				env->precise_slots[i] = sin;
				changed = true;
			}
		}
	}
	free(tail);
	return 0;
}
