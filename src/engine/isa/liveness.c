/* Register dataflow over a program's instructions (isa/liveness.h). */
#include "isa/liveness.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RBIT(r) ((uint16_t)(1u << (r)))
#define ARG_REGS (RBIT(1) | RBIT(2) | RBIT(3) | RBIT(4) | RBIT(5))
#define CALLEE_SAVED (RBIT(6) | RBIT(7) | RBIT(8) | RBIT(9))

unsigned bpfrt_insn_successors(const struct bpf_insn *insns, uint32_t pc, uint32_t succ[2])
{
	const struct bpf_insn *insn = &insns[pc];

	if (insn_is_exit(insn))
		return 0;
	if (insn_is_lddw(insn)) {
		succ[0] = pc + 2;
		return 1;
	}
	if (!insn_is_branch(insn)) {
		succ[0] = pc + 1;
		return 1;
	}
	succ[0] = (uint32_t)insn_branch_target(insn, pc);
	if (insn_op(insn) == BPF_JA)
		return 1;
	succ[1] = pc + 1;
	return 2;
}

static uint16_t helper_arg_regs(const struct bpfrt_prog *prog, int32_t id)
{
	const struct bpfrt_helper *h;
	uint16_t use = 0;

	h = bpfrt_prog_helper(prog, (uint32_t)id);
	if (!h)
		return 0;
	for (int i = 0; i < 5; i++)
		if (h->args[i] != BPFRT_ARG_NONE)
			use |= RBIT(i + 1);
	return use;
}

static void jmp_reg_use(const struct bpfrt_prog *prog, const struct bpf_insn *insn,
			struct bpfrt_reg_use *u)
{
	switch (insn_op(insn)) {
	case BPF_JA:
	case BPF_JCOND: /* may_goto reads no register */
		return;
	case BPF_EXIT:
		u->use = RBIT(BPF_R0);
		return;
	case BPF_CALL:
		if (insn_src(insn) == BPF_X)
			u->use = RBIT(insn->dst_reg);
		else if (insn->src_reg == 0)
			u->use = helper_arg_regs(prog, insn->imm);
		u->def = RBIT(BPF_R0);
		u->kill = ARG_REGS;
		return;
	default:
		u->use = RBIT(insn->dst_reg);
		if (insn_src(insn) == BPF_X)
			u->use |= RBIT(insn->src_reg);
	}
}

void bpfrt_insn_reg_use(const struct bpfrt_prog *prog, const struct bpf_insn *insn,
			struct bpfrt_reg_use *u)
{
	bool x = insn_src(insn) == BPF_X;

	*u = (struct bpfrt_reg_use){ 0 };
	switch (insn_class(insn)) {
	case BPF_ALU:
	case BPF_ALU64:
		u->def = RBIT(insn->dst_reg);
		if (insn_op(insn) != BPF_MOV)
			u->use = RBIT(insn->dst_reg);
		if (x && insn_op(insn) != BPF_END && insn_op(insn) != BPF_NEG)
			u->use |= RBIT(insn->src_reg);
		break;
	case BPF_JMP:
	case BPF_JMP32:
		jmp_reg_use(prog, insn, u);
		break;
	case BPF_LD:
		u->def = RBIT(insn->dst_reg);
		if (insn_mode(insn) == BPF_ABS || insn_mode(insn) == BPF_IND) {
			/* a legacy packet load reads the context in r6 and
			 * clobbers r1-r5 as the call it becomes does */
			u->use = RBIT(BPF_R6);
			if (insn_mode(insn) == BPF_IND)
				u->use |= RBIT(insn->src_reg);
			u->def = RBIT(BPF_R0);
			u->kill = ARG_REGS;
		}
		break;
	case BPF_LDX:
		u->use = RBIT(insn->src_reg);
		u->def = RBIT(insn->dst_reg);
		break;
	case BPF_ST:
		u->use = RBIT(insn->dst_reg);
		break;
	default: /* BPF_STX */
		u->use = RBIT(insn->dst_reg) | RBIT(insn->src_reg);
		if (insn_mode(insn) != BPF_ATOMIC)
			break;
		if (insn->imm == BPF_CMPXCHG) {
			u->use |= RBIT(BPF_R0);
			u->def = RBIT(BPF_R0);
		} else if (insn->imm & BPF_FETCH) {
			u->def = RBIT(insn->src_reg);
		}
	}
}

void bpfrt_insn_reg_flow(const struct bpfrt_prog *prog, const struct bpf_insn *insn,
			 unsigned flags, uint16_t *use, uint16_t *def)
{
	struct bpfrt_reg_use u;

	bpfrt_insn_reg_use(prog, insn, &u);
	if ((insn_class(insn) == BPF_JMP || insn_class(insn) == BPF_JMP32) &&
	    insn_op(insn) == BPF_CALL) {
		/* local calls and callx pass unknown arguments: all of them */
		if (!(flags & BPFRT_LIVE_HELPER_PROTOTYPES) || insn_is_local_call(insn) ||
		    insn_is_callx(insn))
			u.use |= ARG_REGS;
		if ((flags & BPFRT_LIVE_LOCAL_CALL_READS_R6_R9) &&
		    insn->src_reg == BPF_PSEUDO_CALL && insn_src(insn) == BPF_K)
			u.use |= CALLEE_SAVED;
	}
	*use = u.use;
	*def = (uint16_t)(u.def | u.kill);
}

/* Passes go backwards (against the flow, so straight-line code settles in
 * one) and update in place until nothing changes; the masks only grow. */
int bpfrt_reg_liveness(const struct bpfrt_prog *prog, const struct bpf_insn *insns, uint32_t n,
		       unsigned flags, uint16_t *live_in, uint16_t *live_out)
{
	struct flow {
		uint16_t use, def;
		bool lddw_tail;
	} *fl = calloc(n ? n : 1, sizeof(*fl));
	uint16_t *in = live_in ? live_in : calloc(n ? n : 1, sizeof(*in));
	bool changed = true;

	if (!fl || !in) {
		free(fl);
		if (in != live_in)
			free(in);
		return -ENOMEM;
	}
	memset(in, 0, n * sizeof(*in));
	if (live_out)
		memset(live_out, 0, n * sizeof(*live_out));
	for (uint32_t pc = 0; pc < n; pc++) {
		bpfrt_insn_reg_flow(prog, &insns[pc], flags, &fl[pc].use, &fl[pc].def);
		if (insn_is_lddw(&insns[pc]) && pc + 1 < n)
			fl[++pc].lddw_tail = true;
	}
	while (changed) {
		changed = false;
		for (uint32_t pc = n; pc-- > 0;) {
			uint32_t succ[2];
			uint16_t out = 0, i;
			unsigned k;

			if (fl[pc].lddw_tail)
				continue;
			k = bpfrt_insn_successors(insns, pc, succ);
			for (unsigned j = 0; j < k; j++)
				if (succ[j] < n)
					out |= in[succ[j]];
			if (live_out)
				live_out[pc] = out;
			i = (uint16_t)(fl[pc].use | (out & ~fl[pc].def));
			if (i != in[pc]) {
				in[pc] = i;
				changed = true;
			}
		}
	}
	free(fl);
	if (in != live_in)
		free(in);
	return 0;
}
