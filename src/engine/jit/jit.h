/* Arch-neutral contract between the JIT driver (jit.c) and the backends.
 *
 * prog->jit_insn_off holds more than the insn_cnt + 1 offsets the shared
 * header promises, so listings can find the code that belongs to no
 * instruction:
 *	[i] for i < insn_cnt   start of instruction i's code; an lddw second
 *	                       slot, or an instruction folded into its
 *	                       predecessor, starts where its code would (empty)
 *	[insn_cnt]             image length
 *	FUNC_START(s)          subprogram s's native function (its prologue
 *	                       runs up to the first instruction's code)
 *	BODY_END(s)            end of s's last instruction's code; up to the
 *	                       next function (or the image end) are stubs */
#ifndef BPFRT_JIT_H
#define BPFRT_JIT_H

#include "core/prog.h"

static inline size_t bpfrt_jit_off_entries(const struct bpfrt_prog *prog)
{
	return (size_t)prog->insn_cnt + 1 + 2 * (size_t)prog->subprog_cnt;
}

#define BPFRT_JIT_FUNC_START(prog, s) ((prog)->insn_cnt + 1 + 2 * (s))
#define BPFRT_JIT_BODY_END(prog, s)   ((prog)->insn_cnt + 2 + 2 * (s))

#endif
