/* Linux's tracing helpers for programs run from trampolines (fentry, fexit,
 * fmod_ret, fentry.multi), with Linux's ids and error codes; get_func_ip
 * also for kprobes, kretprobes and uprobes (bpfrt_probe_frame). They read the
 * trampoline frame of the run in progress (bpfrt_run_state.tramp_frame)
 * and answer only for the ctx that frame gave the program: other program
 * kinds get 0 or -EINVAL, as their ctx is not an argument array.
 * get_attach_cookie serves every attach kind (bpfrt_attach_tls.cookie).
 *
 * They are defaults of the default environment like Linux's other helpers
 * (helpers/linux.c): added before main, filled in at the first program
 * load where an id is still free, so a program loaded before any attach
 * has them too. */
#include "attach/helpers_tracing.h"
#include "attach/override.h"
#include "attach/run.h"
#include "attach/trampoline.h"
#include "helpers/helpers.h"
#include "helpers/stack.h"
#include "bpfrt/kprobe.h"

#include <errno.h>
#include <stdlib.h>

#define A(t) BPFRT_ARG_##t

static const struct bpfrt_tramp_frame *frame_of(uint64_t ctx)
{
	const struct bpfrt_tramp_frame *f = bpfrt_run_state.tramp_frame;

	return f && (uint64_t)(uintptr_t)f->args == ctx ? f : NULL;
}

__thread struct bpfrt_probe_frame bpfrt_probe_frame __attribute__((tls_model("initial-exec")));

/* A trampoline's function, or the probed address of a kprobe, kretprobe
 * or uprobe run with this ctx; 0 for any other ctx. */
static uint64_t bpf_get_func_ip(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	const struct bpfrt_tramp_frame *f = frame_of(ctx);

	if (f)
		return f->ip;
	if (bpfrt_probe_frame.regs && (uint64_t)(uintptr_t)bpfrt_probe_frame.regs == ctx)
		return bpfrt_probe_frame.ip;
	return 0;
}

static uint64_t bpf_get_func_arg(uint64_t ctx, uint64_t n, uint64_t value, uint64_t r4,
				 uint64_t r5)
{
	const struct bpfrt_tramp_frame *f = frame_of(ctx);
	uint64_t *out = (uint64_t *)(uintptr_t)value;

	if (!f || (uint32_t)n >= f->nr_args) {
		*out = 0;
		return (uint64_t)-EINVAL;
	}
	*out = f->args[(uint32_t)n];
	return 0;
}

static uint64_t bpf_get_func_ret(uint64_t ctx, uint64_t value, uint64_t r3, uint64_t r4,
				 uint64_t r5)
{
	const struct bpfrt_tramp_frame *f = frame_of(ctx);
	uint64_t *out = (uint64_t *)(uintptr_t)value;

	/* Only fexit and fmod_ret runs have a return slot: the exit half of
	 * a trampoline and fmod_ret (enter with the call still to come) both
	 * run with a per-function state whose fexit/fmod_ret is set. */
	if (!f || !f->md) {
		*out = 0;
		return (uint64_t)-EOPNOTSUPP;
	}
	*out = f->args[f->nr_args];
	return 0;
}

static uint64_t bpf_get_func_arg_cnt(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	const struct bpfrt_tramp_frame *f = frame_of(ctx);

	return f ? f->nr_args : 0;
}

static uint64_t bpf_get_attach_cookie(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5)
{
	return bpfrt_attach_tls.cookie;
}

/* Where get_stackid/get_stack start for a probe's context: the probed
 * instruction (its pt_regs say probed address + 1) or, for a kretprobe,
 * the return address, with the probed code's frame and stack pointers. */
static bool probe_stack_regs(uint64_t ctx, struct bpfrt_stack_regs *out)
{
#if defined(__x86_64__)
	const struct bpfrt_pt_regs *regs = bpfrt_probe_frame.regs;

	if (!regs || (uint64_t)(uintptr_t)regs != ctx)
		return false;
	*out = (struct bpfrt_stack_regs){
		.ip = regs->ip == bpfrt_probe_frame.ip + 1 ? bpfrt_probe_frame.ip : regs->ip,
		.fp = regs->bp,
		.sp = regs->sp,
		.at_entry = regs->ip == bpfrt_probe_frame.ip + 1 && bpfrt_probe_frame.at_entry,
	};
	return true;
#else
	return false;  /* kprobes are x86-64's only */
#endif
}

static const struct bpfrt_helper_default tracing_helpers[] = {
	{ BPF_FUNC_get_func_ip, { "get_func_ip", bpf_get_func_ip, BPFRT_RET_INTEGER,
	  { A(PTR_TO_CTX) } } },
	{ BPF_FUNC_get_attach_cookie, { "get_attach_cookie", bpf_get_attach_cookie,
	  BPFRT_RET_INTEGER, { A(PTR_TO_CTX) } } },
	{ BPF_FUNC_get_func_arg, { "get_func_arg", bpf_get_func_arg, BPFRT_RET_INTEGER,
	  { A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_LONG) } } },
	{ BPF_FUNC_get_func_ret, { "get_func_ret", bpf_get_func_ret, BPFRT_RET_INTEGER,
	  { A(PTR_TO_CTX), A(PTR_TO_LONG) } } },
	{ BPF_FUNC_get_func_arg_cnt, { "get_func_arg_cnt", bpf_get_func_arg_cnt,
	  BPFRT_RET_INTEGER, { A(PTR_TO_CTX) } } },
	{ BPF_FUNC_override_return, { "override_return", bpfrt_bpf_override_return,
	  BPFRT_RET_INTEGER, { A(PTR_TO_CTX), A(ANYTHING) } } },
};

__attribute__((constructor)) void bpfrt_tracing_helpers_init(void)
{
	if (bpfrt_helpers_add_defaults(tracing_helpers,
				       sizeof(tracing_helpers) / sizeof(tracing_helpers[0])))
		abort(); /* only this file adds a set */
	bpfrt_stack_set_regs_source(probe_stack_regs);
}
