/* AArch64 backend of the BPF JIT.
 *
 * Same shape as the x86-64 backend: one register table, encoders in
 * emit.h, one switch over opcodes (translate_insn) and a driver that
 * re-emits the program until no instruction's offset changes. Almost every
 * A64 sequence has a size independent of its position; only branches
 * whose converged distance exceeds the short forms' reach (b.cond, cbz:
 * +-1 MiB, tbz: +-32 KiB) grow into an inverted short branch over `b`.
 *
 * Register mapping (the one place that knows it):
 *
 *	BPF   A64      why
 *	r0    x7       result; copied from x0 after every call
 *	r1-r5 x0-x4    AAPCS64 argument registers: helper calls need no moves
 *	r6-r9 x19-x22  callee-saved, survive helper calls
 *	r10   x25      callee-saved frame pointer of the BPF stack
 *	-     x9       address/offset scratch, helper address for blr
 *	-     x10-x12  scratch (caller-saved, never live across instructions)
 *	-     x29/x30  AAPCS64 frame record (fp, lr), saved by every function
 *
 * Every subprogram is an AAPCS64 function taking r1-r5 in x0-x4 and
 * returning r0 in x0, so a BPF-to-BPF call is `bl` + `mov x7, x0` and a
 * function address loaded by lddw (BPF_PSEUDO_FUNC) is directly callable
 * from C (callbacks).
 *
 * Frame of one function (stack grows down, sp 16-byte aligned throughout):
 *	x29, x30              <- x29
 *	saved x19-x22/x25     (only those the function writes; pairs)
 *	BPF stack             [x25 - depth, x25)  (depth rounded up to 16)
 *
 * Atomics use LSE (ldaddal, ldclral, ldeoral, ldsetal, swpal, casal) when
 * HWCAP_ATOMICS says the CPU has them, exclusive ldaxr/stlxr loops
 * otherwise; BPFRT_ARM64_NO_LSE=1 in the environment forces the loops.
 *
 * Private stack (prog->privstack, core/stack_abi.h has the contract): x25,
 * already callee-saved, holds the private frame, so helper, kfunc and
 * local calls need no save/restore around them; main loads it from its
 * per-thread slot (TPIDR_EL0-relative) and claims the stack, subprograms
 * inherit it (the caller moves x25 below its own frame around a local
 * call), and no BPF stack lives on the native stack except in callbacks.
 * Its code is in the functions marked "private stack" below. */
#include "jit/arm64/emit.h"

#include "core/config.h"
#include "core/error.h"
#include "core/stack_abi.h"
#include "core/run.h"
#include "helpers/callback.h"
#include "isa/isa.h"
#include "jit/backend.h"
#include "jit/passes.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

static const uint8_t reg_map[BPF_NREGS] = {
	[BPF_R0] = 7,
	[BPF_R1] = 0, [BPF_R2] = 1, [BPF_R3] = 2, [BPF_R4] = 3, [BPF_R5] = 4,
	[BPF_R6] = 19, [BPF_R7] = 20, [BPF_R8] = 21, [BPF_R9] = 22,
	[BPF_R10] = 25,
};
#define ADDR 9
#define TMP  10
#define TMP2 11
#define TMP3 12

/* Callee-saved registers a function may have to save, in push order. */
static const uint8_t saved_order[] = { 19, 20, 21, 22, 25 };

#define A64_HWCAP_ATOMICS (1ul << 8)
#define ENTRY_SP_SLOT   (offsetof(struct bpfrt_run_state, entry_sp) / 8)
#define MAX_INSN_CODE   256 /* bytes reserved per BPF instruction */

struct func_frame {
	uint8_t saved[sizeof(saved_order)];
	uint32_t saved_cnt;
	bool uses_fp;           /* sets x25 */
	uint32_t stack;         /* BPF stack bytes, 16-aligned */
};

struct jit_ctx {
	struct bpfrt_jit_passes jp; /* prog, pc, offsets, private stack (passes.h) */
	uint8_t *p;             /* pass buffer (the driver grows it) */
	size_t len;             /* bytes */
	bool lse;
	struct func_frame *frames; /* jp.frames */
};

/* The backend context around the driver's jp (passes.h). */
#define CTX(jp) bpfrt_container_of(jp, struct jit_ctx, jp)

static bool cpu_has_lse(void)
{
	if (bpfrt_config()->arm64_no_lse)
		return false;
#if defined(__aarch64__)
	return (getauxval(AT_HWCAP) & A64_HWCAP_ATOMICS) != 0;
#else
	return true; /* not run here: listings only */
#endif
}

static inline int R(uint8_t bpf_reg) { return reg_map[bpf_reg]; }

static void emit(struct jit_ctx *c, uint32_t insn)
{
	memcpy(c->p + c->len, &insn, 4);
	c->len += 4;
}

/* ---- positions and branches ------------------------------------------- */

/* Position of the code being emitted as it was in the previous pass; branch
 * displacements use previous-pass positions on both ends, so the final
 * (converged) pass is exact. */
static int64_t prev_pos(const struct jit_ctx *c)
{
	return bpfrt_jit_prev_pos(&c->jp, c->jp.pc);
}

static int64_t disp_to(const struct jit_ctx *c, int64_t target)
{
	return (target - prev_pos(c)) / 4;
}

static void emit_b_to(struct jit_ctx *c, int64_t target)
{
	int64_t d = disp_to(c, target);

	if (!a64_fits_signed(d, 26))
		bpfrt_jit_fail(&c->jp, -E2BIG, "branch beyond 128 MiB");
	emit(c, a64_b((int32_t)d));
}

/* b.cond, or b.!cond over b when the target is out of the +-1 MiB reach. */
static void emit_bcond_to(struct jit_ctx *c, enum a64_cond cond, int64_t target)
{
	int64_t d = disp_to(c, target);

	if (!c->jp.force_long && a64_fits_signed(d, 19)) {
		emit(c, a64_bcond(cond, (int32_t)d));
		return;
	}
	emit(c, a64_bcond((enum a64_cond)(cond ^ 1), 2));
	emit_b_to(c, target);
}

static void emit_cbz_to(struct jit_ctx *c, bool sf, bool nonzero, int rt, int64_t target)
{
	int64_t d = disp_to(c, target);

	if (!c->jp.force_long && a64_fits_signed(d, 19)) {
		emit(c, a64_cbz(sf, nonzero, rt, (int32_t)d));
		return;
	}
	emit(c, a64_cbz(sf, !nonzero, rt, 2));
	emit_b_to(c, target);
}

static void emit_tbz_to(struct jit_ctx *c, bool nonzero, int rt, unsigned bit, int64_t target)
{
	int64_t d = disp_to(c, target);

	if (!c->jp.force_long && a64_fits_signed(d, 14)) {
		emit(c, a64_tbz(nonzero, rt, bit, (int32_t)d));
		return;
	}
	emit(c, a64_tbz(!nonzero, rt, bit, 2));
	emit_b_to(c, target);
}

/* Forward branch inside one instruction's code: emit a placeholder, then
 * patch_local() once the label is reached (word holds the opcode). */
static size_t emit_local(struct jit_ctx *c, uint32_t insn_without_disp)
{
	size_t at = c->len;

	emit(c, insn_without_disp);
	return at;
}

static void patch_local(struct jit_ctx *c, size_t at)
{
	uint32_t insn, d = (uint32_t)((c->len - at) / 4);

	memcpy(&insn, c->p + at, 4);
	if ((insn & 0x7c000000) == 0x14000000)          /* b */
		insn |= d & 0x3ffffff;
	else if ((insn & 0x7e000000) == 0x36000000)     /* tbz/tbnz */
		insn |= (d & 0x3fff) << 5;
	else                                            /* b.cond, cbz/cbnz */
		insn |= (d & 0x7ffff) << 5;
	memcpy(c->p + at, &insn, 4);
}

/* ---- immediates ------------------------------------------------------- */

/* rd = v (zero-extended from 32 bits when !sf), in as few words as it takes. */
static void emit_mov_imm(struct jit_ctx *c, bool sf, int rd, uint64_t v)
{
	unsigned chunks = sf ? 4 : 2, zeros = 0, ones = 0;
	bool first = true;

	if (!sf)
		v = (uint32_t)v;
	if (v == 0 || v == (sf ? ~UINT64_C(0) : UINT32_MAX)) {
		emit(c, a64_movw(sf, v ? A64_MOVN : A64_MOVZ, rd, 0, 0));
		return;
	}
	for (unsigned i = 0; i < chunks; i++) {
		uint16_t h = (uint16_t)(v >> (16 * i));

		zeros += h == 0;
		ones += h == 0xffff;
	}
	if (chunks - zeros > 1 && chunks - ones > 1) {
		int32_t nimms = a64_encode_logic_imm(v, sf ? 64 : 32);

		if (nimms >= 0) {
			emit(c, a64_logic_imm(sf, A64_ORR, rd, A64_ZR, (uint32_t)nimms));
			return;
		}
	}
	if (ones > zeros) {
		/* movn sets every other chunk to 0xffff */
		for (unsigned i = 0; i < chunks; i++) {
			uint16_t h = (uint16_t)(v >> (16 * i));

			if (h == 0xffff)
				continue;
			emit(c, first ? a64_movw(sf, A64_MOVN, rd, (uint16_t)~h, i)
				      : a64_movw(sf, A64_MOVK, rd, h, i));
			first = false;
		}
		return;
	}
	for (unsigned i = 0; i < chunks; i++) {
		uint16_t h = (uint16_t)(v >> (16 * i));

		if (h == 0)
			continue;
		emit(c, a64_movw(sf, first ? A64_MOVZ : A64_MOVK, rd, h, i));
		first = false;
	}
}

/* Four words whatever the value: for addresses known only in late passes. */
static void emit_mov_imm64_fixed(struct jit_ctx *c, int rd, uint64_t v)
{
	emit(c, a64_movw(true, A64_MOVZ, rd, (uint16_t)v, 0));
	for (unsigned i = 1; i < 4; i++)
		emit(c, a64_movw(true, A64_MOVK, rd, (uint16_t)(v >> (16 * i)), i));
}

/* add/sub #a when a has an imm12 form (plain or shifted); false otherwise. */
static bool try_addsub_imm(struct jit_ctx *c, bool sf, bool sub, bool setflags, int rd, int rn,
			   uint64_t a)
{
	if (a < 4096)
		emit(c, a64_addsub_imm(sf, sub, setflags, rd, rn, (uint32_t)a, false));
	else if (!(a & 0xfff) && a < (1u << 24))
		emit(c, a64_addsub_imm(sf, sub, setflags, rd, rn, (uint32_t)(a >> 12), true));
	else
		return false;
	return true;
}

/* rd = rn + imm for any imm, through `scratch` when imm12 forms fail. */
static void emit_add_imm(struct jit_ctx *c, bool sf, int rd, int rn, int64_t imm, int scratch)
{
	bool sub = imm < 0;
	uint64_t a = sub ? (uint64_t)0 - (uint64_t)imm : (uint64_t)imm;

	if (try_addsub_imm(c, sf, sub, false, rd, rn, a))
		return;
	emit_mov_imm(c, sf, scratch, (uint64_t)imm);
	emit(c, a64_addsub_reg(sf, false, false, rd, rn, scratch));
}

/* Flags of rn - imm (imm sign-extended for 64 bits). cmn #-imm only for
 * negative imm: it sets C differently from cmp when imm is 0, and V when
 * imm is the most negative value. */
static void emit_cmp_imm(struct jit_ctx *c, bool sf, int rn, int32_t imm, int scratch)
{
	if (imm >= 0 && try_addsub_imm(c, sf, true, true, A64_ZR, rn, (uint64_t)imm))
		return;
	if (imm < 0 && imm != INT32_MIN &&
	    try_addsub_imm(c, sf, false, true, A64_ZR, rn, (uint64_t)-(int64_t)imm))
		return;
	emit_mov_imm(c, sf, scratch, sf ? (uint64_t)(int64_t)imm : (uint32_t)imm);
	emit(c, a64_addsub_reg(sf, true, true, A64_ZR, rn, scratch));
}

/* ---- thread-local run state ------------------------------------------- */

/* reg = &bpfrt_run_state (TPIDR_EL0 + the initial-exec offset) */
static void emit_run_state_addr(struct jit_ctx *c, int reg, int scratch)
{
	emit(c, a64_mrs_tpidr(reg));
	emit_add_imm(c, true, reg, reg, (int64_t)c->jp.tp_off, scratch);
}

/* Private stack: reg = &bpfrt_privstack_slots[prog's id] */
static void emit_priv_slot_addr(struct jit_ctx *c, int reg, int scratch)
{
	emit(c, a64_mrs_tpidr(reg));
	emit_add_imm(c, true, reg, reg, (int64_t)c->jp.priv_slots, scratch);
	emit(c, a64_ldst_uimm(A64_X, A64_LOAD, reg, reg, 0));
	emit_add_imm(c, true, reg, reg, c->jp.priv_slot, scratch);
}

/* sp -/+= bytes (< 16 MiB): imm12 forms only, since sp is no operand of
 * the register forms */
static void emit_sp_adjust(struct jit_ctx *c, bool sub, uint32_t bytes)
{
	if (bytes >> 12)
		emit(c, a64_addsub_imm(true, sub, false, A64_SP, A64_SP, bytes >> 12, true));
	if (bytes & 0xfff)
		emit(c, a64_addsub_imm(true, sub, false, A64_SP, A64_SP, bytes & 0xfff, false));
}

/* ---- prescan ---------------------------------------------------------- */

static void set_saved_regs(struct func_frame *f, uint16_t used)
{
	f->saved_cnt = 0;
	for (unsigned k = 0; k < sizeof(saved_order); k++) {
		uint8_t bpf_reg = (uint8_t)(k < 4 ? BPF_R6 + k : BPF_R10);

		if (used & (1u << bpf_reg))
			f->saved[f->saved_cnt++] = saved_order[k];
	}
}

/* Private stack: main saves the host's x25 and (if the fault unwind can
 * skip subprogram epilogues) x19-x22; subprograms neither save nor set
 * x25 and keep no BPF stack on the native stack, except callbacks
 * (bpfrt_jit_frame). */
static int prescan(struct bpfrt_jit_passes *jp)
{
	struct jit_ctx *c = CTX(jp);
	struct bpfrt_prog *prog = jp->prog;

	c->frames = jp->frames;
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		struct func_frame *f = &c->frames[s];
		struct bpfrt_jit_frame fr;

		bpfrt_jit_frame(&c->jp, s, &fr);
		f->uses_fp = fr.sets_fp;
		set_saved_regs(f, fr.saved);
		f->stack = (fr.stack + 15) & ~15u;
		if (!c->jp.priv && f->stack > 4095)
			return bpfrt_err(-E2BIG, "jit: subprogram %u: stack of %u bytes", s,
					 fr.stack);
		if (f->stack >= 1u << 24)
			return bpfrt_err(-E2BIG, "jit: subprogram %u: callback chain of %u bytes",
					 s, fr.stack);
	}
	return 0;
}

/* ---- prologue / epilogue --------------------------------------------- */

/* str xt, [sp, #-16]! and ldr xt, [sp], #16 for an odd register out */
static uint32_t a64_push_one(int rt) { return 0xf81f0fe0 | (uint32_t)rt; }
static uint32_t a64_pop_one(int rt) { return 0xf84107e0 | (uint32_t)rt; }

static void emit_push_saved(struct jit_ctx *c, const struct func_frame *f)
{
	uint32_t k = 0;

	for (; k + 1 < f->saved_cnt; k += 2)
		emit(c, a64_push_pair(f->saved[k], f->saved[k + 1]));
	if (k < f->saved_cnt)
		emit(c, a64_push_one(f->saved[k]));
}

static void emit_pop_saved(struct jit_ctx *c, const struct func_frame *f)
{
	uint32_t k = f->saved_cnt;

	if (k & 1)
		emit(c, a64_pop_one(f->saved[--k]));
	for (; k; k -= 2)
		emit(c, a64_pop_pair(f->saved[k - 2], f->saved[k - 1]));
}

static void emit_frame_teardown(struct jit_ctx *c, uint32_t s, bool stack_freed);
static void emit_private_main_prologue(struct jit_ctx *c);

static void emit_prologue(struct bpfrt_jit_passes *jp, uint32_t s)
{
	struct jit_ctx *c = CTX(jp);
	const struct func_frame *f = &c->frames[s];

	if (c->jp.priv && s == 0) {
		emit_private_main_prologue(c);
		return;
	}
	emit(c, a64_push_pair(A64_FP, A64_LR));
	emit(c, a64_mov_sp(A64_FP, A64_SP));
	emit_push_saved(c, f);
	if (s == 0 && c->jp.has_callx) {
		/* an outer run's entry_sp (a helper may run programs) is
		 * kept in the frame and restored on the way out */
		emit_run_state_addr(c, ADDR, TMP);
		emit(c, a64_ldst_uimm(A64_X, A64_LOAD, TMP, ADDR, ENTRY_SP_SLOT));
		emit(c, a64_push_pair(TMP, A64_ZR));
		emit(c, a64_mov_sp(TMP, A64_SP));
		emit(c, a64_ldst_uimm(A64_X, A64_STORE, TMP, ADDR, ENTRY_SP_SLOT));
	}
	if (f->uses_fp)
		emit(c, a64_mov_sp(R(BPF_R10), A64_SP));
	emit_sp_adjust(c, true, f->stack);
}

/* Private stack, main function:
 *	stp x29, x30, [sp, #-16]!; mov x29, sp; push x25 and the rest
 *	x9 = &slot                    ; tpidr_el0 + the slot's offset
 *	ldr x25, [x9]                 ; this thread's frame top, 0 if none/in use
 *	cbnz x25, have
 *	  x25 = host->claim_slow(prog)  ; x0, x1 kept
 *	  cbnz x25, claimed
 *	  tear down; mov x0, #0; ret  ; skipped run
 * have:
 *	str xzr, [x9]
 * claimed:
 *	mov x10, sp; str x10, [x25, #ENTRY_SP_OFF]
 */
static void emit_private_main_prologue(struct jit_ctx *c)
{
	size_t j_have, j_claimed;

	emit(c, a64_push_pair(A64_FP, A64_LR));
	emit(c, a64_mov_sp(A64_FP, A64_SP));
	emit_push_saved(c, &c->frames[0]);

	emit_priv_slot_addr(c, ADDR, TMP);
	emit(c, a64_ldst_uimm(A64_X, A64_LOAD, R(BPF_R10), ADDR, 0));
	j_have = emit_local(c, a64_cbz(true, true, R(BPF_R10), 0));
	emit(c, a64_push_pair(0, 1));
	emit_mov_imm(c, true, 0, (uint64_t)(uintptr_t)c->jp.prog);
	emit_mov_imm(c, true, ADDR, c->jp.priv_claim_slow);
	emit(c, a64_blr(ADDR));
	emit(c, a64_mov_reg(true, R(BPF_R10), 0));
	emit(c, a64_pop_pair(0, 1));
	j_claimed = emit_local(c, a64_cbz(true, true, R(BPF_R10), 0));
	c->jp.priv_release = false;
	emit_frame_teardown(c, 0, true);
	c->jp.priv_release = true;
	emit(c, a64_movw(true, A64_MOVZ, 0, 0, 0));
	emit(c, A64_RET);
	patch_local(c, j_have);
	emit(c, a64_ldst_uimm(A64_X, A64_STORE, A64_ZR, ADDR, 0));
	patch_local(c, j_claimed);
	/* the unwind point, in the stack's own C area: no outer value to
	 * save and restore */
	emit(c, a64_mov_sp(TMP, A64_SP));
	emit(c, a64_ldst_uimm(A64_X, A64_STORE, TMP, R(BPF_R10),
			      BPFRT_PRIVSTACK_ENTRY_SP_OFF / 8));
}

/* Private stack, main function: gives the stack back (unless the run
 * never claimed it) and undoes the prologue. x9-x10 only. */
static void emit_private_main_teardown(struct jit_ctx *c)
{
	if (c->jp.priv_release) {
		emit_priv_slot_addr(c, ADDR, TMP);
		emit(c, a64_ldst_uimm(A64_X, A64_STORE, R(BPF_R10), ADDR, 0));
	}
	emit_pop_saved(c, &c->frames[0]);
	emit(c, a64_pop_pair(A64_FP, A64_LR));
}

/* The epilogue without `ret`: frees the BPF stack (unless sp is already
 * past it), restores what the prologue saved and the frame record. Uses
 * only x9-x11, so r0 (x7), x0-x1 and x12 survive (tail calls). */
static void emit_frame_teardown(struct jit_ctx *c, uint32_t s, bool stack_freed)
{
	const struct func_frame *f = &c->frames[s];

	if (c->jp.priv && s == 0) {
		emit_private_main_teardown(c);
		return;
	}
	if (!stack_freed)
		emit_sp_adjust(c, false, f->stack);
	if (s == 0 && c->jp.has_callx) {
		emit_run_state_addr(c, ADDR, TMP);
		emit(c, a64_pop_pair(TMP, TMP2));
		emit(c, a64_ldst_uimm(A64_X, A64_STORE, TMP, ADDR, ENTRY_SP_SLOT));
	}
	emit_pop_saved(c, f);
	emit(c, a64_pop_pair(A64_FP, A64_LR));
}

static void emit_epilogue(struct jit_ctx *c, uint32_t s)
{
	emit_frame_teardown(c, s, false);
	emit(c, a64_mov_reg(true, 0, R(BPF_R0)));
	emit(c, A64_RET);
}

/* Unwinds an aborted run from any call depth: sp back to where main's
 * prologue left it, then main's epilogue; bpfrt_prog_run reads the reason
 * from the run state. */
static void emit_abort_stub(struct bpfrt_jit_passes *jp)
{
	struct jit_ctx *c = CTX(jp);

	if (c->jp.priv) {
		/* private stack: a guard-page fault resumes here too (the
		 * SIGSEGV handler sets sp = the entry sp); x25 is unknown, so
		 * the stack is given back by C, which returns that sp */
		emit_mov_imm(c, true, 0, (uint64_t)(uintptr_t)c->jp.prog);
		emit_mov_imm(c, true, ADDR, c->jp.priv_release_aborted);
		emit(c, a64_blr(ADDR));
		emit(c, a64_mov_sp(A64_SP, 0));
		c->jp.priv_release = false;
		emit_frame_teardown(c, 0, true);
		c->jp.priv_release = true;
		emit(c, a64_movw(true, A64_MOVZ, 0, 0, 0));
		emit(c, A64_RET);
		return;
	}
	emit_run_state_addr(c, ADDR, TMP);
	emit(c, a64_ldst_uimm(A64_X, A64_LOAD, TMP, ADDR, ENTRY_SP_SLOT));
	emit(c, a64_mov_sp(A64_SP, TMP));
	emit_frame_teardown(c, 0, true);
	emit(c, a64_movw(true, A64_MOVZ, 0, 0, 0));
	emit(c, A64_RET);
}

/* ---- ALU -------------------------------------------------------------- */

/* Second operand of a K-form ALU op as a register: imm in TMP. */
static int imm_operand(struct jit_ctx *c, bool is64, int32_t imm)
{
	emit_mov_imm(c, is64, TMP, is64 ? (uint64_t)(int64_t)imm : (uint32_t)imm);
	return TMP;
}

static void emit_logic(struct jit_ctx *c, bool is64, enum a64_logic opc, int dst, bool k,
		       int32_t imm, int src)
{
	if (k) {
		uint64_t v = is64 ? (uint64_t)(int64_t)imm : (uint32_t)imm;
		int32_t nimms = a64_encode_logic_imm(v, is64 ? 64 : 32);

		if (nimms >= 0) {
			emit(c, a64_logic_imm(is64, opc, dst, dst, (uint32_t)nimms));
			return;
		}
		src = imm_operand(c, is64, imm);
	}
	emit(c, a64_logic_reg(is64, opc, false, dst, dst, src));
}

static void emit_div_mod(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	enum a64_dp2 op = insn->off == 1 ? A64_SDIV : A64_UDIV;
	int dst = R(insn->dst_reg);
	int src = insn_src(insn) == BPF_K ? imm_operand(c, is64, insn->imm) : R(insn->src_reg);

	/* A64 division never traps: x / 0 = 0 and INT_MIN / -1 = INT_MIN,
	 * both RFC 9669's answers. The remainder dst - (dst / src) * src then
	 * gives x % 0 = x and INT_MIN % -1 = 0 as required. */
	if (insn_op(insn) == BPF_DIV) {
		emit(c, a64_dp2(is64, op, dst, dst, src));
		return;
	}
	emit(c, a64_dp2(is64, op, TMP2, dst, src));
	emit(c, a64_madd(is64, true, dst, TMP2, src, dst));
}

static void emit_shift(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	unsigned width = is64 ? 64 : 32;
	int dst = R(insn->dst_reg);
	uint8_t op = insn_op(insn);

	if (insn_src(insn) == BPF_X) {
		enum a64_dp2 v = op == BPF_LSH ? A64_LSLV : op == BPF_RSH ? A64_LSRV : A64_ASRV;

		emit(c, a64_dp2(is64, v, dst, dst, R(insn->src_reg)));
		return;
	}
	unsigned n = (unsigned)insn->imm & (width - 1);

	if (n == 0) {
		if (!is64)
			emit(c, a64_mov_reg(false, dst, dst));
		return;
	}
	if (op == BPF_LSH)
		emit(c, a64_bfm(is64, true, dst, dst, width - n, width - 1 - n));
	else
		emit(c, a64_bfm(is64, op == BPF_RSH, dst, dst, n, width - 1));
}

static void emit_endian(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int dst = R(insn->dst_reg);
	/* ALU64 END is the unconditional bswap; ALU END|TO_BE swaps too */
	bool swap = insn_class(insn) == BPF_ALU64 || insn_src(insn) == BPF_X;

	switch (insn->imm) {
	case 16:
		if (swap)
			emit(c, a64_rev(false, 1, dst, dst));
		emit(c, a64_bfm(false, true, dst, dst, 0, 15)); /* uxth */
		break;
	case 32:
		emit(c, swap ? a64_rev(false, 2, dst, dst) : a64_mov_reg(false, dst, dst));
		break;
	case 64:
		if (swap)
			emit(c, a64_rev(true, 3, dst, dst));
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "bad byte-swap width %d", insn->imm);
	}
}

static void emit_mov(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	int dst = R(insn->dst_reg);

	if (insn_src(insn) == BPF_K) {
		emit_mov_imm(c, is64, dst, is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm);
		return;
	}
	int src = R(insn->src_reg);

	switch (insn->off) {
	case 0:
		if (dst != src || !is64)
			emit(c, a64_mov_reg(is64, dst, src));
		break;
	case 8:
	case 16:
		/* sxtb/sxth; the W form zero-extends the upper half */
		emit(c, a64_bfm(is64, false, dst, src, 0, (unsigned)insn->off - 1));
		break;
	case 32:
		emit(c, is64 ? a64_bfm(true, false, dst, src, 0, 31) : a64_mov_reg(false, dst, src));
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "bad movsx width %d", insn->off);
	}
}

static void translate_alu(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool k = insn_src(insn) == BPF_K;
	int dst = R(insn->dst_reg);
	int src = k ? -1 : R(insn->src_reg);

	switch (insn_op(insn)) {
	case BPF_ADD:
	case BPF_SUB: {
		bool sub = insn_op(insn) == BPF_SUB;

		if (!k) {
			emit(c, a64_addsub_reg(is64, sub, false, dst, dst, src));
		} else if (insn->imm == INT32_MIN) {
			emit(c, a64_addsub_reg(is64, sub, false, dst, dst,
					       imm_operand(c, is64, insn->imm)));
		} else {
			emit_add_imm(c, is64, dst, dst, sub ? -(int64_t)insn->imm : insn->imm, TMP);
		}
		return;
	}
	case BPF_AND:
		emit_logic(c, is64, A64_AND, dst, k, insn->imm, src);
		return;
	case BPF_OR:
		emit_logic(c, is64, A64_ORR, dst, k, insn->imm, src);
		return;
	case BPF_XOR:
		emit_logic(c, is64, A64_EOR, dst, k, insn->imm, src);
		return;
	case BPF_MUL:
		if (k)
			src = imm_operand(c, is64, insn->imm);
		emit(c, a64_madd(is64, false, dst, dst, src, A64_ZR));
		return;
	case BPF_DIV:
	case BPF_MOD:
		emit_div_mod(c, insn);
		return;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH:
		emit_shift(c, insn);
		return;
	case BPF_NEG:
		emit(c, a64_addsub_reg(is64, true, false, dst, A64_ZR, dst));
		return;
	case BPF_MOV:
		emit_mov(c, insn);
		return;
	case BPF_END:
		emit_endian(c, insn);
		return;
	}
	bpfrt_jit_fail(&c->jp, -EINVAL, "unknown ALU opcode 0x%02x", insn->code);
}

/* ---- memory ----------------------------------------------------------- */

/* One load or store of `size` at [rn + off]: scaled imm12, then unscaled
 * imm9, then the offset in ADDR. */
static void emit_ldst(struct jit_ctx *c, enum a64_size size, enum a64_ldst opc, int rt, int rn,
		      int32_t off)
{
	int32_t unit = 1 << size;

	if (off >= 0 && !(off & (unit - 1)) && off / unit < 4096) {
		emit(c, a64_ldst_uimm(size, opc, rt, rn, (uint32_t)(off / unit)));
	} else if (off >= -256 && off < 256) {
		emit(c, a64_ldst_simm9(size, opc, rt, rn, off));
	} else {
		emit_mov_imm(c, true, ADDR, (uint64_t)(int64_t)off);
		emit(c, a64_ldst_reg(size, opc, rt, rn, ADDR));
	}
}

static enum a64_size a64_size_of(const struct bpf_insn *insn)
{
	switch (insn_size(insn)) {
	case BPF_B: return A64_B;
	case BPF_H: return A64_H;
	case BPF_W: return A64_W;
	default:    return A64_X;
	}
}

static void translate_ldx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bool sx = insn_is_ldx_sext(insn) && insn_size(insn) != BPF_DW;

	emit_ldst(c, a64_size_of(insn), sx ? A64_LOAD_SX64 : A64_LOAD, R(insn->dst_reg),
		  R(insn->src_reg), insn->off);
	/* fault-safe: the load is emit_ldst's last instruction; its
	 * exception table entry's fixup (emit_probe_fixup) zeroes rt and
	 * resumes after it */
	if (insn_is_probe_load(insn))
		bpfrt_jit_probe_load(&c->jp, (uint32_t)c->len - 4, (uint32_t)c->len,
				     (uint32_t)R(insn->dst_reg));
}

/* A fault-safe load faulted: mov xt, xzr; b back after the load. */
static void emit_probe_fixup(struct bpfrt_jit_passes *jp, const struct bpfrt_jit_probe *p)
{
	struct jit_ctx *c = CTX(jp);
	int64_t d;

	emit(c, a64_mov_reg(true, (int)p->reg, A64_ZR));
	d = ((int64_t)p->resume_off - (int64_t)c->len) / 4;
	if (!a64_fits_signed(d, 26))
		bpfrt_jit_fail(jp, -E2BIG, "fault-safe load's fixup beyond 128 MiB");
	emit(c, a64_b((int32_t)d));
}

static void translate_st(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int val = A64_ZR;

	if (insn->imm) {
		emit_mov_imm(c, true, TMP, (uint64_t)(int64_t)insn->imm);
		val = TMP;
	}
	emit_ldst(c, a64_size_of(insn), A64_STORE, val, R(insn->dst_reg), insn->off);
}

static void translate_stx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	emit_ldst(c, a64_size_of(insn), A64_STORE, R(insn->src_reg), R(insn->dst_reg), insn->off);
}

/* LSE: one instruction per operation. */
static void emit_atomic_lse(struct jit_ctx *c, const struct bpf_insn *insn, int addr)
{
	bool is64 = insn_size(insn) == BPF_DW;
	int src = R(insn->src_reg);
	int op = insn->imm & ~BPF_FETCH;
	enum a64_lse lse;

	if (insn->imm == BPF_CMPXCHG) {
		emit(c, a64_mov_reg(true, TMP2, R(BPF_R0)));
		emit(c, a64_casal(is64, TMP2, src, addr));
		emit(c, a64_mov_reg(is64, R(BPF_R0), TMP2));
		return;
	}
	if (insn->imm == BPF_XCHG) {
		emit(c, a64_lse_al(is64, A64_SWP, src, TMP2, addr));
		emit(c, a64_mov_reg(is64, src, TMP2));
		return;
	}
	switch (op) {
	case BPF_ADD: lse = A64_LDADD; break;
	case BPF_OR:  lse = A64_LDSET; break;
	case BPF_XOR: lse = A64_LDEOR; break;
	default:
		/* and: clear the bits that are clear in src */
		emit(c, a64_logic_reg(is64, A64_ORR, true, TMP, A64_ZR, src)); /* mvn */
		emit(c, a64_lse_al(is64, A64_LDCLR, TMP, TMP2, addr));
		if (insn->imm & BPF_FETCH)
			emit(c, a64_mov_reg(is64, src, TMP2));
		return;
	}
	emit(c, a64_lse_al(is64, lse, src, TMP2, addr));
	if (insn->imm & BPF_FETCH)
		emit(c, a64_mov_reg(is64, src, TMP2));
}

/* Without LSE: ldaxr/stlxr retry loops, then a full barrier so every
 * operation is sequentially consistent like the LSE "al" forms. Old value
 * in TMP2, status in TMP, new value in TMP3. */
static void emit_atomic_llsc(struct jit_ctx *c, const struct bpf_insn *insn, int addr)
{
	bool is64 = insn_size(insn) == BPF_DW;
	int src = R(insn->src_reg);
	size_t loop = c->len, out = 0;

	emit(c, a64_ldaxr(is64, TMP2, addr));
	switch (insn->imm) {
	case BPF_CMPXCHG:
		emit(c, a64_addsub_reg(is64, true, true, A64_ZR, TMP2, R(BPF_R0)));
		out = emit_local(c, a64_bcond(A64_NE, 0));
		emit(c, a64_stlxr(is64, TMP, src, addr));
		break;
	case BPF_XCHG:
		emit(c, a64_stlxr(is64, TMP, src, addr));
		break;
	default:
		switch (insn->imm & ~BPF_FETCH) {
		case BPF_ADD:
			emit(c, a64_addsub_reg(is64, false, false, TMP3, TMP2, src));
			break;
		case BPF_OR:
			emit(c, a64_logic_reg(is64, A64_ORR, false, TMP3, TMP2, src));
			break;
		case BPF_AND:
			emit(c, a64_logic_reg(is64, A64_AND, false, TMP3, TMP2, src));
			break;
		default:
			emit(c, a64_logic_reg(is64, A64_EOR, false, TMP3, TMP2, src));
		}
		emit(c, a64_stlxr(is64, TMP, TMP3, addr));
	}
	emit(c, a64_cbz(false, true, TMP, (int32_t)((int64_t)loop - (int64_t)c->len) / 4));
	if (out)
		patch_local(c, out);
	emit(c, A64_DMB_ISH);
	if (insn->imm == BPF_CMPXCHG)
		emit(c, a64_mov_reg(is64, R(BPF_R0), TMP2));
	else if (insn->imm & BPF_FETCH)
		emit(c, a64_mov_reg(is64, src, TMP2));
}

static void translate_atomic(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int addr = R(insn->dst_reg);

	switch (insn->imm) {
	case BPF_ADD: case BPF_OR: case BPF_AND: case BPF_XOR:
	case BPF_ADD | BPF_FETCH: case BPF_OR | BPF_FETCH:
	case BPF_AND | BPF_FETCH: case BPF_XOR | BPF_FETCH:
	case BPF_XCHG: case BPF_CMPXCHG:
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "unknown atomic operation 0x%x", insn->imm);
		return;
	}
	if (insn_size(insn) != BPF_W && insn_size(insn) != BPF_DW) {
		bpfrt_jit_fail(&c->jp, -EINVAL, "atomic operation of a bad size");
		return;
	}
	if (insn->off) {
		emit_add_imm(c, true, ADDR, addr, insn->off, ADDR);
		addr = ADDR;
	}
	if (c->lse)
		emit_atomic_lse(c, insn, addr);
	else
		emit_atomic_llsc(c, insn, addr);
}

/* ---- jumps and calls -------------------------------------------------- */

static int jmp_cond(uint8_t op)
{
	switch (op) {
	case BPF_JEQ:  return A64_EQ;
	case BPF_JNE:  return A64_NE;
	case BPF_JSET: return A64_NE;
	case BPF_JGT:  return A64_HI;
	case BPF_JGE:  return A64_HS;
	case BPF_JLT:  return A64_LO;
	case BPF_JLE:  return A64_LS;
	case BPF_JSGT: return A64_GT;
	case BPF_JSGE: return A64_GE;
	case BPF_JSLT: return A64_LT;
	case BPF_JSLE: return A64_LE;
	}
	return -1;
}

static void translate_cond_jump(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_JMP;
	uint8_t op = insn_op(insn);
	int cond = jmp_cond(op);
	int dst = R(insn->dst_reg);
	int64_t t = insn_branch_target(insn, c->jp.pc);
	int64_t target;

	if (cond < 0) {
		bpfrt_jit_fail(&c->jp, -EINVAL, "unknown jump opcode 0x%02x", insn->code);
		return;
	}
	if (t == c->jp.pc + 1)
		return; /* both ways lead to the next instruction; compares have no effects */
	target = c->jp.prev.start[t];

	if (insn_src(insn) == BPF_X) {
		int src = R(insn->src_reg);

		if (op == BPF_JSET)
			emit(c, a64_logic_reg(is64, A64_ANDS, false, A64_ZR, dst, src));
		else
			emit(c, a64_addsub_reg(is64, true, true, A64_ZR, dst, src));
		emit_bcond_to(c, (enum a64_cond)cond, target);
		return;
	}

	uint64_t v = is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm;

	if (op == BPF_JSET) {
		int32_t nimms;

		if (!v)
			return; /* never taken */
		if (!(v & (v - 1))) {
			emit_tbz_to(c, true, dst, (unsigned)__builtin_ctzll(v), target);
			return;
		}
		nimms = a64_encode_logic_imm(v, is64 ? 64 : 32);
		if (nimms >= 0)
			emit(c, a64_logic_imm(is64, A64_ANDS, A64_ZR, dst, (uint32_t)nimms));
		else
			emit(c, a64_logic_reg(is64, A64_ANDS, false, A64_ZR, dst,
					      imm_operand(c, is64, insn->imm)));
		emit_bcond_to(c, A64_NE, target);
		return;
	}
	if (!v && (op == BPF_JEQ || op == BPF_JNE)) {
		emit_cbz_to(c, is64, op == BPF_JNE, dst, target);
		return;
	}
	emit_cmp_imm(c, is64, dst, insn->imm, TMP);
	emit_bcond_to(c, (enum a64_cond)cond, target);
}

static void emit_call_abs(struct jit_ctx *c, uint64_t fn)
{
	emit_mov_imm(c, true, ADDR, fn);
	emit(c, a64_blr(ADDR));
	emit(c, a64_mov_reg(true, R(BPF_R0), 0));
}

static void translate_callx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int id = R(insn->dst_reg);
	size_t j_bad1, j_bad2, j_done;

	/* cmp id, #MAX-1; b.hi bad */
	emit_cmp_imm(c, true, id, BPFRT_MAX_HELPER_ID - 1, TMP);
	j_bad1 = emit_local(c, a64_bcond(A64_HI, 0));
	emit_mov_imm(c, true, TMP, (uint64_t)(uintptr_t)c->jp.prog->helpers);
	emit_mov_imm(c, true, TMP2, sizeof(struct bpfrt_helper));
	emit(c, a64_madd(true, false, TMP, id, TMP2, TMP));
	emit(c, a64_ldst_uimm(A64_X, A64_LOAD, ADDR, TMP,
			      offsetof(struct bpfrt_helper, fn) / 8));
	j_bad2 = emit_local(c, a64_cbz(true, false, ADDR, 0));
	emit(c, a64_blr(ADDR));
	emit(c, a64_mov_reg(true, R(BPF_R0), 0));
	j_done = emit_local(c, a64_b(0));
	patch_local(c, j_bad1);
	patch_local(c, j_bad2);
	/* the id register still holds the bad id: nothing ran */
	emit_run_state_addr(c, ADDR, TMP);
	emit_mov_imm(c, false, TMP, c->jp.pc);
	emit(c, a64_ldst_uimm(A64_W, A64_STORE, TMP, ADDR,
			      offsetof(struct bpfrt_run_state, abort_pc) / 4));
	emit(c, a64_ldst_uimm(A64_X, A64_STORE, id, ADDR,
			      offsetof(struct bpfrt_run_state, abort_arg) / 8));
	emit_mov_imm(c, false, TMP, ENOENT);
	emit(c, a64_ldst_uimm(A64_W, A64_STORE, TMP, ADDR,
			      offsetof(struct bpfrt_run_state, abort_err) / 4));
	emit_b_to(c, c->jp.prev.abort_off);
	patch_local(c, j_done);
}

/* may_goto: the run's budget (core/run.h), spent: jump.
 *	addr = &bpfrt_run_state; w = addr->may_goto_left
 *	cbz w, target; w -= 1; addr->may_goto_left = w */
static void translate_may_goto(struct jit_ctx *c, const struct bpf_insn *insn)
{
	const uint32_t field = offsetof(struct bpfrt_run_state, may_goto_left) / 4;
	int64_t t = insn_branch_target(insn, c->jp.pc);

	emit_run_state_addr(c, ADDR, TMP);
	emit(c, a64_ldst_uimm(A64_W, A64_LOAD, TMP, ADDR, field));
	emit_cbz_to(c, false, false, TMP, c->jp.prev.start[t]);
	emit(c, a64_addsub_imm(false, true, false, TMP, TMP, 1, false));
	emit(c, a64_ldst_uimm(A64_W, A64_STORE, TMP, ADDR, field));
}

/* Tail call (helpers/callback.h has the contract): ask for the target
 * with r1-r3 already in x0-x2, then replace this function's frame with it,
 * entering at its normal entry with r1 = ctx and r2 = 0 so it returns to
 * our caller; on failure r0 = -ENOENT and the program goes on. */
static void translate_tail_call(struct jit_ctx *c)
{
	size_t j_fail;

	emit_mov_imm(c, true, ADDR, (uint64_t)(uintptr_t)bpfrt_tail_call_jit_target);
	emit(c, a64_blr(ADDR));
	j_fail = emit_local(c, a64_cbz(true, false, 0, 0));
	emit(c, a64_mov_reg(true, TMP3, 0));
	emit_run_state_addr(c, ADDR, TMP);
	emit(c, a64_ldst_uimm(A64_X, A64_LOAD, R(BPF_R1), ADDR,
			      offsetof(struct bpfrt_run_state, tail_call_ctx) / 8));
	emit(c, a64_movw(true, A64_MOVZ, R(BPF_R2), 0, 0));
	emit_frame_teardown(c, c->jp.sub, false);
	emit(c, a64_br(TMP3));
	patch_local(c, j_fail);
	emit_mov_imm(c, true, R(BPF_R0), (uint64_t)(int64_t)-ENOENT);
}

/* Local call; with a private stack x25 moves around it
 * (bpfrt_jit_call_shift). */
static void emit_local_call(struct jit_ctx *c, int s)
{
	uint32_t own = bpfrt_jit_call_shift(&c->jp);

	if (own)
		emit(c, a64_addsub_imm(true, true, false, R(BPF_R10), R(BPF_R10), own, false));
	emit(c, a64_bl((int32_t)disp_to(c, c->jp.prev.fstart[s])));
	if (own)
		emit(c, a64_addsub_imm(true, false, false, R(BPF_R10), R(BPF_R10), own, false));
	emit(c, a64_mov_reg(true, R(BPF_R0), 0));
}

static void translate_call(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bpfrt_helper_fn fn;

	if (insn->src_reg == BPF_PSEUDO_CALL) {
		int s = bpfrt_jit_callee(&c->jp, insn);

		if (s >= 0)
			emit_local_call(c, s);
		return;
	}
	fn = bpfrt_jit_helper(&c->jp, insn);
	if (fn == bpfrt_helper_tail_call)
		translate_tail_call(c);
	else if (fn)
		emit_call_abs(c, (uint64_t)(uintptr_t)fn);
}

/* lddw; a BPF_PSEUDO_FUNC source loads the callee's native address. */
static void translate_lddw(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int dst = R(insn->dst_reg);

	if (insn->src_reg == BPF_PSEUDO_FUNC) {
		int s = bpfrt_jit_callee(&c->jp, insn);

		if (s < 0)
			return;
		emit_mov_imm64_fixed(c, dst, c->jp.base + c->jp.prev.fstart[s]);
		return;
	}
	emit_mov_imm(c, true, dst, insn_lddw_imm(insn));
}

/* ---- one instruction -------------------------------------------------- */

/* Returns the number of BPF instruction slots consumed. */
static int translate_insn(struct bpfrt_jit_passes *jp, uint32_t pc)
{
	struct jit_ctx *c = CTX(jp);
	const struct bpf_insn *insn = &jp->insns[pc];

	switch (insn_class(insn)) {
	case BPF_ALU:
	case BPF_ALU64:
		translate_alu(c, insn);
		return 1;
	case BPF_LDX:
		translate_ldx(c, insn);
		return 1;
	case BPF_ST:
		translate_st(c, insn);
		return 1;
	case BPF_STX:
		if (insn_mode(insn) == BPF_ATOMIC)
			translate_atomic(c, insn);
		else
			translate_stx(c, insn);
		return 1;
	case BPF_LD:
		if (!insn_is_lddw(insn) || c->jp.pc + 1 >= c->jp.n) {
			bpfrt_jit_fail(&c->jp, -EINVAL, "unsupported load opcode 0x%02x",
				       insn->code);
			return 1;
		}
		translate_lddw(c, insn);
		return 2;
	case BPF_JMP:
	case BPF_JMP32:
		switch (insn_op(insn)) {
		case BPF_JA: {
			int64_t t = insn_branch_target(insn, c->jp.pc);

			if (t != c->jp.pc + 1)
				emit_b_to(c, c->jp.prev.start[t]);
			return 1;
		}
		case BPF_CALL:
			if (insn_src(insn) == BPF_X)
				translate_callx(c, insn);
			else
				translate_call(c, insn);
			return 1;
		case BPF_EXIT:
			emit_epilogue(c, c->jp.sub);
			return 1;
		case BPF_JCOND:
			if (!insn_is_may_goto(insn) || insn_class(insn) != BPF_JMP)
				break;
			translate_may_goto(c, insn);
			return 1;
		default:
			translate_cond_jump(c, insn);
			return 1;
		}
	}
	bpfrt_jit_fail(&c->jp, -EINVAL, "unknown opcode 0x%02x", insn->code);
	return 1;
}

/* ---- passes (jit/passes.c drives them) ------------------------------- */

/* Sizes do not depend on the image address (lddw of a function address is
 * always four words), so one convergence gives the size and a last pass at
 * the real address gives the bytes. */
static const struct bpfrt_jit_arch arm64_arch = {
	.max_insn_code = MAX_INSN_CODE,
	.seed_insn_code = MAX_INSN_CODE,
	.addr_dependent = true,
	.frame_size = sizeof(struct func_frame),
	.prescan = prescan,
	.emit_prologue = emit_prologue,
	.emit_insn = translate_insn,
	.emit_abort_stub = emit_abort_stub,
	.emit_probe_fixup = emit_probe_fixup,
};

static int arm64_compile(struct bpfrt_prog *prog)
{
	struct jit_ctx c = { .lse = cpu_has_lse() };

	return bpfrt_jit_compile(&c.jp, prog, &arm64_arch, &c.p, &c.len);
}

/* brk #0x3e8, Linux's AARCH64_BREAK_FAULT: a stray jump into padding or a
 * freed image stops with SIGTRAP. Whole words only: len is a multiple of 4
 * wherever code can start. */
static void arm64_fill_traps(void *dst, size_t len)
{
	uint32_t brk = a64_brk(0x3e8);
	uint8_t *p = dst;
	size_t i = 0;

	for (; i + 4 <= len; i += 4)
		memcpy(p + i, &brk, 4);
	for (; i < len; i++)
		p[i] = 0;
}

const struct bpfrt_jit_backend bpfrt_jit_arm64 = {
	.arch = "arm64",
	.compile = arm64_compile,
	.fill_traps = arm64_fill_traps,
	.cs_arch = CS_ARCH_ARM64,
	.cs_mode = CS_MODE_ARM,
};
