/* The interrupted thread's registers in a signal handler's ucontext, per
 * architecture (x86-64, aarch64, riscv64), in one place: bpfrt's handlers
 * (trap.c, text_poke.c, kprobe.c, privstack.c) read and rewrite them only
 * through these. BPFRT_UC_SUPPORTED is 0 on other targets, where the
 * accessors do not exist and handlers decline every signal.
 *
 *   bpfrt_uc_pc / _set_pc       the instruction the thread resumes at
 *   bpfrt_uc_sp / _set_sp       the stack pointer
 *   bpfrt_uc_fp                 the frame-pointer register (rbp, x29, s0)
 *   bpfrt_uc_arg / _set_arg     integer argument register n (0-5) of the
 *                               C calling convention
 *   bpfrt_uc_breakpoint_addr    the breakpoint instruction a SIGTRAP came
 *                               from: x86-64 reports the pc after int3 (one
 *                               byte), A64 brk and RISC-V ebreak the pc of
 *                               the instruction itself
 *   BPFRT_UC_CALL_BIAS          what a call leaves below a 16-byte aligned
 *                               sp at a function's first instruction
 *                               (x86-64 pushes the return address; A64 and
 *                               RISC-V keep it in a register), for handlers
 *                               that resume the thread in a function
 */
#ifndef BPFRT_SIGNAL_UCONTEXT_H
#define BPFRT_SIGNAL_UCONTEXT_H

#include <stdint.h>
#include <ucontext.h>

#ifndef __USE_GNU
#error "signal/ucontext.h needs _GNU_SOURCE defined before the first system header (glibc's REG_* names)"
#endif

#if defined(__x86_64__)
#include "bpfrt/kprobe.h"

#define BPFRT_UC_SUPPORTED 1
#define BPFRT_UC_CALL_BIAS 8
#define BPFRT_UC_GREG(uc, r) ((uc)->uc_mcontext.gregs[r])

static inline int bpfrt_uc_arg_reg(int n)
{
	switch (n) {
	case 0: return REG_RDI;
	case 1: return REG_RSI;
	case 2: return REG_RDX;
	case 3: return REG_RCX;
	case 4: return REG_R8;
	default: return REG_R9;
	}
}

static inline uintptr_t bpfrt_uc_pc(const ucontext_t *uc) { return (uintptr_t)BPFRT_UC_GREG(uc, REG_RIP); }
static inline uintptr_t bpfrt_uc_sp(const ucontext_t *uc) { return (uintptr_t)BPFRT_UC_GREG(uc, REG_RSP); }
static inline uintptr_t bpfrt_uc_fp(const ucontext_t *uc) { return (uintptr_t)BPFRT_UC_GREG(uc, REG_RBP); }
static inline void bpfrt_uc_set_pc(ucontext_t *uc, uintptr_t v) { BPFRT_UC_GREG(uc, REG_RIP) = (greg_t)v; }
static inline void bpfrt_uc_set_sp(ucontext_t *uc, uintptr_t v) { BPFRT_UC_GREG(uc, REG_RSP) = (greg_t)v; }
static inline uintptr_t bpfrt_uc_arg(const ucontext_t *uc, int n)
{
	return (uintptr_t)BPFRT_UC_GREG(uc, bpfrt_uc_arg_reg(n));
}
static inline void bpfrt_uc_set_arg(ucontext_t *uc, int n, uintptr_t v)
{
	BPFRT_UC_GREG(uc, bpfrt_uc_arg_reg(n)) = (greg_t)v;
}
static inline uintptr_t bpfrt_uc_breakpoint_addr(const ucontext_t *uc) { return bpfrt_uc_pc(uc) - 1; }
/* The function's return value register (rax): a kprobe's override. */
static inline void bpfrt_uc_set_retval(ucontext_t *uc, uint64_t v) { BPFRT_UC_GREG(uc, REG_RAX) = (greg_t)v; }

/* A kprobe's context from an int3 trap: every general-purpose register
 * as the thread had it, in Linux's x86-64 pt_regs order (ip is the
 * kernel's, the int3's address + 1, which is the trap's pc). */
static inline void bpfrt_uc_pt_regs(const ucontext_t *uc, struct bpfrt_pt_regs *regs)
{
	*regs = (struct bpfrt_pt_regs){
		.r15 = (uint64_t)BPFRT_UC_GREG(uc, REG_R15), .r14 = (uint64_t)BPFRT_UC_GREG(uc, REG_R14),
		.r13 = (uint64_t)BPFRT_UC_GREG(uc, REG_R13), .r12 = (uint64_t)BPFRT_UC_GREG(uc, REG_R12),
		.bp = (uint64_t)BPFRT_UC_GREG(uc, REG_RBP), .bx = (uint64_t)BPFRT_UC_GREG(uc, REG_RBX),
		.r11 = (uint64_t)BPFRT_UC_GREG(uc, REG_R11), .r10 = (uint64_t)BPFRT_UC_GREG(uc, REG_R10),
		.r9 = (uint64_t)BPFRT_UC_GREG(uc, REG_R9), .r8 = (uint64_t)BPFRT_UC_GREG(uc, REG_R8),
		.ax = (uint64_t)BPFRT_UC_GREG(uc, REG_RAX), .cx = (uint64_t)BPFRT_UC_GREG(uc, REG_RCX),
		.dx = (uint64_t)BPFRT_UC_GREG(uc, REG_RDX), .si = (uint64_t)BPFRT_UC_GREG(uc, REG_RSI),
		.di = (uint64_t)BPFRT_UC_GREG(uc, REG_RDI), .orig_ax = (uint64_t)-1,
		.ip = (uint64_t)BPFRT_UC_GREG(uc, REG_RIP), .cs = 0x33,
		.flags = (uint64_t)BPFRT_UC_GREG(uc, REG_EFL),
		.sp = (uint64_t)BPFRT_UC_GREG(uc, REG_RSP), .ss = 0x2b,
	};
}

#elif defined(__aarch64__)
#define BPFRT_UC_SUPPORTED 1
#define BPFRT_UC_CALL_BIAS 0

static inline uintptr_t bpfrt_uc_pc(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.pc; }
static inline uintptr_t bpfrt_uc_sp(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.sp; }
static inline uintptr_t bpfrt_uc_fp(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.regs[29]; }
static inline void bpfrt_uc_set_pc(ucontext_t *uc, uintptr_t v) { uc->uc_mcontext.pc = v; }
static inline void bpfrt_uc_set_sp(ucontext_t *uc, uintptr_t v) { uc->uc_mcontext.sp = v; }
static inline uintptr_t bpfrt_uc_arg(const ucontext_t *uc, int n) { return (uintptr_t)uc->uc_mcontext.regs[n]; }
static inline void bpfrt_uc_set_arg(ucontext_t *uc, int n, uintptr_t v) { uc->uc_mcontext.regs[n] = v; }
static inline uintptr_t bpfrt_uc_breakpoint_addr(const ucontext_t *uc) { return bpfrt_uc_pc(uc); }

#elif defined(__riscv) && __riscv_xlen == 64
#define BPFRT_UC_SUPPORTED 1
#define BPFRT_UC_CALL_BIAS 0
/* glibc's __gregs: [REG_PC] is the pc, [n] is xn otherwise (REG_SP = x2,
 * REG_S0 = x8, the frame pointer; REG_A0 + n = an). */

static inline uintptr_t bpfrt_uc_pc(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.__gregs[REG_PC]; }
static inline uintptr_t bpfrt_uc_sp(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.__gregs[REG_SP]; }
static inline uintptr_t bpfrt_uc_fp(const ucontext_t *uc)
{
	return (uintptr_t)uc->uc_mcontext.__gregs[REG_S0];
}
static inline void bpfrt_uc_set_pc(ucontext_t *uc, uintptr_t v) { uc->uc_mcontext.__gregs[REG_PC] = v; }
static inline void bpfrt_uc_set_sp(ucontext_t *uc, uintptr_t v) { uc->uc_mcontext.__gregs[REG_SP] = v; }
static inline uintptr_t bpfrt_uc_arg(const ucontext_t *uc, int n)
{
	return (uintptr_t)uc->uc_mcontext.__gregs[REG_A0 + n];
}
static inline void bpfrt_uc_set_arg(ucontext_t *uc, int n, uintptr_t v)
{
	uc->uc_mcontext.__gregs[REG_A0 + n] = v;
}
static inline uintptr_t bpfrt_uc_breakpoint_addr(const ucontext_t *uc) { return bpfrt_uc_pc(uc); }

#else
#define BPFRT_UC_SUPPORTED 0
#endif

#endif
