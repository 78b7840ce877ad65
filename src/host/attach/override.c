/* bpf_override_return(regs, rc): a kprobe program makes the probed
 * function return rc to its caller without running (Linux's error
 * injection). bpfrt's rule, in place of Linux's list of error-injectable
 * functions: the probe must sit at a function's entry (offset 0, where
 * the return address is at the stack pointer and no callee-saved register
 * was touched yet, so skipping the body is a plain return), on x86-64;
 * the attach refuses a program calling it anywhere else (kprobe.c), and
 * the helper answers -EINVAL for any context but such a probe's pt_regs
 * (a test run, a kretprobe, a uprobe placed elsewhere). The probe
 * (int3 mode only) then returns to the caller with rax = rc. */
#include "attach/override.h"
#include "attach/helpers_tracing.h"
#include "core/prog.h"
#include "isa/isa.h"

#include <errno.h>

uint64_t bpfrt_bpf_override_return(uint64_t ctx, uint64_t rc, uint64_t r3, uint64_t r4,
				   uint64_t r5)
{
	struct bpfrt_probe_frame *f = &bpfrt_probe_frame;

	if (!f->regs || (uint64_t)(uintptr_t)f->regs != ctx || !f->may_override)
		return (uint64_t)-EINVAL;
	f->override = true;
	f->override_rc = rc;
	return 0;
}

bool bpfrt_prog_calls_override(const struct bpfrt_prog *prog)
{
	for (uint32_t pc = 0; pc < prog->insn_cnt; pc++) {
		const struct bpf_insn *insn = &prog->insns[pc];
		const struct bpfrt_helper *h = insn_is_helper_call(insn) ?
			bpfrt_prog_helper(prog, (uint32_t)insn->imm) : NULL;

		if (h && h->fn == bpfrt_bpf_override_return)
			return true;
		if (insn_is_callx(insn) && prog->helper_cnt > BPF_FUNC_override_return &&
		    prog->helpers[BPF_FUNC_override_return].fn == bpfrt_bpf_override_return)
			return true; /* may call it by id */
		if (insn_is_lddw(insn))
			pc++;
	}
	return false;
}
