/* The architecture half of bpfrt trace -p (cli_trace.h): registers through
 * ptrace and a function call set up as the ABI wants it. x86-64 now; an
 * architecture without one refuses -p, naming itself. */
#define _GNU_SOURCE
#include "cli_trace.h"

#include <errno.h>
#include <sys/ptrace.h>

#if defined(__x86_64__)
static int x86_get(pid_t tid, struct inject_regs *regs)
{
	return ptrace(PTRACE_GETREGS, tid, 0, &regs->r) < 0 ? -errno : 0;
}

static int x86_set(pid_t tid, const struct inject_regs *regs)
{
	return ptrace(PTRACE_SETREGS, tid, 0, &regs->r) < 0 ? -errno : 0;
}

static uintptr_t x86_sp(const struct inject_regs *regs)
{
	return regs->r.rsp;
}

/* SysV: arguments in rdi, rsi; at the entry rsp + 8 is 16-byte aligned
 * and [rsp] is the return address (ret_slot is 16-aligned minus 8). */
static void x86_setup_call(struct inject_regs *regs, uintptr_t fn, uintptr_t a0, uintptr_t a1,
			   uintptr_t ret_slot)
{
	regs->r.rip = fn;
	regs->r.rdi = a0;
	regs->r.rsi = a1;
	regs->r.rax = 0;
	regs->r.rsp = ret_slot;
	/* not "in a syscall": the kernel must not restart one over the call */
	regs->r.orig_rax = (unsigned long)-1;
}

static uintptr_t x86_result(const struct inject_regs *regs)
{
	return regs->r.rax;
}

const struct inject_arch inject_arch = {
	.supported = true, .get = x86_get, .set = x86_set, .sp = x86_sp,
	.setup_call = x86_setup_call, .result = x86_result,
};
#else
const struct inject_arch inject_arch = { .supported = false };
#endif
