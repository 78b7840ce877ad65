/* Register dataflow over a program's instructions: what each instruction
 * reads and writes, its CFG successors, and register liveness (a backward
 * dataflow to the least fixed point). One analysis for its two users: the
 * verifier (pruning compares only live registers) and the x86-64 JIT's
 * optimizer (folds and copy coalescing need a register dead afterwards).
 * Masks have bit r for register rN (r0-r10). */
#ifndef BPFRT_ISA_LIVENESS_H
#define BPFRT_ISA_LIVENESS_H

#include "core/prog.h"
#include "isa/isa.h"

/* CFG successors of the instruction at pc (not an lddw second slot) of a
 * validated program: fills succ[] and returns how many (0 for exit, 1 for
 * ja/gotol and straight-line code incl. calls, 2 for conditional jumps:
 * succ[0] is the taken target, succ[1] the fall-through). */
unsigned bpfrt_insn_successors(const struct bpf_insn *insns, uint32_t pc, uint32_t succ[2]);

/* Registers an instruction reads, writes, and leaves undefined (calls
 * clobber r1-r5 and set r0). Helper calls read the argument registers
 * their prototype declares; callx reads only its target register and
 * local calls read none (their arguments are unknown here). */
struct bpfrt_reg_use {
	uint16_t use, def, kill;
};
void bpfrt_insn_reg_use(const struct bpfrt_prog *prog, const struct bpf_insn *insn,
			struct bpfrt_reg_use *u);

/* How calls read registers, where the two users differ. Every call
 * (helper, kfunc, tail call, local call, callx) falls through to the next
 * instruction in the CFG and writes r0-r5; exit reads r0. */
enum bpfrt_liveness_flags {
	/* helper calls read only the argument registers of their prototype
	 * (prog->helpers); without it every call reads r1-r5 */
	BPFRT_LIVE_HELPER_PROTOTYPES = 1u << 0,
	/* local calls also read r6-r9: the callee runs in the caller's
	 * callee-saved registers (the x86-64 JIT) */
	BPFRT_LIVE_LOCAL_CALL_READS_R6_R9 = 1u << 1,
};

/* What insn reads (use) and writes or leaves undefined (def) as the
 * liveness below sees it, calls as flags say. */
void bpfrt_insn_reg_flow(const struct bpfrt_prog *prog, const struct bpf_insn *insn,
			 unsigned flags, uint16_t *use, uint16_t *def);

/* Liveness over insns[0, n) of a validated program (prog gives the helper
 * prototypes): live_in[pc] = registers some path from pc reads before it
 * writes them, live_out[pc] = those of pc's successors. Paths stay in
 * their subprogram (a call goes on at the next insn). Either array may be
 * NULL; each has n entries, all written (0 at the second half of an
 * lddw). Returns 0 or -ENOMEM. */
int bpfrt_reg_liveness(const struct bpfrt_prog *prog, const struct bpf_insn *insns, uint32_t n,
		       unsigned flags, uint16_t *live_in, uint16_t *live_out);

#endif
