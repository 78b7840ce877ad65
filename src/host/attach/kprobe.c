/* kprobes and kretprobes on host code (see include/bpfrt/kprobe.h for the
 * user's view).
 *
 * A probe site is one address. Sites are permanent (reused when the same
 * address is probed again): threads may run a site's out-of-line block or
 * trampoline at any time, even long after its last program left, so no
 * grace period could prove them unused. Programs and program arrays are
 * what attach and detach change (RCU, as every attach kind).
 *
 * Displaced instructions. Planning decodes the instruction at the address
 * (it must be an instruction boundary of the containing function: checked
 * by decoding the function from its symbol's start) and, when the site can
 * be optimized, the following ones up to 5 bytes (the span). The site can
 * be optimized (jmp mode) when the function is known (symbol with a size),
 * the span stays inside it, every spanned instruction relocates, only the
 * last one may transfer control (call, jmp, ret: a call earlier would
 * return into the span), no branch of the function lands inside the span,
 * and the function has no indirect jmp (jump tables: targets unknown), as
 * Linux's optprobes require. Otherwise the span is the first instruction
 * and the site stays in int3 mode.
 *
 * The out-of-line block (JIT memory within rel32 reach of the site, so
 * rip-relative operands can be re-pointed) runs the span relocated
 * (insn_x86.c) and jumps to addr + span. The int3 handler resumes threads
 * there, so once the int3 is in, no thread newly reaches an instruction
 * boundary inside the span.
 *
 * State machine (under kprobe_lock; every write through text_poke):
 *   OFF -> INT3   trap handler registered, then int3 over byte 0
 *   INT3 -> OPT   once no thread is inside the span (quiesce below): the
 *                 5-byte jmp to the trampoline (text_poke: int3 first, then
 *                 the tail, then e9; a thread trapping meanwhile is sent on
 *                 by text_poke's emulation of the jmp or by our handler)
 *   OPT -> INT3   int3 over byte 0, then the original bytes 1..4 (data: no
 *                 thread executes them, the int3 and the jmp stop at byte 0)
 *   INT3 -> OFF   original first instruction back, then the trap handler
 *                 unregistered (a late trap finds the byte changed and
 *                 resumes at the address, trap.c step 3)
 *
 * Quiesce (Linux uses synchronize_rcu_tasks): threads that were inside the
 * span before the int3 went in (preempted between two of its instructions,
 * or asleep in a syscall there) would resume in the middle of the jmp. For
 * each other thread of the process, /proc/self/task/TID/syscall gives the
 * user pc of a thread that sleeps in the kernel; a thread that is running
 * or runnable is asked with a queued real-time signal (KPROBE_QUIESCE_SIG,
 * SI_QUEUE with a tag; other deliveries go to the host's handler) whose
 * handler reports the interrupted pc. A site is optimized only when every
 * thread answered and none was inside; otherwise it stays in int3 mode
 * (tried again at the next attach to it).
 *
 * The trampoline (jmp mode), in JIT memory near the site:
 *   lea rsp,[rsp-128]; flags word      skip the red zone; the flags by
 *                                      pushfq, or at a function's entry
 *                                      by lahf/seto (pushfq costs ~9 ns)
 *   struct bpfrt_pt_regs at rsp        every GPR, ip = addr + 1, sp, flags
 *   call run_fn(regs)                  16-byte aligned stack
 *   restore GPRs; popfq (lea at an entry); lea rsp,[rsp+128]
 *   [entry: the kretprobe landing, below]
 *   relocated span; jmp addr + span
 *   C path: save FP state; kprobe_handle(site, regs); restore; ret
 *   run_fn                             the backend's PROBE function
 * run_fn (jit/trampoline_backend.h) runs the usual case without C: the
 * RCU read side inline and the site's one program, JIT'ed and calling
 * nothing (BPFRT_TRAMP_ITEM_INLINE), called directly; a kretprobe entry
 * goes to kprobe_kret_enter, built to use general registers only. No FP
 * state is saved on that path (nothing on it touches FP registers).
 * Anything else (several programs, helpers, the interpreter, a nested
 * or first read section of the thread, its first kretprobe) jumps to the
 * C path, which saves the FP state first: xmm0-7 at a function's entry
 * (only argument registers are live there), xsave of all enabled state
 * elsewhere.
 * The int3 path builds the same pt_regs from the signal's ucontext (the
 * kernel saved the FP state) and runs the same handler in signal context.
 * A SIGTRAP handler that interrupts a thread between the two stores of
 * bpfrt_rcu_read_lock() cannot enter an RCU section safely: those rare runs
 * are skipped and counted as misses.
 *
 * kretprobes: the entry handler (a kretprobe's site is the function entry)
 * pushes {return address, rsp, site, landing} on a per-thread shadow stack
 * and replaces the return address with the landing: in jmp mode the site
 * trampoline's, in int3 mode bpfrt_kretprobe_tramp itself. The trampoline
 * then `call`s past the landing before the displaced span (and drops the
 * pushed address again): the return stack buffer holds the landing, so
 * the function's ret to it is predicted, and so is the final ret to the
 * real caller. The landing jumps to bpfrt_kretprobe_tramp, which builds
 * a pt_regs (ax = return value), keeps xmm0/xmm1 (float returns), finds
 * its entry by stack address, runs the site's kretprobe programs and
 * returns to the real address. Entries left behind by longjmp (lower
 * stack addresses than the returning frame) are dropped when an outer
 * probed function returns; tail calls between probed functions stack two
 * entries on one frame and unwind through the trampoline twice (the
 * landing or bpfrt_kretprobe_tramp_pushf, its pushfq twin for CPUs
 * without LAHF in 64-bit mode). */
#define _GNU_SOURCE
#include "bpfrt/kprobe.h"
#include "attach/helpers_tracing.h"
#include "attach/insn_x86.h"
#include "attach/link.h"
#include "attach/kprobe.h"
#include "attach/override.h"
#include "attach/run.h"
#include "attach/text_poke.h"
#include "attach/trampoline.h"
#include "attach/trap.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/thread_mem.h"
#include "jit/backend.h"
#include "jit/execmem.h"
#include "jit/x86_64/emit.h"
#include "signal/chain.h"
#include "signal/ucontext.h"
#include "sym/symbols.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>

#define SPAN_MAX 24             /* >= 5 + longest instruction */
#define SCAN_MAX (256u << 10)   /* functions longer than this: int3 mode */
#define OOL_MAX (SPAN_MAX * BPFRT_X86_RELOC_MAX / 2 + 16)
#define TRAMP_MAX 1024
#define KRET_DEPTH 64
#define KRET_SAME_STACK (8ul << 20) /* farther apart: another stack (sigaltstack) */

enum site_state { SITE_OFF, SITE_INT3, SITE_OPT };

struct kprobe_site {
	uintptr_t addr;
	uintptr_t func, func_end;       /* containing symbol; 0 if unknown */
	uint8_t span;                   /* displaced bytes */
	uint8_t first_len;              /* length of the first instruction */
	uint8_t insn_cnt;
	bool can_opt;
	bool entry;                     /* a function's entry: only xmm0-7 live */
	uint8_t orig[SPAN_MAX];
	struct bpfrt_x86_insn insns[SPAN_MAX];
	uintptr_t ool;
	uintptr_t tramp;
	uintptr_t kret_landing;         /* in tramp: a kretprobe's return address (0: none) */
	enum site_state state;
	uint32_t links, force_int3;
	struct bpfrt_prog_array *_Atomic progs;
	struct bpfrt_prog_array *_Atomic rprogs;
	struct kprobe_site *next;
};

struct kprobe_link {
	struct bpfrt_link link;
	struct kprobe_site *site;
	bool retprobe;
	bool int3_only;
};

static pthread_mutex_t kprobe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kprobe_site *sites;

/* ---- JIT memory near the probed code ------------------------------------- */

#define ARENA_SIZE (64u << 10)

struct kp_arena {
	struct bpfrt_execmem *mem;
	uintptr_t base;
	size_t used;
	struct kp_arena *next;
};

static struct kp_arena *arenas;

static bool in_rel32(uintptr_t from, uintptr_t to)
{
	int64_t d = (int64_t)(to - from);

	return d == (int32_t)d;
}

/* len bytes of JIT memory within rel32 reach of near (both ends). */
static struct kp_arena *arena_get(size_t len, uintptr_t near, size_t *off)
{
	struct kp_arena *a;

	for (a = arenas; a; a = a->next)
		if (a->used + len <= ARENA_SIZE && in_rel32(near, a->base) &&
		    in_rel32(near, a->base + ARENA_SIZE))
			break;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return NULL;
		a->mem = bpfrt_execmem_alloc_near(ARENA_SIZE, (const void *)near);
		if (!a->mem) {
			free(a);
			bpfrt_err(-ENOMEM, "kprobe: no JIT memory within reach of %#lx",
				  (unsigned long)near);
			return NULL;
		}
		a->base = (uintptr_t)bpfrt_execmem_addr(a->mem);
		a->next = arenas;
		arenas = a;
	}
	*off = a->used;
	a->used += (len + 15) & ~(size_t)15;
	return a;
}

/* ---- planning ------------------------------------------------------------- */

/* Copies [start, start + len) of code with the original bytes of armed
 * sites put back, so decoding never sees our int3s and jmps. */
static void read_clean(uintptr_t start, size_t len, uint8_t *buf)
{
	memcpy(buf, (const void *)start, len);
	for (struct kprobe_site *s = sites; s; s = s->next) {
		if (s->state == SITE_OFF)
			continue;
		for (size_t i = 0; i < s->span; i++)
			if (s->addr + i >= start && s->addr + i < start + len)
				buf[s->addr + i - start] = s->orig[i];
	}
}

static bool overlaps_armed(uintptr_t addr, size_t len, const struct kprobe_site *self)
{
	for (struct kprobe_site *s = sites; s; s = s->next)
		if (s != self && s->state != SITE_OFF && s->addr < addr + len &&
		    addr < s->addr + s->span)
			return true;
	return false;
}

/* Linear sweep of [func, func_end): -EINVAL if addr is inside an
 * instruction; sets *opt_ok false if a branch lands in (addr, addr + span)
 * or the function cannot be fully decoded or jumps indirectly. */
static int sweep_function(struct kprobe_site *s, const uint8_t *code, bool *opt_ok)
{
	uintptr_t pc = s->func, end = s->func_end, prev = pc;
	bool seen = false;

	while (pc < end) {
		struct bpfrt_x86_insn in;

		if (bpfrt_x86_decode(code + (pc - s->func), end - pc, pc, &in)) {
			*opt_ok = false;
			break;
		}
		if (in.bad)
			*opt_ok = false;
		if (pc == s->addr)
			seen = true;
		else if (pc > s->addr && !seen)
			return bpfrt_err(-EINVAL, "kprobe: %#lx is not an instruction boundary "
					 "(the instruction at %#lx covers it)", (unsigned long)s->addr,
					 (unsigned long)prev);
		if ((in.kind == BPFRT_X86_JMP || in.kind == BPFRT_X86_JCC ||
		     in.kind == BPFRT_X86_CALL) &&
		    in.target > s->addr && in.target < s->addr + s->span)
			*opt_ok = false;
		if (in.kind == BPFRT_X86_JMP_IND)
			*opt_ok = false;
		prev = pc;
		pc += in.len;
	}
	bpfrt_err_clear();
	return 0;
}

/* gcc moves unlikely blocks to a NAME.cold symbol that jumps back into
 * the function: its branches count too. */
static void sweep_cold_part(struct kprobe_site *s, bool *opt_ok)
{
	const struct bpfrt_sym *fn, *cold;
	char name[512];
	uint8_t *code;

	if (bpfrt_sym_at(s->func, &fn) ||
	    snprintf(name, sizeof(name), "%s.cold", fn->name) >= (int)sizeof(name) ||
	    bpfrt_sym_lookup_in(fn->module, name, &cold)) {
		bpfrt_err_clear();      /* no cold part: nothing to sweep */
		return;
	}
	if (!cold->size || cold->size > SCAN_MAX || !(code = malloc(cold->size))) {
		*opt_ok = false;
		return;
	}
	read_clean(cold->addr, cold->size, code);
	for (uintptr_t pc = cold->addr; pc < cold->addr + cold->size && *opt_ok;) {
		struct bpfrt_x86_insn in;

		if (bpfrt_x86_decode(code + (pc - cold->addr), cold->addr + cold->size - pc, pc,
				     &in) || in.kind == BPFRT_X86_JMP_IND) {
			*opt_ok = false;
			break;
		}
		if ((in.kind == BPFRT_X86_JMP || in.kind == BPFRT_X86_JCC ||
		     in.kind == BPFRT_X86_CALL) &&
		    in.target > s->addr && in.target < s->addr + s->span)
			*opt_ok = false;
		pc += in.len;
	}
	bpfrt_err_clear();
	free(code);
}

static int site_plan(struct kprobe_site *s)
{
	uint8_t buf[SPAN_MAX + 16];
	size_t avail = sizeof(buf), off = 0;
	bool opt_ok = s->func && s->func_end - s->addr >= 5 && s->func_end - s->func <= SCAN_MAX;
	int err;

	if (s->func && s->func_end - s->addr < avail)
		avail = s->func_end - s->addr;
	if (s->func && s->func_end - s->func <= SCAN_MAX) {
		/* First of all: is addr an instruction boundary? */
		uint8_t *code = malloc(s->func_end - s->func);
		bool ignored = true;

		if (!code)
			return bpfrt_err(-ENOMEM, "kprobe: out of memory");
		read_clean(s->func, s->func_end - s->func, code);
		s->span = 0;
		err = sweep_function(s, code, &ignored);
		free(code);
		if (err)
			return err;
	}
	read_clean(s->addr, avail, buf);
	err = bpfrt_x86_decode(buf, avail, s->addr, &s->insns[0]);
	if (err)
		return err;
	if (s->insns[0].bad)
		return bpfrt_err(-EOPNOTSUPP, "kprobe: instruction at %#lx cannot run out of "
				 "line: %s", (unsigned long)s->addr, s->insns[0].bad);
	s->first_len = s->insns[0].len;
	s->insn_cnt = 1;
	off = s->first_len;
	/* The span for jmp mode: whole instructions covering 5 bytes. */
	while (opt_ok && off < 5) {
		if (bpfrt_x86_ends_flow(&s->insns[s->insn_cnt - 1]) ||
		    s->insns[s->insn_cnt - 1].kind == BPFRT_X86_CALL ||
		    s->insns[s->insn_cnt - 1].kind == BPFRT_X86_CALL_IND ||
		    bpfrt_x86_decode(buf + off, avail - off, s->addr + off, &s->insns[s->insn_cnt]) ||
		    s->insns[s->insn_cnt].bad) {
			opt_ok = false;
			break;
		}
		off += s->insns[s->insn_cnt].len;
		s->insn_cnt++;
	}
	bpfrt_err_clear();
	if (opt_ok && (off > SPAN_MAX || s->addr + off > s->func_end ||
		       overlaps_armed(s->addr, off, s)))
		opt_ok = false;
	if (opt_ok) {
		uint8_t *code = malloc(s->func_end - s->func);

		if (!code)
			return bpfrt_err(-ENOMEM, "kprobe: out of memory");
		read_clean(s->func, s->func_end - s->func, code);
		s->span = (uint8_t)off;
		err = sweep_function(s, code, &opt_ok);
		free(code);
		if (err)
			return err;
		if (opt_ok)
			sweep_cold_part(s, &opt_ok);
	}
	if (!opt_ok) {
		s->insn_cnt = 1;
		off = s->first_len;
	}
	s->can_opt = opt_ok;
	s->span = (uint8_t)off;
	read_clean(s->addr, s->span, s->orig);
	return 0;
}

/* Appends the relocated span to b (whose first byte runs at `at`), then a
 * jmp back unless the span ends in a control transfer. Returns 0 or
 * -errno. */
static int emit_span(const struct kprobe_site *s, uintptr_t at, struct x86_buf *b)
{
	size_t off = 0;

	for (unsigned int i = 0; i < s->insn_cnt; i++) {
		int n;

		if (!x86_room(b, BPFRT_X86_RELOC_MAX))
			return bpfrt_err(-E2BIG, "kprobe: displaced code too long");
		n = bpfrt_x86_relocate(&s->insns[i], s->orig + off, s->addr + off, at + b->len,
				       b->p + b->len);
		if (n < 0)
			return bpfrt_err(n, "kprobe: rip-relative operand at %#lx out of reach "
					 "of JIT memory near it", (unsigned long)(s->addr + off));
		b->len += (size_t)n;
		off += s->insns[i].len;
	}
	if (!bpfrt_x86_ends_flow(&s->insns[s->insn_cnt - 1])) {
		int64_t rel = (int64_t)(s->addr + s->span - (at + b->len + 5));

		if (!is_simm32(rel))
			return bpfrt_err(-ERANGE, "kprobe: out-of-line code out of reach");
		emit_jmp_rel32(b, (int32_t)rel);
	}
	return b->overflow ? bpfrt_err(-E2BIG, "kprobe: displaced code too long") : 0;
}

static int build_ool(struct kprobe_site *s)
{
	uint8_t code[OOL_MAX];
	struct x86_buf b = { .p = code, .cap = sizeof(code) };
	size_t off;
	struct kp_arena *a = arena_get(sizeof(code), s->addr, &off);
	int n;

	if (!a)
		return -ENOMEM;
	n = emit_span(s, a->base + off, &b);
	if (n < 0)
		return n;
	n = bpfrt_execmem_copy(a->mem, off, code, b.len);
	if (n)
		return bpfrt_err(n, "kprobe: cannot write out-of-line code");
	s->ool = a->base + off;
	return 0;
}

/* ---- trampoline (jmp mode) ------------------------------------------------- */

#define REGS_OFF(field) ((int32_t)offsetof(struct bpfrt_pt_regs, field))
#define REGS_SIZE ((int32_t)sizeof(struct bpfrt_pt_regs))

/* Where each register goes in struct bpfrt_pt_regs (RSP: sp). */
static const int32_t regs_off[16] = {
	[RAX] = REGS_OFF(ax), [RCX] = REGS_OFF(cx), [RDX] = REGS_OFF(dx), [RBX] = REGS_OFF(bx),
	[RSP] = REGS_OFF(sp), [RBP] = REGS_OFF(bp), [RSI] = REGS_OFF(si), [RDI] = REGS_OFF(di),
	[R8] = REGS_OFF(r8), [R9] = REGS_OFF(r9), [R10] = REGS_OFF(r10), [R11] = REGS_OFF(r11),
	[R12] = REGS_OFF(r12), [R13] = REGS_OFF(r13), [R14] = REGS_OFF(r14), [R15] = REGS_OFF(r15),
};

/* The trampoline's stack below the probed code's: the red zone it skips,
 * the flags word, then pt_regs. Its accesses use a disp32 throughout. */
#define RED_ZONE 128

/* mov [rsp + off], reg (store) or mov reg, [rsp + off] */
static void regs_mov(struct x86_buf *b, int reg, int32_t off, bool store)
{
	emit_rm_min(b, false, true, store ? 0x89 : 0x8b, reg, RSP, off, false, 4);
}

/* mov qword [rsp + off], simm32 */
static void regs_store_imm(struct x86_buf *b, int32_t off, int32_t imm)
{
	emit_rm_min(b, false, true, 0xc7, 0, RSP, off, false, 4);
	emit_u32(b, (uint32_t)imm);
}

static uint32_t xsave_size;     /* 0: no xsave, fxsave instead */

/* LAHF in 64-bit mode (CPUID 0x80000001 ECX bit 0): the flags at a
 * function's entry or return are read with lahf/seto instead of pushfq,
 * which costs about 9 ns (measured in the trigger bench; see
 * emit_entry_flags). Absent on the first x86-64 CPUs only. */
static bool have_lahf;

static void fp_probe(void)
{
	unsigned int a, b, c, d;

	have_lahf = __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & 1u);

	if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 26)) && (c & (1u << 27)) &&
	    __get_cpuid_count(0xd, 0, &a, &b, &c, &d) && b >= 576)
		xsave_size = b;
}

/* The xsave area: the legacy region, then the 64-byte header that must be
 * zeroed before xsave (the eight words at 512). */
#define XSAVE_HEADER 512

/* xsave64/xrstor64/fxsave64/fxrstor64 [rsp]: 0f ae /digit with REX.W */
enum { FXSAVE = 0, FXRSTOR = 1, XSAVE = 4, XRSTOR = 5 };

static void fp_area_op(struct x86_buf *b, int digit)
{
	emit_rm(b, false, true, 0x0fae, digit, RSP, 0, false);
}

/* eax = edx = -1: every state component */
static void xsave_mask_all(struct x86_buf *b)
{
	emit_mov_imm64(b, RAX, 0xffffffffu);
	emit_mov_imm64(b, RDX, 0xffffffffu);
}

static void emit_fp_save(struct x86_buf *b, bool entry, uint32_t xsave_bytes)
{
	if (entry) {
		/* only the argument registers are live: xmm0-7, 16-aligned */
		emit_lea(b, true, RSP, RSP, -128);
		emit_alu_ri(b, true, ALU_AND, RSP, -16);
		for (int i = 0; i < 8; i++)
			emit_sse_mov(b, SSE_MOVDQA_STORE, i, RSP, 16 * i, 1);
		return;
	}
	if (!xsave_bytes) {
		emit_alu_ri(b, true, ALU_SUB, RSP, 512);
		emit_alu_ri(b, true, ALU_AND, RSP, -16);
		fp_area_op(b, FXSAVE);
		return;
	}
	emit_alu_ri(b, true, ALU_SUB, RSP, (int32_t)xsave_bytes);
	emit_alu_ri(b, true, ALU_AND, RSP, -64);
	for (int i = 0; i < 8; i++)
		regs_store_imm(b, XSAVE_HEADER + 8 * i, 0);
	xsave_mask_all(b);
	fp_area_op(b, XSAVE);
}

static void emit_fp_restore(struct x86_buf *b, bool entry, uint32_t xsave_bytes)
{
	if (entry) {
		for (int i = 0; i < 8; i++)
			emit_sse_mov(b, SSE_MOVDQA_LOAD, i, RSP, 16 * i, 1);
		return;
	}
	if (!xsave_bytes) {
		fp_area_op(b, FXRSTOR);
		return;
	}
	xsave_mask_all(b);
	fp_area_op(b, XRSTOR);
}

static int kprobe_handle(struct kprobe_site *s, struct bpfrt_pt_regs *regs);
void bpfrt_kretprobe_tramp(void);
void bpfrt_kretprobe_tramp_pushf(void);

/* rax = the flags word pushfq would give at a function's entry or
 * return, from lahf (SF ZF AF PF CF and the reserved bit 1) and seto (OF)
 * with IF set: user code always runs with IF, the ABI has DF clear at
 * every call and return, and TF is hidden from user code by Linux. (AC
 * and ID, which no conforming code leaves set across a call, read 0.)
 * Clobbers rcx; no flag is changed before lahf and seto read them. */
static void emit_entry_flags(struct x86_buf *b)
{
	emit1(b, 0x9f);                                 /* lahf */
	emit2(b, 0x0f, 0x90); emit1(b, 0xc0);           /* seto al */
	emit2(b, 0x0f, 0xb6); emit1(b, 0xcc);           /* movzx ecx, ah */
	emit2(b, 0x0f, 0xb6); emit1(b, 0xc0);           /* movzx eax, al */
	emit_shift_ri(b, false, SH_SHL, RAX, 11);       /* OF is bit 11 */
	emit_alu_rr(b, false, ALU_OR, RAX, RCX);
	emit_alu_ri32(b, false, ALU_OR, RAX, 0x200);    /* IF */
}

/* Where a kretprobe's return goes (the site landings jump there). */
static uintptr_t kret_return_tramp(bool lahf)
{
	return lahf ? (uintptr_t)bpfrt_kretprobe_tramp : (uintptr_t)bpfrt_kretprobe_tramp_pushf;
}

/* The return-stack push runs from the generated run path without an FP
 * save (kprobe_kret_enter): built to use general registers only, as is
 * everything it calls but the miss counter (a locked add) and the
 * stack's first mapping, which the run path leaves to the C path. Other
 * compilers: the C path does it. */
#if defined(__GNUC__) && !defined(__clang__)
#define KRET_NO_FP __attribute__((target("general-regs-only")))
#define KRET_FAST_ENTER 1
#else
#define KRET_NO_FP
#define KRET_FAST_ENTER 0
#endif

static __thread void *kret_mem __attribute__((tls_model("initial-exec")));
KRET_NO_FP static int kprobe_kret_enter(struct kprobe_site *s, struct bpfrt_pt_regs *regs);


/* The trampoline's code for execution at `at`: the pt_regs, the site's
 * run path (the backend's PROBE function: its one JIT'ed program that
 * calls nothing, inline; everything else through handler(site_arg, regs)
 * in C, behind a save of the FP state: xmm0-7 at a function's entry,
 * xsave of xsave_bytes (0: fxsave) elsewhere), the restores, then the
 * displaced span. At a function's entry the return landing follows the
 * restores (*landing_off): when the run put the landing's address in the
 * return slot (eax != 0), `call` the next instruction pushes it on the
 * return stack buffer too, so the function's ret to it and the landing's
 * own ret to the real caller are both predicted. Returns its length or
 * -errno. */
static int tramp_code(const struct kprobe_site *s, uintptr_t site_arg, uintptr_t handler,
		      uint32_t xsave_bytes, bool lahf, uintptr_t at, uint8_t code[TRAMP_MAX],
		      uint32_t *landing_off)
{
	struct x86_buf b = { .p = code, .cap = TRAMP_MAX };
	bool flags_inline = s->entry && lahf;
	size_t call_run, to_span = 0, call_skip = 0, run_fn, c_path;
	int err, n;

	emit_lea(&b, true, RSP, RSP, -RED_ZONE);
	if (flags_inline)
		emit_lea(&b, true, RSP, RSP, -8);         /* the flags word's place */
	else
		emit1(&b, X86_PUSHFQ);
	emit_lea(&b, true, RSP, RSP, -REGS_SIZE);
	for (int r = RAX; r <= R15; r++)
		if (r != RSP)
			regs_mov(&b, r, regs_off[r], true);
	if (flags_inline)
		emit_entry_flags(&b);
	else
		regs_mov(&b, RAX, REGS_SIZE, false);              /* the pushed flags */
	regs_mov(&b, RAX, REGS_OFF(flags), true);
	emit_lea(&b, true, RAX, RSP, REGS_SIZE + 8 + RED_ZONE);  /* rsp at the probe */
	regs_mov(&b, RAX, regs_off[RSP], true);
	emit_movabs(&b, RAX, s->addr + 1);
	regs_mov(&b, RAX, REGS_OFF(ip), true);
	regs_store_imm(&b, REGS_OFF(orig_ax), -1);
	regs_store_imm(&b, REGS_OFF(cs), 0x33);
	regs_store_imm(&b, REGS_OFF(ss), 0x2b);
	emit_mov_rr(&b, true, RBX, RSP);
	emit_alu_ri(&b, true, ALU_AND, RSP, -16);
	emit_mov_rr(&b, true, RDI, RBX);
	emit_call_rel32(&b, 0);                                   /* run_fn */
	call_run = b.len - 4;
	emit_mov_rr(&b, true, RSP, RBX);
	if (s->entry)
		emit_test_rr(&b, false, RAX, RAX);                /* kept by the movs below */
	for (int r = RAX; r <= R15; r++)
		if (r != RSP)
			regs_mov(&b, r, regs_off[r], false);
	emit_lea(&b, true, RSP, RSP, REGS_SIZE);
	/* popfq is slow (tens of cycles); at a function's entry no code
	 * reads the flags its caller left (the ABI keeps none across calls) */
	if (s->entry)
		emit_lea(&b, true, RSP, RSP, 8);
	else
		emit1(&b, X86_POPFQ);
	emit_rm_min(&b, false, true, 0x8d, RSP, RSP, RED_ZONE, false, 4); /* lea rsp,[rsp+128] */
	if (s->entry) {
		to_span = emit_jcc_fwd(&b, CC_E);
		emit_call_rel32(&b, 0);                           /* call skip */
		call_skip = b.len - 4;
		*landing_off = (uint32_t)b.len;
		/* the function returned here: r11 is free (the return
		 * trampoline keeps rax, rdx and rbx only) */
		emit_branch_abs(&b, at, kret_return_tramp(lahf), false, R11);
		emit_label_here(&b, call_skip);
		emit_lea(&b, true, RSP, RSP, 8);                  /* drop the pushed landing */
		emit_label_here(&b, to_span);
	} else {
		*landing_off = 0;
	}
	if (b.len + s->insn_cnt * BPFRT_X86_RELOC_MAX + 5 > TRAMP_MAX)
		return bpfrt_err(-E2BIG, "kprobe: trampoline too long");
	err = emit_span(s, at, &b);
	if (err)
		return err;

	/* the C path: handler(site, regs) behind the FP state's save; entered
	 * by a jmp from run_fn, so as a function called by the main path */
	c_path = b.len;
	emit_push(&b, RBP);
	emit_mov_rr(&b, true, RBP, RSP);
	emit_push(&b, RBX);
	emit_push(&b, RAX);                                       /* [rbp-16]: the result */
	emit_mov_rr(&b, true, RBX, RDI);
	emit_fp_save(&b, s->entry, xsave_bytes);
	emit_mov_rr(&b, true, RSI, RBX);
	emit_movabs(&b, RDI, site_arg);
	emit_movabs(&b, RAX, handler);
	emit_call_r(&b, RAX);
	emit_rm_min(&b, false, true, 0x89, RAX, RBP, -16, false, 1);
	emit_fp_restore(&b, s->entry, xsave_bytes);
	emit_rm_min(&b, false, true, 0x8b, RAX, RBP, -16, false, 1);
	emit_lea(&b, true, RSP, RBP, -8);
	emit_pop(&b, RBX);
	emit_pop(&b, RBP);
	emit1(&b, X86_RET);
	if (b.overflow)
		return bpfrt_err(-E2BIG, "kprobe: trampoline too long");

	run_fn = (b.len + 15) & ~(size_t)15;
	while (b.len < run_fn && !b.overflow)
		emit1(&b, X86_INT3);
	struct bpfrt_tramp_desc d = {
		.type = BPFRT_TRAMP_PROBE,
		.progs_slot = (const void *)(site_arg + offsetof(struct kprobe_site, progs)),
		.rprogs_slot = (const void *)(site_arg + offsetof(struct kprobe_site, rprogs)),
		.c_path = at + c_path, .layout = bpfrt_tramp_layout(),
		.md = (const void *)site_arg,
		.kret_enter = KRET_FAST_ENTER && s->entry ? (uintptr_t)kprobe_kret_enter : 0,
		.tls_kret = bpfrt_tramp_tls_offset(&kret_mem),
	};

	n = bpfrt_x86_prepare_trampoline(b.p + b.len, b.cap - b.len, at + b.len, &d);
	if (n < 0)
		return bpfrt_err(n, "kprobe: cannot generate the run path");
	b.len += (size_t)n;
	int32_t rel = (int32_t)((int64_t)run_fn - (int64_t)(call_run + 4));

	memcpy(b.p + call_run, &rel, 4);
	return (int)b.len;
}

static int build_tramp(struct kprobe_site *s)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint8_t code[TRAMP_MAX];
	size_t off;
	struct kp_arena *a;
	uint32_t landing;
	int n;

	pthread_once(&once, fp_probe);
	a = arena_get(sizeof(code), s->addr, &off);
	if (!a)
		return -ENOMEM;
	n = tramp_code(s, (uintptr_t)s, (uintptr_t)kprobe_handle, xsave_size, have_lahf,
		       a->base + off, code, &landing);
	if (n < 0)
		return n;
	n = bpfrt_execmem_copy(a->mem, off, code, (size_t)n);
	if (n)
		return bpfrt_err(n, "kprobe: cannot write the trampoline");
	s->tramp = a->base + off;
	if (landing)
		s->kret_landing = s->tramp + landing;
	return 0;
}

int bpfrt_kprobe_tramp_code(uintptr_t addr, const uint8_t *code, size_t len, bool entry,
			    uint32_t xsave_bytes, uintptr_t site_arg, uintptr_t at,
			    uint8_t *out, size_t cap)
{
	struct kprobe_site s = { .addr = addr, .entry = entry };
	uint8_t buf[TRAMP_MAX];
	size_t off = 0;
	int n, err;

	if (len > SPAN_MAX)
		return bpfrt_err(-E2BIG, "kprobe: span of %zu bytes", len);
	memcpy(s.orig, code, len);
	while (off < 5 && off < len) {
		err = bpfrt_x86_decode(code + off, len - off, addr + off, &s.insns[s.insn_cnt]);
		if (err)
			return err;
		off += s.insns[s.insn_cnt++].len;
	}
	if (!s.insn_cnt)
		return bpfrt_err(-EINVAL, "kprobe: no instruction to displace");
	s.span = (uint8_t)off;
	uint32_t landing;

	n = tramp_code(&s, site_arg, (uintptr_t)kprobe_handle, xsave_bytes, true, at, buf,
		       &landing);
	if (n < 0)
		return n;
	if ((size_t)n > cap)
		return bpfrt_err(-E2BIG, "kprobe: trampoline of %d bytes", n);
	memcpy(out, buf, (size_t)n);
	return n;
}

/* ---- run time -------------------------------------------------------------- */

struct kret_entry {
	uintptr_t ret;          /* the real return address */
	uintptr_t sp;           /* where it was on the stack */
	struct kprobe_site *site;
	uintptr_t landing;      /* what took its place there */
};

/* This thread's pending returns, outside static TLS (core/thread_mem.h):
 * made by the thread's first kretprobe entry. */
struct kret_stack {
	uint32_t depth;
	struct kret_entry e[KRET_DEPTH];
};
static __thread void *kret_mem __attribute__((tls_model("initial-exec")));

void bpfrt_kretprobe_tramp(void);
uintptr_t bpfrt_kretprobe_return(struct bpfrt_pt_regs *regs)
	__attribute__((visibility("hidden"), used));

KRET_NO_FP static void count_misses(const struct bpfrt_prog_array *arr)
{
	for (uint32_t i = 0; arr && i < arr->cnt; i++)
		bpfrt_attach_count_miss(arr->items[i].prog);
}

/* Pushes the pending return and puts `landing` (where the return is to
 * go: the site trampoline's landing, or bpfrt_kretprobe_tramp) in the
 * return slot. Returns whether it did. */
KRET_NO_FP static bool kretprobe_enter(struct kprobe_site *s, const struct bpfrt_prog_array *arr,
				       struct bpfrt_pt_regs *regs, uintptr_t landing)
{
	struct kret_stack *ks = kret_mem;
	uintptr_t *slot = (uintptr_t *)(uintptr_t)regs->sp;
	uintptr_t sp = regs->sp;
	uint32_t depth;

	if (__builtin_expect(!ks, 0))
		ks = bpfrt_thread_mem(&kret_mem, sizeof(struct kret_stack));
	if (!ks) {
		count_misses(arr);
		return false;
	}
	depth = ks->depth;

	/* Entries of frames below this one on the same stack are dead (a
	 * longjmp skipped their returns); the same slot is dead too unless
	 * it holds that entry's landing (a tail call from a probed function). */
	while (depth) {
		const struct kret_entry *e = &ks->e[depth - 1];

		if (e->sp > sp || sp - e->sp > KRET_SAME_STACK ||
		    (e->sp == sp && *slot == e->landing))
			break;
		depth--;
	}
	ks->depth = depth;
	if (depth == KRET_DEPTH) {
		count_misses(arr);
		return false;
	}
	ks->e[depth] = (struct kret_entry){ *slot, regs->sp, s, landing };
	/* Published before the swap: a signal handler that runs a probed
	 * function in between stacks on top of it. */
	atomic_signal_fence(memory_order_seq_cst);
	ks->depth = depth + 1;
	atomic_signal_fence(memory_order_seq_cst);
	*slot = landing;
	return true;
}

/* The generated run path's kretprobe entry (inside its read section, the
 * return stack made): nonzero when the return slot now holds the site's
 * landing. */
KRET_NO_FP static int kprobe_kret_enter(struct kprobe_site *s, struct bpfrt_pt_regs *regs)
{
	/* the load itself: run.h's inline load would be a call here (its
	 * target options differ) */
	const struct bpfrt_prog_array *arr = atomic_load_explicit(&s->rprogs, memory_order_acquire);

	return arr && kret_mem && kretprobe_enter(s, arr, regs, s->kret_landing);
}

uintptr_t bpfrt_kretprobe_return(struct bpfrt_pt_regs *regs)
{
	uintptr_t sp = regs->sp - 8;    /* where the return address was */
	struct kret_stack *ks = kret_mem;  /* made by the entry */
	uint32_t i = ks ? ks->depth : 0;
	struct kret_entry e;

	while (i && ks->e[i - 1].sp != sp)
		i--;
	if (!i) {
		/* Cannot happen unless the stack was switched under us. */
		static const char msg[] = "bpfrt: kretprobe return without its entry\n";

		(void)!write(2, msg, sizeof(msg) - 1);
		abort();
	}
	/* Entries above it belong to frames a longjmp skipped. */
	e = ks->e[i - 1];
	ks->depth = i - 1;
	atomic_signal_fence(memory_order_seq_cst);
	regs->ip = e.ret;

	const struct bpfrt_prog_array *arr;

	bpfrt_attach_enter();
	arr = bpfrt_prog_array_load(&e.site->rprogs);
	if (arr && !bpfrt_attach_run_inline(arr, regs)) {
		struct bpfrt_probe_frame outer = bpfrt_probe_frame;

		bpfrt_probe_frame = (struct bpfrt_probe_frame){ regs, e.site->addr };
		bpfrt_prog_array_run(arr, regs);
		bpfrt_probe_frame = outer;
	}
	bpfrt_attach_exit();
	return e.ret;
}

/* The return trampoline: a probed function with a kretprobe returns here.
 * Assembled, not generated: its pt_regs offsets are literals, checked
 * against the structure here. */
#define PT_REGS_AT(field, off) (offsetof(struct bpfrt_pt_regs, field) == (off))
_Static_assert(PT_REGS_AT(r15, 0) && PT_REGS_AT(r14, 8) && PT_REGS_AT(r13, 16) &&
	       PT_REGS_AT(r12, 24) && PT_REGS_AT(bp, 32) && PT_REGS_AT(bx, 40) &&
	       PT_REGS_AT(r11, 48) && PT_REGS_AT(r10, 56) && PT_REGS_AT(r9, 64) &&
	       PT_REGS_AT(r8, 72) && PT_REGS_AT(ax, 80) && PT_REGS_AT(cx, 88) &&
	       PT_REGS_AT(dx, 96) && PT_REGS_AT(si, 104) && PT_REGS_AT(di, 112) &&
	       PT_REGS_AT(orig_ax, 120) && PT_REGS_AT(ip, 128) && PT_REGS_AT(cs, 136) &&
	       PT_REGS_AT(flags, 144) && PT_REGS_AT(sp, 152) && PT_REGS_AT(ss, 160) &&
	       sizeof(struct bpfrt_pt_regs) == 168, "bpfrt_kretprobe_tramp's pt_regs offsets");
__asm__(".text\n"
	".macro bpfrt_kret_tramp name, flags\n"
	".globl \\name\n"
	".hidden \\name\n"
	".type \\name, @function\n"
	".p2align 4\n"
	"\\name:\n"
	"	lea -176(%rsp), %rsp\n"        /* pt_regs + the real return address;
					 * the flags are read below */
	"	mov %r15, 0(%rsp)\n"
	"	mov %r14, 8(%rsp)\n"
	"	mov %r13, 16(%rsp)\n"
	"	mov %r12, 24(%rsp)\n"
	"	mov %rbp, 32(%rsp)\n"
	"	mov %rbx, 40(%rsp)\n"
	"	mov %r11, 48(%rsp)\n"
	"	mov %r10, 56(%rsp)\n"
	"	mov %r9, 64(%rsp)\n"
	"	mov %r8, 72(%rsp)\n"
	"	mov %rax, 80(%rsp)\n"
	"	mov %rcx, 88(%rsp)\n"
	"	mov %rdx, 96(%rsp)\n"
	"	mov %rsi, 104(%rsp)\n"
	"	mov %rdi, 112(%rsp)\n"
	"	movq $-1, 120(%rsp)\n"
	"	movq $0, 128(%rsp)\n"
	"	movq $0x33, 136(%rsp)\n"
	"	\\flags\n"
	"	mov %rax, 144(%rsp)\n"
	"	lea 176(%rsp), %rax\n"
	"	mov %rax, 152(%rsp)\n"
	"	movq $0x2b, 160(%rsp)\n"
	"	mov %rsp, %rbx\n"
	"	and $-16, %rsp\n"
	"	sub $128, %rsp\n"
	"	movdqa %xmm0, 0(%rsp)\n"
	"	movdqa %xmm1, 16(%rsp)\n"
	"	movdqa %xmm2, 32(%rsp)\n"
	"	movdqa %xmm3, 48(%rsp)\n"
	"	movdqa %xmm4, 64(%rsp)\n"
	"	movdqa %xmm5, 80(%rsp)\n"
	"	movdqa %xmm6, 96(%rsp)\n"
	"	movdqa %xmm7, 112(%rsp)\n"
	"	mov %rbx, %rdi\n"
	"	call bpfrt_kretprobe_return\n"
	"	movdqa 0(%rsp), %xmm0\n"
	"	movdqa 16(%rsp), %xmm1\n"
	"	movdqa 32(%rsp), %xmm2\n"
	"	movdqa 48(%rsp), %xmm3\n"
	"	movdqa 64(%rsp), %xmm4\n"
	"	movdqa 80(%rsp), %xmm5\n"
	"	movdqa 96(%rsp), %xmm6\n"
	"	movdqa 112(%rsp), %xmm7\n"
	"	mov %rbx, %rsp\n"
	"	mov %rax, 168(%rsp)\n"
	/* every register as the function left it, not only what the ABI
	 * keeps: a caller built with -fipa-ra relies on a known callee
	 * leaving its call-clobbered registers alone (the C call above
	 * keeps r12-r15 and rbp itself) */
	"	mov 40(%rsp), %rbx\n"
	"	mov 48(%rsp), %r11\n"
	"	mov 56(%rsp), %r10\n"
	"	mov 64(%rsp), %r9\n"
	"	mov 72(%rsp), %r8\n"
	"	mov 80(%rsp), %rax\n"
	"	mov 88(%rsp), %rcx\n"
	"	mov 96(%rsp), %rdx\n"
	"	mov 104(%rsp), %rsi\n"
	"	mov 112(%rsp), %rdi\n"
	"	add $168, %rsp\n"
	"	ret\n"
	".size \\name, .-\\name\n"
	".endm\n"
	/* the flags as emit_entry_flags builds them */
	"bpfrt_kret_tramp bpfrt_kretprobe_tramp, \"lahf; seto %al; movzbl %ah, %ecx; movzbl %al, %eax; shl $11, %eax; or %ecx, %eax; or $0x200, %eax\"\n"
	"bpfrt_kret_tramp bpfrt_kretprobe_tramp_pushf, \"pushfq; popq %rax\"\n"
	".purgem bpfrt_kret_tramp\n");

/* The programs of a site, then its kretprobe entry with `landing` as the
 * return address. may_override: an entry site's int3 path, where a
 * program's bpf_override_return can make the function return at once;
 * true is returned then, with *rc. *swapped: the return address was
 * replaced. */
static bool kprobe_run(struct kprobe_site *s, struct bpfrt_pt_regs *regs, bool may_override,
		       uint64_t *rc, uintptr_t landing, bool *swapped)
{
	const struct bpfrt_prog_array *arr;
	bool override = false;

	bpfrt_attach_enter();
	arr = bpfrt_prog_array_load(&s->progs);
	if (arr && !bpfrt_attach_run_inline(arr, regs)) {
		struct bpfrt_probe_frame outer = bpfrt_probe_frame;

		bpfrt_probe_frame = (struct bpfrt_probe_frame){
			regs, s->addr, s->entry, .may_override = may_override && s->entry };
		bpfrt_prog_array_run(arr, regs);
		override = bpfrt_probe_frame.override;
		*rc = bpfrt_probe_frame.override_rc;
		bpfrt_probe_frame = outer;
	}
	*swapped = false;
	arr = bpfrt_prog_array_load(&s->rprogs);
	if (arr)
		*swapped = kretprobe_enter(s, arr, regs, landing);
	bpfrt_attach_exit();
	return override;
}

/* The trampoline's C path (jmp mode: no override, such sites stay int3):
 * nonzero when the return slot now holds the trampoline's landing. */
static int kprobe_handle(struct kprobe_site *s, struct bpfrt_pt_regs *regs)
{
	uint64_t rc;
	bool swapped;

	kprobe_run(s, regs, false, &rc, s->kret_landing, &swapped);
	return swapped;
}

static bool kprobe_trap(void *ctx, ucontext_t *uc, uintptr_t addr)
{
	struct kprobe_site *s = ctx;
	struct bpfrt_pt_regs regs;

	bpfrt_uc_pt_regs(uc, &regs);
	regs.ip = addr + 1;

	/* Interrupted between the two stores of bpfrt_rcu_read_lock(): a
	 * nested section would not be seen by grace periods. Skip. */
	if (bpfrt_rcu_self.nesting &&
	    !atomic_load_explicit(&bpfrt_rcu_self.ctr, memory_order_relaxed)) {
		count_misses(atomic_load(&s->progs));
		count_misses(atomic_load(&s->rprogs));
	} else {
		uint64_t rc = 0;
		bool swapped;

		if (kprobe_run(s, &regs, true, &rc, kret_return_tramp(have_lahf), &swapped)) {
			/* bpf_override_return at a function's entry: return to
			 * the caller now (the return address is at rsp; a
			 * kretprobe's trampoline, if one took its place, runs
			 * as the function's return) */
			uintptr_t sp = bpfrt_uc_sp(uc);

			bpfrt_uc_set_retval(uc, rc);
			bpfrt_uc_set_pc(uc, *(const uintptr_t *)sp);
			bpfrt_uc_set_sp(uc, sp + 8);
			return true;
		}
	}
	bpfrt_uc_set_pc(uc, s->ool);
	return true;
}

/* ---- quiesce ----------------------------------------------------------------- */

#define QUIESCE_TAG 0xb9f0000000000000ull

static int quiesce_sig;
static _Atomic uint32_t q_gen, q_acks;
static _Atomic bool q_busy;
static uintptr_t q_lo, q_hi;

/* Ours: SI_QUEUE with the tag; other deliveries go to the host's
 * disposition (signal/chain.h). */
static bool quiesce_signal(int sig, siginfo_t *si, ucontext_t *uc)
{
	uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;

	if (si->si_code != SI_QUEUE || (v & ~0xffffffffull) != QUIESCE_TAG)
		return false;
	if ((uint32_t)v != atomic_load(&q_gen))
		return true;    /* an answer to a round that gave up */
	uintptr_t pc = bpfrt_uc_pc(uc);

	if (pc > q_lo && pc < q_hi)
		atomic_store(&q_busy, true);
	atomic_fetch_add(&q_acks, 1);
	return true;
}

static void quiesce_install(void)
{
	quiesce_sig = SIGRTMAX - 6;
	if (bpfrt_signal_handle(quiesce_sig, quiesce_signal, 0))
		quiesce_sig = 0;
}

/* The user pc of a thread asleep in the kernel, 0 if it is running. */
static uintptr_t sleeping_pc(pid_t tid)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || !strncmp(buf, "running", 7))
		return 0;
	buf[n] = 0;
	char *last = strrchr(buf, ' ');

	return last ? (uintptr_t)strtoull(last + 1, NULL, 16) : 0;
}

/* One round: true if every other thread is known to be outside (lo, hi). */
static bool quiesce_round(uintptr_t lo, uintptr_t hi)
{
	pid_t self = (pid_t)syscall(SYS_gettid), pid = getpid();
	uint32_t gen = atomic_fetch_add(&q_gen, 1) + 1, sent = 0;
	struct dirent *d;
	DIR *dir;
	bool ok = true;

	q_lo = lo;
	q_hi = hi;
	atomic_store(&q_acks, 0);
	atomic_store(&q_busy, false);
	dir = opendir("/proc/self/task");
	if (!dir)
		return false;
	while (ok && (d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);
		uintptr_t pc;

		if (tid <= 0 || tid == self)
			continue;
		pc = sleeping_pc(tid);
		if (pc) {
			if (pc > lo && pc < hi)
				ok = false;
			continue;
		}
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		si.si_signo = quiesce_sig;
		si.si_code = SI_QUEUE;
		si.si_pid = pid;
		si.si_uid = getuid();
		si.si_value.sival_ptr = (void *)(uintptr_t)(QUIESCE_TAG | gen);
		if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, quiesce_sig, &si) == 0)
			sent++;
		/* ESRCH: it exited meanwhile. */
	}
	closedir(dir);
	for (int i = 0; ok && i < 2000 && atomic_load(&q_acks) < sent; i++) {
		struct timespec ts = { 0, 50000 };

		nanosleep(&ts, NULL);
	}
	if (atomic_load(&q_acks) < sent || atomic_load(&q_busy))
		ok = false;
	atomic_fetch_add(&q_gen, 1);    /* late answers are ignored */
	return ok;
}

static bool quiesce(uintptr_t lo, uintptr_t hi)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, quiesce_install);
	if (!quiesce_sig)
		return false;
	for (int tries = 0; tries < 20; tries++) {
		struct timespec ts = { 0, 1000000 };

		if (quiesce_round(lo, hi))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* ---- state changes (under kprobe_lock) ------------------------------------ */

static const uint8_t int3_byte = X86_INT3;

static int site_arm(struct kprobe_site *s)
{
	int err;

	if (memcmp((const void *)s->addr, s->orig, s->span))
		return bpfrt_err(-EBUSY, "kprobe: code at %#lx changed since it was probed",
				 (unsigned long)s->addr);
	if (overlaps_armed(s->addr, s->span, s))
		return bpfrt_err(-EBUSY, "kprobe: %#lx overlaps the displaced bytes of another probe",
				 (unsigned long)s->addr);
	err = bpfrt_trap_register(s->addr, kprobe_trap, s);
	if (err)
		return err;
	err = bpfrt_text_poke((void *)s->addr, &int3_byte, 1);
	if (err) {
		bpfrt_trap_unregister(s->addr);
		return err;
	}
	s->state = SITE_INT3;
	return 0;
}

static void site_optimize(struct kprobe_site *s)
{
	uint8_t jmp[5];

	if (s->state != SITE_INT3 || !s->can_opt || s->force_int3)
		return;
	if (!s->tramp && build_tramp(s)) {
		s->can_opt = false;
		bpfrt_err_clear();
		return;
	}
	if (bpfrt_encode_jmp(jmp, s->addr, s->tramp) ||
	    !quiesce(s->addr, s->addr + s->span))
		return;
	if (!bpfrt_text_poke((void *)s->addr, jmp, 5))
		s->state = SITE_OPT;
}

static int site_unoptimize(struct kprobe_site *s)
{
	int err;

	if (s->state != SITE_OPT)
		return 0;
	err = bpfrt_text_poke((void *)s->addr, &int3_byte, 1);
	if (!err)
		err = bpfrt_text_write((void *)(s->addr + 1), s->orig + 1, 4);
	if (!err)
		s->state = SITE_INT3;
	return err;
}

static int site_disarm(struct kprobe_site *s)
{
	size_t len = 1;
	int err;

	if (s->state == SITE_OFF)
		return 0;
	err = site_unoptimize(s);
	if (err)
		return err;
	/* text_poke emulates a call/jmp being written for threads that trap
	 * meanwhile: it needs the whole instruction. */
	if (s->orig[0] == X86_CALL_REL32 || s->orig[0] == X86_JMP_REL32 || s->orig[0] == X86_JMP_REL8)
		len = s->first_len;
	err = bpfrt_text_poke((void *)s->addr, s->orig, len);
	if (err)
		return err;
	bpfrt_trap_unregister(s->addr);
	s->state = SITE_OFF;
	return 0;
}

/* ---- sites ------------------------------------------------------------------ */

static struct kprobe_site *site_find(uintptr_t addr)
{
	for (struct kprobe_site *s = sites; s; s = s->next)
		if (s->addr == addr)
			return s;
	return NULL;
}

static int site_create(uintptr_t addr, const struct bpfrt_sym *sym, bool entry,
		       struct kprobe_site **out)
{
	struct kprobe_site *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return bpfrt_err(-ENOMEM, "kprobe: out of memory");
	s->addr = addr;
	s->entry = entry;
	if (sym) {
		s->func = sym->addr;
		s->func_end = sym->addr + sym->size;
	}
	err = site_plan(s);
	if (!err)
		err = build_ool(s);
	if (err) {
		free(s);
		return err;
	}
	s->next = sites;
	sites = s;
	*out = s;
	return 0;
}

/* ---- links --------------------------------------------------------------------- */

static int kprobe_detach(struct bpfrt_link *link)
{
	struct kprobe_link *kl = (struct kprobe_link *)link;
	struct kprobe_site *s = kl->site;
	int err;

	pthread_mutex_lock(&kprobe_lock);
	err = bpfrt_prog_array_remove(kl->retprobe ? &s->rprogs : &s->progs, link, true);
	if (!err) {
		s->links--;
		if (kl->int3_only)
			s->force_int3--;
		if (!s->links)
			err = site_disarm(s);
		else
			site_optimize(s);
	}
	pthread_mutex_unlock(&kprobe_lock);
	return err;
}

static void kprobe_dealloc(struct bpfrt_link *link)
{
	bpfrt_link_release(link);
	free(link);
}

static void kprobe_show(const struct bpfrt_link *link, FILE *out)
{
	const struct kprobe_link *kl = (const struct kprobe_link *)link;

	fprintf(out, "  addr %#lx  %s", (unsigned long)kl->site->addr,
		kl->site->state == SITE_OPT ? "jmp" : "int3");
}

static const struct bpfrt_link_ops kprobe_ops = {
	.kind = "kprobe", .detach = kprobe_detach, .dealloc = kprobe_dealloc,
	.show = kprobe_show,
};
static const struct bpfrt_link_ops kretprobe_ops = {
	.kind = "kretprobe", .detach = kprobe_detach, .dealloc = kprobe_dealloc,
	.show = kprobe_show,
};

/* Functions a probe hit runs before any recursion guard can help (as
 * Linux's NOKPROBE_SYMBOL): bpfrt's own (all bpfrt_* symbols and the
 * static helpers of the trap and probe paths) and what they call. */
static bool on_probe_path(const char *name)
{
	static const char *const deny[] = {
		"kprobe_handle", "kprobe_trap", "kretprobe_enter", "quiesce_signal",
		"signal_dispatch", "trap_signal", "trap_get", "poke_emulate", "is_nop",
		"count_misses", "__errno_location", "__restore_rt",
	};

	if (!strncmp(name, "bpfrt_", 6))
		return true;
	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++)
		if (!strcmp(name, deny[i]))
			return true;
	return false;
}

struct code_ctx {
	uintptr_t addr;
	bool found;
};

static int code_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct code_ctx *c = ctx;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && c->addr >= start &&
		    c->addr < start + ph->p_memsz) {
			c->found = true;
			return 1;
		}
	}
	return 0;
}

/* True if addr is in an executable segment of a loaded object. */
static bool is_code(uintptr_t addr)
{
	struct code_ctx c = { addr, false };

	dl_iterate_phdr(code_cb, &c);
	return c.found;
}

/* Where to probe: resolves func + offset (or addr) and checks it is code of
 * a loaded object. *sym is the containing function (NULL if unknown). */
static int resolve(const char *func, uintptr_t addr, uint64_t offset, bool retprobe,
		   uintptr_t *where, const struct bpfrt_sym **sym, bool *entry)
{
	int err;

	if (func) {
		const struct bpfrt_sym *k;

		if ((err = bpfrt_sym_lookup(func, &k)))
			return err;
		if (k->size && offset >= k->size)
			return bpfrt_err(-EINVAL, "kprobe: %s+%#lx is past the function's end (%zu bytes)",
					 func, (unsigned long)offset, k->size);
		addr = k->addr + offset;
	}
	if (!addr || !is_code(addr))
		return bpfrt_err(-EINVAL, "kprobe: %#lx is not code of a loaded object",
				 (unsigned long)addr);
	if (bpfrt_sym_at(addr, sym)) {
		*sym = NULL;    /* code without a symbol: probed in int3 mode */
		bpfrt_err_clear();
	}
	if (*sym && on_probe_path((*sym)->name))
		return bpfrt_err(-EINVAL, "kprobe: %s runs on the probe path itself (it would "
				 "recurse)", (*sym)->name);
	*entry = *sym && (*sym)->addr == addr;
	/* A patchable entry (mk/bpfrt-host.mk) belongs to fentry: probe the
	 * instruction after its nop5, where the registers are the same. */
	if (*entry) {
		const struct bpfrt_patchable_func *pf = bpfrt_patchable_lookup((*sym)->name);

		if (pf && pf->entry == addr)
			addr += 5;
		bpfrt_err_clear();
	}
	if (retprobe && !*entry)
		return bpfrt_err(-EINVAL, "kretprobe: %#lx is not a function's entry",
				 (unsigned long)addr);
	*where = addr;
	return 0;
}

int bpfrt_kprobe_attach(struct bpfrt_prog *prog, const char *func, uintptr_t addr,
			const struct bpfrt_kprobe_opts *opts, struct bpfrt_link **linkp)
{
	const struct bpfrt_kprobe_opts o = {
		.sz = sizeof(o), .cookie = OPTS_GET(opts, cookie, 0),
		.offset = OPTS_GET(opts, offset, 0), .retprobe = OPTS_GET(opts, retprobe, false),
		.mode = OPTS_GET(opts, mode, BPFRT_KPROBE_AUTO),
	};
	const struct bpfrt_sym *sym = NULL;
	struct kprobe_link *kl;
	struct kprobe_site *s;
	uintptr_t where = 0;
	bool entry = false;
	int err;

	if (!prog || !linkp)
		return bpfrt_err(-EINVAL, "kprobe_attach: NULL argument");
	*linkp = NULL;
	if (!OPTS_VALID(opts, bpfrt_kprobe_opts))
		return -EINVAL;
	if (!__atomic_load_n(&prog->loaded, __ATOMIC_ACQUIRE))
		return bpfrt_err(-EINVAL, "kprobe_attach: %s is not loaded", prog->name);
	if (o.retprobe && o.offset)
		return bpfrt_err(-EINVAL, "kretprobe: offset must be 0");
	kl = calloc(1, sizeof(*kl));
	if (!kl)
		return bpfrt_err(-ENOMEM, "kprobe: out of memory");
	kl->retprobe = o.retprobe;
	kl->int3_only = o.mode == BPFRT_KPROBE_INT3;

	pthread_mutex_lock(&kprobe_lock);
	err = resolve(func, addr, o.offset, o.retprobe, &where, &sym, &entry);
	if (err)
		goto fail;
	/* bpf_override_return: bpfrt's rule (override.c), where Linux asks
	 * for an error-injectable function; it works through the int3 path */
	if (bpfrt_prog_calls_override(prog)) {
		if (o.retprobe || !entry) {
			err = bpfrt_err(-EINVAL, "%s: bpf_override_return works only in a kprobe at a "
					"function's entry (offset 0), not %s%s%s%#lx", prog->name,
					o.retprobe ? "a kretprobe at " : "", func ? func : "",
					func ? "+" : "", (unsigned long)o.offset);
			goto fail;
		}
		kl->int3_only = true;
	}
	char target[160];

	if (func && o.offset)
		snprintf(target, sizeof(target), "%s+%#lx", func, (unsigned long)o.offset);
	else if (func)
		snprintf(target, sizeof(target), "%s", func);
	else if (sym)
		snprintf(target, sizeof(target), "%s+%#lx", sym->name,
			 (unsigned long)(where - sym->addr));
	else
		snprintf(target, sizeof(target), "%#lx", (unsigned long)where);
	/* a pt_regs, for a program verified as a kind whose context that is
	 * (kprobe, kretprobe, uprobe); it may read no more than that */
	err = bpfrt_prog_check_kind(prog, o.retprobe ? BPFRT_PROG_KRETPROBE : BPFRT_PROG_KPROBE,
				    target);
	if (!err)
		err = bpfrt_prog_check_ctx(prog, REGS_SIZE, target);
	if (err)
		goto fail;
	err = bpfrt_link_init(&kl->link, o.retprobe ? &kretprobe_ops : &kprobe_ops, prog,
			      target, o.cookie);
	if (err)
		goto fail;
	s = site_find(where);
	if (!s) {
		err = site_create(where, sym, entry, &s);
		if (err)
			goto fail_link;
	}
	kl->site = s;
	struct bpfrt_prog_array_item item = {
		.prog = prog, .cookie = o.cookie, .link = kl,
		.flags = bpfrt_tramp_prog_inlinable(prog) ? BPFRT_TRAMP_ITEM_INLINE : 0,
	};

	err = bpfrt_prog_array_add(o.retprobe ? &s->rprogs : &s->progs, &item);
	if (err)
		goto fail_link;
	s->links++;
	if (kl->int3_only)
		s->force_int3++;
	if (s->state == SITE_OFF)
		err = site_arm(s);
	else if (kl->int3_only)
		err = site_unoptimize(s);
	if (err) {
		bpfrt_prog_array_remove(o.retprobe ? &s->rprogs : &s->progs, kl, true);
		s->links--;
		if (kl->int3_only)
			s->force_int3--;
		goto fail_link;
	}
	site_optimize(s);
	pthread_mutex_unlock(&kprobe_lock);
	bpfrt_link_publish(&kl->link);
	*linkp = &kl->link;
	return 0;

fail_link:
	bpfrt_link_release(&kl->link);
fail:
	pthread_mutex_unlock(&kprobe_lock);
	free(kl);
	return err;
}

uintptr_t bpfrt_kprobe_addr(const struct bpfrt_link *link)
{
	if (!link || (link->ops != &kprobe_ops && link->ops != &kretprobe_ops))
		return 0;
	return ((const struct kprobe_link *)link)->site->addr;
}

bool bpfrt_kprobe_optimized(const struct bpfrt_link *link)
{
	bool opt;

	if (!bpfrt_kprobe_addr(link))
		return false;
	pthread_mutex_lock(&kprobe_lock);
	opt = ((const struct kprobe_link *)link)->site->state == SITE_OPT;
	pthread_mutex_unlock(&kprobe_lock);
	return opt;
}

/* SEC("kprobe/FUNC[+OFF]"), SEC("kretprobe/FUNC"), or "0xADDR". */
int bpfrt_kprobe_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			     const char *target, uint64_t cookie, uint32_t nr_args,
			     struct bpfrt_link **link)
{
	struct bpfrt_kprobe_opts o = { .sz = sizeof(o), .cookie = cookie,
				       .retprobe = kind == BPFRT_PROG_KRETPROBE };
	char name[256];
	const char *plus;
	char *end;

	if (!strncmp(target, "0x", 2)) {
		uintptr_t addr = (uintptr_t)strtoull(target, &end, 16);

		if (*end)
			return bpfrt_err(-EINVAL, "kprobe: bad address %s", target);
		return bpfrt_kprobe_attach(prog, NULL, addr, &o, link);
	}
	plus = strrchr(target, '+');
	if (plus) {
		if ((size_t)(plus - target) >= sizeof(name))
			return bpfrt_err(-EINVAL, "kprobe: name too long: %s", target);
		memcpy(name, target, (size_t)(plus - target));
		name[plus - target] = 0;
		errno = 0;
		o.offset = strtoull(plus + 1, &end, 0);
		if (*end || errno || plus[1] == 0)
			return bpfrt_err(-EINVAL, "kprobe: bad offset in %s", target);
		return bpfrt_kprobe_attach(prog, name, 0, &o, link);
	}
	return bpfrt_kprobe_attach(prog, target, 0, &o, link);
}

#else /* !__x86_64__ */

int bpfrt_kprobe_attach(struct bpfrt_prog *prog, const char *func, uintptr_t addr,
			const struct bpfrt_kprobe_opts *opts, struct bpfrt_link **link)
{
	return bpfrt_err(-EOPNOTSUPP, "kprobes are implemented for x86-64 only");
}

uintptr_t bpfrt_kprobe_addr(const struct bpfrt_link *link)
{
	return 0;
}

bool bpfrt_kprobe_optimized(const struct bpfrt_link *link)
{
	return false;
}

int bpfrt_kprobe_tramp_code(uintptr_t addr, const uint8_t *code, size_t len, bool entry,
			    uint32_t xsave_bytes, uintptr_t site_arg, uintptr_t at,
			    uint8_t *out, size_t cap)
{
	return bpfrt_err(-EOPNOTSUPP, "kprobes are implemented for x86-64 only");
}

int bpfrt_kprobe_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			     const char *target, uint64_t cookie, uint32_t nr_args,
			     struct bpfrt_link **link)
{
	return bpfrt_err(-EOPNOTSUPP, "kprobes are implemented for x86-64 only");
}

#endif
