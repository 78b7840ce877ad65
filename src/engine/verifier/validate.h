/* Structural validator, run on every load before anything executes.
 * Checks encodings, register numbers, jump targets, reachability, helper
 * ids and call depth; computes subprogram boundaries and stack depths. */
#ifndef BPFRT_VALIDATE_H
#define BPFRT_VALIDATE_H

#include "core/prog.h"
#include "isa/isa.h"
#include "isa/liveness.h" /* bpfrt_insn_successors, bpfrt_insn_reg_use */

/* Validates prog->insns/insn_cnt against prog->helpers and fills
 * prog->subprogs, subprog_cnt, insn_subprog and stack_depth.
 * Returns 0 or -EINVAL (or -E2BIG/-ENOMEM) with bpfrt_last_error() set to
 * "insn N: reason". On failure the subprogram fields are left NULL/0.
 *
 * Guarantees for later passes on success: every opcode and reserved field
 * is valid, registers are r0..r10 and r10 is never written; every branch
 * target is inside its own subprogram and not the second half of an lddw;
 * every instruction is reachable; each subprogram ends in exit or ja; the
 * call graph (local calls plus BPF_PSEUDO_FUNC references, which count as
 * calls) is acyclic and at most BPFRT_MAX_CALL_FRAMES deep; no register
 * is read unless some path from its subprogram's entry writes it (entry
 * state: r1, r2, r10 for main; r1-r5, r10 for subprograms); every
 * r10-based access lies in [-512, 0). Frame sizes are rounded up to 8; a
 * subprogram that uses r10 as a value (mov, alu, stx source, comparison,
 * callx) gets the full 512 bytes. */
int bpfrt_validate(struct bpfrt_prog *prog);
/* The same without pass 6 (registers read that no path writes), for a
 * program the verifier walks next: the walk refuses each read on a path
 * the program can take, and none on a dead one (walk.c's check_reads). */
int bpfrt_validate_for_verifier(struct bpfrt_prog *prog);

/* Subprogram index targeted by the local call or BPF_PSEUDO_FUNC lddw at
 * pc of a validated program, or -1 if pc is neither. */
int bpfrt_insn_callee(const struct bpfrt_prog *prog, uint32_t pc);

/* Base register of a load/store/atomic (src for LDX, dst for ST/STX), or -1
 * for any other instruction. */
static inline int bpfrt_insn_mem_base(const struct bpf_insn *insn)
{
	switch (insn_class(insn)) {
	case BPF_LDX:
		return insn->src_reg;
	case BPF_ST:
	case BPF_STX:
		return insn->dst_reg;
	default:
		return -1;
	}
}

#endif
