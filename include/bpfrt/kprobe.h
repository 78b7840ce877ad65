/* kprobes and kretprobes on the host process's own code (x86-64).
 *
 * Ownership and thread safety: as every link (bpfrt/attach.h): the caller
 * owns the link and destroys it with bpfrt_link_destroy(); probes are
 * placed and removed while other threads run the probed code.
 *
 * A kprobe runs its programs when a thread reaches an instruction: any
 * instruction boundary of any function of the executable or a loaded
 * library, no special compiler flags needed. SEC("kprobe/FUNC"),
 * SEC("kprobe/FUNC+OFF") (OFF decimal or 0x hex, an instruction boundary)
 * and SEC("kretprobe/FUNC") attach through bpfrt_prog_attach(); the target
 * may also be "0xADDR". bpfrt_kprobe_attach() takes a name or an address.
 *
 * Context: r1 = struct bpfrt_pt_regs, the registers at the probed
 * instruction in the field order of Linux's x86-64 struct pt_regs, so
 * bpf_tracing.h's PT_REGS_PARM1(ctx) .. PT_REGS_PARM6, PT_REGS_RC, PT_REGS_SP,
 * PT_REGS_FP and BPF_KPROBE() work unmodified (compile with
 * -D__TARGET_ARCH_x86 and include <linux/ptrace.h>, whose user-space
 * struct pt_regs has this layout). As in Linux, ip is the probed address
 * + 1 (the int3's); kretprobes see ax = return value and ip = the address
 * returned to. The context is read-only.
 *
 * How (kprobe.c has the details):
 *   int3 mode   an int3 over the first byte; bpfrt's SIGTRAP handler runs
 *               the programs and resumes through an out-of-line copy of the
 *               displaced instruction(s), then jumps back. Programs run in
 *               signal context (a signal handler's restrictions apply to
 *               the helpers they call).
 *   jmp mode    (BPFRT_KPROBE_AUTO, when safe) a 5-byte jmp to a per-probe
 *               trampoline that saves the registers into a pt_regs on the
 *               stack, runs the programs, runs the relocated displaced
 *               instructions and jumps back. Like Linux's optprobes: armed
 *               as an int3 first, optimized once no thread can be inside
 *               the displaced bytes.
 *   Refused: addresses inside an instruction, data, functions the probe
 *   path itself runs (bpfrt_*, the trap handlers, __errno_location), and
 *   instructions that cannot run out of line (int3, int n, far branches,
 *   xbegin...). A kprobe at a patchable entry (mk/bpfrt-host.mk) goes on the
 *   instruction after its nop5, which stays fentry's.
 *   In int3 mode programs run in the SIGTRAP handler: a program's first
 *   run on a thread that needs a private stack allocates it (calloc under a
 *   lock), which is not async-signal-safe; keep int3-mode programs' stacks
 *   small or load them with BPFRT_F_DISABLE_PRIVATE_STACK.
 *   kretprobe   an entry probe swaps the return address for a return
 *               trampoline and keeps the real one on a per-thread shadow
 *               stack (64 deep; deeper calls are missed). longjmp out of a
 *               probed function is fine (stale entries are dropped by
 *               stack address); code that reads or compares its own
 *               return address, or runs with a CET shadow stack, is not.
 */
#ifndef BPFRT_PUBLIC_KPROBE_H
#define BPFRT_PUBLIC_KPROBE_H

#include "bpfrt/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfrt/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_prog;
struct bpfrt_link;

/* Linux's struct pt_regs (x86-64) with the kernel's field names. */
struct bpfrt_pt_regs {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	uint64_t ax, cx, dx, si, di;
	uint64_t orig_ax;       /* -1 */
	uint64_t ip;            /* probed address + 1 (kretprobe: return address) */
	uint64_t cs;            /* 0x33 */
	uint64_t flags;
	uint64_t sp;            /* rsp at the probed instruction */
	uint64_t ss;            /* 0x2b */
};

enum bpfrt_kprobe_mode {
	BPFRT_KPROBE_AUTO = 0,  /* jmp mode when it is safe, else int3 */
	BPFRT_KPROBE_INT3,      /* int3 mode only */
};

struct bpfrt_kprobe_opts {
	size_t sz;              /* sizeof(struct bpfrt_kprobe_opts) */
	uint64_t cookie;        /* bpf_get_attach_cookie() */
	uint64_t offset;        /* bytes after func (func != NULL) */
	bool retprobe;          /* kretprobe (offset must be 0) */
	enum bpfrt_kprobe_mode mode;
};
#define bpfrt_kprobe_opts__last_field mode

/* Attaches prog at func + opts->offset, or at addr when func is NULL.
 * Returns 0 and *link, or -errno with bpfrt_last_error(): -ENOENT (no such
 * function), -EINVAL (not an instruction boundary, or not code of a loaded
 * object), -EOPNOTSUPP (the instruction cannot run out of line), -EBUSY
 * (overlaps another probe's displaced bytes or a patched entry). */
BPFRT_API int bpfrt_kprobe_attach(struct bpfrt_prog *prog, const char *func, uintptr_t addr,
				  const struct bpfrt_kprobe_opts *opts, struct bpfrt_link **link);

/* Address the link's probe sits at (0 if link is not a kprobe link). */
BPFRT_API uintptr_t bpfrt_kprobe_addr(const struct bpfrt_link *link);
/* True while the probe of the link runs in jmp mode. */
BPFRT_API bool bpfrt_kprobe_optimized(const struct bpfrt_link *link);

#ifdef __cplusplus
}
#endif
#endif
