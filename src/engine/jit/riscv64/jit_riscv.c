/* riscv64 (RV64GC) backend of the BPF JIT.
 *
 * Same shape as the x86-64 backend: one table maps BPF registers to
 * machine registers, encoders live in emit.h, one switch translates an
 * instruction (translate_insn), and a driver re-emits the whole program
 * until no instruction's offset changes, so branches use the shortest form
 * the converged distance allows (b<cc> +-4 KiB, b<!cc> over jal +-1 MiB,
 * b<!cc> over auipc+jalr otherwise).
 *
 * Every subprogram is its own native function following the LP64D calling
 * convention: BPF r1-r5 are a0-a4, so helpers and BPF-to-BPF callees get
 * their arguments in place; r0 lives in a5 (a0 is r1) and every function
 * returns it in a0 too, so after any call a5 = a0. r6-r9 and r10 live in
 * callee-saved registers.
 *
 * Only the base ISA is required. Zba (zext.w) and Zbb (rev8) are used only
 * when the kernel reports them (riscv_hwprobe); BPFRT_RISCV_EXT=none|zba,zbb
 * overrides the detection for tests.
 *
 * Frame of one function (stack grows down, sp 16-byte aligned):
 *	saved ra, s1-s5      (only those the function needs)
 *	BPF stack            [s5 - stack_depth, s5)   s5 = BPF r10 = sp + depth
 *	                     <- sp
 *
 * Image layout: per subprogram [prologue][body][stubs]; the offsets are
 * recorded in prog->jit_insn_off as described in jit/jit.h. The code is
 * position independent (pc-relative calls and function addresses, helper
 * addresses as absolute constants), so it converges once before the
 * allocation and is copied as is.
 *
 * Private stack (prog->privstack, core/stack_abi.h has the contract): s5,
 * already callee-saved, holds the private frame, so helper, kfunc and
 * local calls need no save/restore around them; main loads it from its
 * per-thread slot (tp-relative) and claims the stack, subprograms inherit
 * it (the caller moves s5 below its own frame around a local call) and
 * keep no BPF stack on the native stack, except callbacks, which C calls
 * with its own s5. Main's frame then is only
 *	saved ra, s1-s5      (ra and s5 always; all when a fault can unwind
 *	                      past subprogram epilogues)
 *	                     <- sp, stored at top + BPFRT_PRIVSTACK_ENTRY_SP_OFF
 * Its code is in the functions marked "private stack" below. */
#include "jit/riscv64/emit.h"

#include "core/config.h"
#include "core/error.h"
#include "core/stack_abi.h"
#include "core/run.h"
#include "helpers/callback.h"
#include "isa/isa.h"
#include "jit/backend.h"
#include "jit/passes.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#if defined(__riscv)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if __has_include(<capstone/capstone.h>)
#include <capstone/capstone.h>
#endif

/* The one place that knows the register mapping:
 *	r0 -> a5    r1-r5 -> a0-a4    r6-r9 -> s1-s4    r10 -> s5
 * Scratch (caller-saved, never BPF registers): t0-t3 inside one
 * instruction's code, t6 for far jumps, t5 for run-state addresses. */
static const uint8_t reg_map[BPF_NREGS] = {
	[BPF_R0] = RV_A5,
	[BPF_R1] = RV_A0, [BPF_R2] = RV_A1, [BPF_R3] = RV_A2, [BPF_R4] = RV_A3,
	[BPF_R5] = RV_A4,
	[BPF_R6] = RV_S1, [BPF_R7] = RV_S2, [BPF_R8] = RV_S3, [BPF_R9] = RV_S4,
	[BPF_R10] = RV_S5,
};
#define T1   RV_T0
#define T2   RV_T1
#define T3   RV_T2
#define T4   RV_T3
#define TRS  RV_T5  /* run-state address */
#define TFAR RV_T6  /* far jump target */

/* Registers a function may save, in slot order. */
static const uint8_t saved_order[] = { RV_RA, RV_S1, RV_S2, RV_S3, RV_S4, RV_S5 };

#define MAX_INSN_CODE   256 /* room reserved per BPF instruction */

struct func_frame {
	uint32_t saved_mask;    /* bit rv reg: register to save */
	uint32_t saved_cnt;
	bool keeps_entry_sp;    /* main of a program with callx: see emit_prologue */
	bool sets_fp;           /* s5 = sp + depth (a native BPF frame) */
	uint32_t depth;         /* BPF stack bytes below s5 */
	uint32_t size;          /* whole frame, multiple of 16 */
};

struct jit_ctx {
	struct bpfrt_jit_passes jp; /* prog, pc, offsets, private stack (passes.h) */
	struct rv_buf b;        /* pass buffer (the driver grows it) */
	bool zba, zbb;
	struct func_frame *frames; /* jp.frames */
};

/* The backend context around the driver's jp (passes.h). */
#define CTX(jp) bpfrt_container_of(jp, struct jit_ctx, jp)

/* ---- extension detection ---------------------------------------------- */

#define HWPROBE_KEY_IMA_EXT_0 4
#define HWPROBE_EXT_ZBA       (1ull << 3)
#define HWPROBE_EXT_ZBB       (1ull << 4)
#ifndef __NR_riscv_hwprobe
#define __NR_riscv_hwprobe    258
#endif

static uint64_t detect_ext(void)
{
	const struct bpfrt_config_text *env = &bpfrt_config()->riscv_ext;
	uint64_t ext = 0;

	if (env->set) {
		if (strstr(env->value, "zba"))
			ext |= HWPROBE_EXT_ZBA;
		if (strstr(env->value, "zbb"))
			ext |= HWPROBE_EXT_ZBB;
		return ext;
	}
#if defined(__riscv)
	struct { int64_t key; uint64_t value; } pair = { HWPROBE_KEY_IMA_EXT_0, 0 };

	/* kernels before 6.4 (and qemu-user before 8.2) lack the call: base ISA */
	if (syscall(__NR_riscv_hwprobe, &pair, 1, 0, NULL, 0) == 0 &&
	    pair.key == HWPROBE_KEY_IMA_EXT_0)
		ext = pair.value;
#endif
	return ext;
}

/* ---- small helpers ---------------------------------------------------- */

static inline int R(uint8_t bpf_reg) { return reg_map[bpf_reg]; }

static inline int32_t sext12(int64_t v) { return (int32_t)(((v & 0xfff) ^ 0x800) - 0x800); }

/* li rd, val: lui/addiw for 32-bit values, else the upper part
 * recursively, shifted, plus the low 12 bits. */
static void emit_imm(struct rv_buf *b, int rd, int64_t val)
{
	int32_t lo = sext12(val);
	uint64_t rest = (uint64_t)val - (uint64_t)(int64_t)lo;

	if (is_simm32(val)) {
		uint32_t hi20 = (uint32_t)(rest >> 12) & 0xfffff;

		if (!hi20) {
			emit_addi(b, rd, RV_ZERO, lo);
			return;
		}
		emit_lui(b, rd, hi20);
		if (lo)
			emit_addiw(b, rd, rd, lo);
		return;
	}
	int64_t hi = (int64_t)rest >> 12;
	unsigned sh = (unsigned)__builtin_ctzll((uint64_t)hi);

	emit_imm(b, rd, hi >> sh);
	emit_slli(b, rd, rd, 12 + sh);
	if (lo)
		emit_addi(b, rd, rd, lo);
}

/* rd = zero-extended low 32 bits of rs */
static void emit_zext32(struct jit_ctx *c, int rd, int rs)
{
	if (c->zba) {
		emit_zext_w_zba(&c->b, rd, rs);
		return;
	}
	emit_slli(&c->b, rd, rs, 32);
	emit_srli(&c->b, rd, rd, 32);
}

/* Position of the code being emitted as it was in the previous pass; jump
 * distances use previous-pass positions on both ends, so they shrink
 * monotonically and the final (converged) pass is exact. */
static int64_t prev_pos(const struct jit_ctx *c)
{
	return bpfrt_jit_prev_pos(&c->jp, c->jp.pc);
}

/* auipc+jalr to a previous-pass offset (rd = ra for calls, zero for jumps) */
static void emit_far(struct jit_ctx *c, int link, int64_t target)
{
	uint32_t hi;
	int32_t lo;
	int tmp = link == RV_ZERO ? TFAR : link;

	split_hi_lo(target - prev_pos(c), &hi, &lo);
	emit_auipc(&c->b, tmp, hi);
	emit_jalr(&c->b, link, tmp, lo);
}

/* Jump (cond < 0) or conditional branch rs1 <cond> rs2 to a previous-pass
 * offset. */
static void emit_jump_to(struct jit_ctx *c, int cond, int rs1, int rs2, int64_t target)
{
	int64_t d = target - prev_pos(c);

	if (cond < 0) {
		if (!c->jp.force_long && is_simm21(d))
			emit_jal(&c->b, RV_ZERO, (int32_t)d);
		else
			emit_far(c, RV_ZERO, target);
		return;
	}
	if (!c->jp.force_long && is_simm13(d)) {
		emit_branch(&c->b, (enum rv_cond)cond, rs1, rs2, (int32_t)d);
		return;
	}
	if (!c->jp.force_long && is_simm21(d - 4)) {
		emit_branch(&c->b, (enum rv_cond)(cond ^ 1), rs1, rs2, 8);
		emit_jal(&c->b, RV_ZERO, (int32_t)(d - 4));
		return;
	}
	emit_branch(&c->b, (enum rv_cond)(cond ^ 1), rs1, rs2, 12);
	emit_far(c, RV_ZERO, target);
}

/* Forward branch inside one instruction's code: emitted with offset 0 and
 * patched by patch_local() once the label is reached. */
static size_t emit_local_branch(struct jit_ctx *c, enum rv_cond cond, int rs1, int rs2)
{
	size_t at = c->b.len;

	emit_branch(&c->b, cond, rs1, rs2, 0);
	return at;
}

static size_t emit_local_jump(struct jit_ctx *c)
{
	size_t at = c->b.len;

	emit_jal(&c->b, RV_ZERO, 0);
	return at;
}

static void patch_local(struct jit_ctx *c, size_t at)
{
	int64_t d = (int64_t)(c->b.len - at);
	uint32_t insn;

	memcpy(&insn, c->b.p + at, 4);
	if ((insn & 0x7f) == OPC_JAL)
		insn |= rv_j((int32_t)d, 0) & ~0xfffu;
	else if (is_simm13(d))
		insn |= rv_b((int32_t)d, 0, 0, 0) & ~0x7fu;
	else
		bpfrt_jit_fail(&c->jp, -EFAULT, "local branch too long");
	memcpy(c->b.p + at, &insn, 4);
}

/* Address of a bpfrt_run_state field: tp-relative when the offset fits. */
static int run_state_addr(struct jit_ctx *c, size_t field, int32_t *disp)
{
	int64_t off = (int64_t)c->jp.tp_off + (int64_t)field;

	if (is_simm12(off)) {
		*disp = (int32_t)off;
		return RV_TP;
	}
	emit_imm(&c->b, TRS, off);
	emit_alu(&c->b, false, ALU_ADD, TRS, TRS, RV_TP);
	*disp = 0;
	return TRS;
}

/* may_goto: the run's budget (core/run.h), spent: jump.
 *	t1 = run_state.may_goto_left; beq t1, zero, target
 *	t1 -= 1; run_state.may_goto_left = t1 */
static void translate_may_goto(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int64_t t = insn_branch_target(insn, c->jp.pc);
	int32_t disp;
	int base = run_state_addr(c, offsetof(struct bpfrt_run_state, may_goto_left), &disp);

	emit_load(&c->b, LD_WU, T1, base, disp);
	emit_jump_to(c, BR_EQ, T1, RV_ZERO, c->jp.prev.start[t]);
	emit_addiw(&c->b, T1, T1, -1);
	emit_store(&c->b, ST_W, T1, base, disp);
}

static void emit_store_run_state(struct jit_ctx *c, size_t field, unsigned f3, int reg)
{
	int32_t disp;
	int base = run_state_addr(c, field, &disp);

	emit_store(&c->b, f3, reg, base, disp);
}

static void emit_load_run_state(struct jit_ctx *c, size_t field, int reg)
{
	int32_t disp;
	int base = run_state_addr(c, field, &disp);

	emit_load(&c->b, LD_D, reg, base, disp);
}

/* Base register and displacement for [base + off]: off itself when it
 * fits 12 bits, else T1 = base + off. */
static int mem_operand(struct jit_ctx *c, int base, int32_t off, int32_t *disp)
{
	if (is_simm12(off)) {
		*disp = off;
		return base;
	}
	emit_imm(&c->b, T1, off);
	emit_alu(&c->b, false, ALU_ADD, T1, T1, base);
	*disp = 0;
	return T1;
}

/* ---- prescan ---------------------------------------------------------- */

/* ra is saved where the function calls (the private claim's slow path
 * too) and s1-s5 where bpfrt_jit_frame says; a saved s5 is this
 * function's BPF r10, except in private main, where it is claimed from
 * the slot. */
static int prescan(struct bpfrt_jit_passes *jp)
{
	struct jit_ctx *c = CTX(jp);
	struct bpfrt_prog *prog = jp->prog;

	c->frames = jp->frames;
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		struct func_frame *f = &c->frames[s];
		struct bpfrt_jit_frame fr;
		uint32_t used;

		bpfrt_jit_frame(&c->jp, s, &fr);
		used = bpfrt_jit_map_regs(fr.saved, reg_map);
		if (fr.calls || fr.saves_all)
			used |= 1u << RV_RA;
		for (unsigned k = 0; k < sizeof(saved_order); k++)
			if (used & (1u << saved_order[k])) {
				f->saved_mask |= 1u << saved_order[k];
				f->saved_cnt++;
			}
		f->depth = (fr.stack + 7) & ~7u;
		f->sets_fp = fr.sets_fp;
		f->keeps_entry_sp = fr.keeps_entry_sp;
		f->size = (f->depth + 8 * f->saved_cnt + 8 * f->keeps_entry_sp + 15) & ~15u;
		if (f->size > 2048)
			return bpfrt_err(-E2BIG, "jit: subprogram %u: frame of %u bytes", s, f->size);
	}
	return 0;
}

/* ---- prologue / epilogue --------------------------------------------- */

static void emit_frame_teardown(struct jit_ctx *c, uint32_t s);
static void emit_private_main_prologue(struct jit_ctx *c);

/* Call of a C function at a fixed address (helpers, the runtime). */
static void emit_call_abs(struct jit_ctx *c, const void *fn)
{
	emit_imm(&c->b, T1, (int64_t)(uintptr_t)fn);
	emit_jalr(&c->b, RV_RA, T1, 0);
}

static void emit_prologue(struct bpfrt_jit_passes *jp, uint32_t s)
{
	struct jit_ctx *c = CTX(jp);
	const struct func_frame *f = &c->frames[s];
	int32_t slot = (int32_t)f->depth;

	if (f->size)
		emit_addi(&c->b, RV_SP, RV_SP, -(int32_t)f->size);
	for (unsigned k = 0; k < sizeof(saved_order); k++)
		if (f->saved_mask & (1u << saved_order[k])) {
			emit_store(&c->b, ST_D, saved_order[k], RV_SP, slot);
			slot += 8;
		}
	if (f->sets_fp)
		emit_addi(&c->b, RV_S5, RV_SP, (int32_t)f->depth);
	if (c->jp.priv && s == 0)
		emit_private_main_prologue(c);
	if (f->keeps_entry_sp) {
		/* a helper may run another program on this thread: keep the
		 * outer run's unwind point and put it back on the way out */
		emit_load_run_state(c, offsetof(struct bpfrt_run_state, entry_sp), T1);
		emit_store(&c->b, ST_D, T1, RV_SP, slot);
		emit_store_run_state(c, offsetof(struct bpfrt_run_state, entry_sp), ST_D, RV_SP);
	}
}

/* Private stack: base register and displacement of the program's slot:
 * T1 = bpfrt_privstack_slots (loaded from tp + its offset), plus the
 * slot's offset when that does not fit 12 bits. */
static int priv_slot_addr(struct jit_ctx *c, int32_t *disp)
{
	if (is_simm12(c->jp.priv_slots)) {
		emit_load(&c->b, LD_D, T1, RV_TP, (int32_t)c->jp.priv_slots);
	} else {
		emit_imm(&c->b, T1, c->jp.priv_slots);
		emit_alu(&c->b, false, ALU_ADD, T1, T1, RV_TP);
		emit_load(&c->b, LD_D, T1, T1, 0);
	}
	if (is_simm12(c->jp.priv_slot)) {
		*disp = c->jp.priv_slot;
		return T1;
	}
	emit_addi(&c->b, T1, T1, 2047);
	*disp = c->jp.priv_slot - 2047;
	return T1;
}

_Static_assert((BPFRT_PRIVSTACK_MAX_IDS - 1) * 8 - 2047 <= 2047,
	       "every private-stack slot is within two 12-bit displacements");

/* Private stack, main function, after the registers are saved:
 *	ld   t1, slots(tp)         ; this thread's slot array
 *	ld   s5, slot(t1)          ; this thread's frame top, 0 if none/in use
 *	bnez s5, claim
 *	  s5 = host->claim_slow(prog)  ; a0, a1 kept below sp
 *	  bnez s5, claim
 *	  tear down; ret            ; skipped run: r0 = 0
 * claim:
 *	sd   zero, slot(t1)        ; (t1 reloaded)
 *	sd   sp, BPFRT_PRIVSTACK_ENTRY_SP_OFF(s5)
 */
static void emit_private_main_prologue(struct jit_ctx *c)
{
	struct rv_buf *b = &c->b;
	int32_t disp;
	int base = priv_slot_addr(c, &disp);
	size_t j_have, j_got;

	emit_load(b, LD_D, RV_S5, base, disp);
	j_have = emit_local_branch(c, BR_NE, RV_S5, RV_ZERO);
	/* only the cold path grows the frame: every native byte of the
	 * main frame is paid once per nesting level */
	emit_addi(b, RV_SP, RV_SP, -16);
	emit_store(b, ST_D, RV_A0, RV_SP, 0);
	emit_store(b, ST_D, RV_A1, RV_SP, 8);
	emit_imm(b, RV_A0, (int64_t)(uintptr_t)c->jp.prog);
	emit_call_abs(c, (const void *)c->jp.priv_claim_slow);
	emit_mv(b, RV_S5, RV_A0);
	emit_load(b, LD_D, RV_A0, RV_SP, 0);
	emit_load(b, LD_D, RV_A1, RV_SP, 8);
	emit_addi(b, RV_SP, RV_SP, 16);
	j_got = emit_local_branch(c, BR_NE, RV_S5, RV_ZERO);
	emit_addi(b, RV_A0, RV_ZERO, 0);
	c->jp.priv_release = false;
	emit_frame_teardown(c, 0);
	c->jp.priv_release = true;
	emit_jalr(b, RV_ZERO, RV_RA, 0);
	patch_local(c, j_have);
	patch_local(c, j_got);
	base = priv_slot_addr(c, &disp);
	emit_store(b, ST_D, RV_ZERO, base, disp);
	/* the unwind point, in the stack's own C area: no outer value to
	 * save and restore */
	emit_store(b, ST_D, RV_SP, RV_S5, BPFRT_PRIVSTACK_ENTRY_SP_OFF);
}

/* Restores what the prologue saved and pops the frame (no return). */
static void emit_frame_teardown(struct jit_ctx *c, uint32_t s)
{
	const struct func_frame *f = &c->frames[s];
	int32_t slot = (int32_t)f->depth;

	if (c->jp.priv && s == 0 && c->jp.priv_release) {
		/* private stack: give it back (s5 is main's frame top) */
		int32_t disp;
		int base = priv_slot_addr(c, &disp);

		emit_store(&c->b, ST_D, RV_S5, base, disp);
	}
	for (unsigned k = 0; k < sizeof(saved_order); k++)
		if (f->saved_mask & (1u << saved_order[k])) {
			emit_load(&c->b, LD_D, saved_order[k], RV_SP, slot);
			slot += 8;
		}
	if (f->keeps_entry_sp) {
		emit_load(&c->b, LD_D, T1, RV_SP, slot);
		emit_store_run_state(c, offsetof(struct bpfrt_run_state, entry_sp), ST_D, T1);
	}
	if (f->size)
		emit_addi(&c->b, RV_SP, RV_SP, (int32_t)f->size);
}

static void emit_epilogue(struct jit_ctx *c, uint32_t s)
{
	emit_mv(&c->b, RV_A0, RV_A5);
	emit_frame_teardown(c, s);
	emit_jalr(&c->b, RV_ZERO, RV_RA, 0);
}

/* Unwinds an aborted run from any call depth: back to main's frame, then
 * main's epilogue; bpfrt_prog_run reads the reason from the run state. */
static void emit_abort_stub(struct bpfrt_jit_passes *jp)
{
	struct jit_ctx *c = CTX(jp);

	if (c->jp.priv) {
		/* private stack: a guard-page fault resumes here too (the
		 * SIGSEGV handler sets sp = the entry sp); s5 is unknown, so
		 * the stack is given back by C */
		emit_imm(&c->b, RV_A0, (int64_t)(uintptr_t)c->jp.prog);
		emit_call_abs(c, (const void *)c->jp.priv_release_aborted);
		emit_mv(&c->b, RV_SP, RV_A0); /* the entry sp it returns */
		emit_addi(&c->b, RV_A5, RV_ZERO, 0);
		c->jp.priv_release = false;
		emit_epilogue(c, 0);
		c->jp.priv_release = true;
		return;
	}
	emit_load_run_state(c, offsetof(struct bpfrt_run_state, entry_sp), RV_SP);
	emit_addi(&c->b, RV_A5, RV_ZERO, 0);
	emit_epilogue(c, 0);
}

/* ---- ALU -------------------------------------------------------------- */

static void emit_div(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct rv_buf *b = &c->b;
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool sign = insn->off == 1;
	bool is_mod = insn_op(insn) == BPF_MOD;
	int rd = R(insn->dst_reg);
	enum rv_alu alu = is_mod ? (sign ? ALU_REM : ALU_REMU) : (sign ? ALU_DIV : ALU_DIVU);

	if (insn_src(insn) == BPF_K) {
		if (insn->imm == 0) {
			/* x / 0 = 0, x % 0 = x */
			if (!is_mod)
				emit_addi(b, rd, RV_ZERO, 0);
			else if (!is64)
				emit_zext32(c, rd, rd);
			return;
		}
		/* the *w forms read only the low 32 bits of the divisor */
		emit_imm(b, T1, insn->imm);
		emit_alu(b, !is64, alu, rd, rd, T1);
	} else if (is_mod) {
		/* rem/remu by zero give the dividend, as BPF wants */
		emit_alu(b, !is64, alu, rd, rd, R(insn->src_reg));
	} else {
		/* div/divu by zero give all ones; BPF wants 0: mask the
		 * quotient with -(divisor != 0) */
		int rs = R(insn->src_reg);

		if (is64) {
			emit_alu(b, false, ALU_SLTU, T2, RV_ZERO, rs);
		} else {
			emit_slli(b, T2, rs, 32);
			emit_alu(b, false, ALU_SLTU, T2, RV_ZERO, T2);
		}
		emit_alu(b, false, ALU_SUB, T2, RV_ZERO, T2);
		emit_alu(b, !is64, alu, rd, rd, rs);
		emit_alu(b, false, ALU_AND, rd, rd, T2);
	}
	if (!is64)
		emit_zext32(c, rd, rd);
}

/* Reverses the low nbytes bytes of rd into rd (upper bits cleared). */
static void emit_bswap(struct jit_ctx *c, int rd, unsigned nbytes)
{
	struct rv_buf *b = &c->b;

	if (c->zbb) {
		emit_rev8_zbb(b, rd, rd);
		if (nbytes < 8)
			emit_srli(b, rd, rd, 64 - 8 * nbytes);
		return;
	}
	emit_andi(b, T1, rd, 0xff);
	emit_slli(b, T1, T1, 8 * (nbytes - 1));
	for (unsigned i = 1; i < nbytes; i++) {
		emit_srli(b, T2, rd, 8 * i);
		if (i < 7)
			emit_andi(b, T2, T2, 0xff);
		if (nbytes - 1 - i)
			emit_slli(b, T2, T2, 8 * (nbytes - 1 - i));
		emit_alu(b, false, ALU_OR, i == nbytes - 1 ? rd : T1, T1, T2);
	}
}

static void emit_endian(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int rd = R(insn->dst_reg);
	/* ALU64 END is the unconditional bswap; ALU END|TO_BE swaps too */
	bool swap = insn_class(insn) == BPF_ALU64 || insn_src(insn) == BPF_X;

	switch (insn->imm) {
	case 16:
		if (swap) {
			emit_bswap(c, rd, 2);
		} else {
			emit_slli(&c->b, rd, rd, 48);
			emit_srli(&c->b, rd, rd, 48);
		}
		break;
	case 32:
		if (swap)
			emit_bswap(c, rd, 4);
		else
			emit_zext32(c, rd, rd);
		break;
	case 64:
		if (swap)
			emit_bswap(c, rd, 8);
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "bad byte-swap width %d", insn->imm);
	}
}

/* mov with sign extension: off = 8/16/32 */
static void emit_movsx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	int rd = R(insn->dst_reg), rs = R(insn->src_reg);

	switch (insn->off) {
	case 8:
	case 16:
		emit_slli(&c->b, rd, rs, 64 - (unsigned)insn->off);
		emit_srai(&c->b, rd, rd, 64 - (unsigned)insn->off);
		if (!is64)
			emit_zext32(c, rd, rd);
		break;
	case 32:
		if (is64)
			emit_addiw(&c->b, rd, rs, 0);
		else
			emit_zext32(c, rd, rs);
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "bad movsx width %d", insn->off);
	}
}

static void emit_shift(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct rv_buf *b = &c->b;
	bool is64 = insn_class(insn) == BPF_ALU64;
	int rd = R(insn->dst_reg);
	uint8_t op = insn_op(insn);

	if (insn_src(insn) == BPF_K) {
		unsigned sh = (unsigned)insn->imm & (is64 ? 63 : 31);

		if (is64) {
			if (op == BPF_LSH)
				emit_slli(b, rd, rd, sh);
			else if (op == BPF_RSH)
				emit_srli(b, rd, rd, sh);
			else
				emit_srai(b, rd, rd, sh);
			return;
		}
		if (op == BPF_LSH)
			emit_slliw(b, rd, rd, sh);
		else if (op == BPF_RSH)
			emit_srliw(b, rd, rd, sh);
		else
			emit_sraiw(b, rd, rd, sh);
	} else {
		/* sll/srl/sra use the low 6 bits, the *w forms the low 5:
		 * exactly BPF's masking */
		enum rv_alu alu = op == BPF_LSH ? ALU_SLL : op == BPF_RSH ? ALU_SRL : ALU_SRA;

		emit_alu(b, !is64, alu, rd, rd, R(insn->src_reg));
	}
	if (!is64)
		emit_zext32(c, rd, rd);
}

static void translate_alu(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct rv_buf *b = &c->b;
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool k = insn_src(insn) == BPF_K;
	int rd = R(insn->dst_reg);
	int rs = R(insn->src_reg);
	int32_t imm = insn->imm;
	uint8_t op = insn_op(insn);

	switch (op) {
	case BPF_ADD:
	case BPF_SUB:
		if (k) {
			int64_t add = op == BPF_ADD ? (int64_t)imm : -(int64_t)imm;

			if (is_simm12(add)) {
				if (is64)
					emit_addi(b, rd, rd, (int32_t)add);
				else
					emit_addiw(b, rd, rd, (int32_t)add);
				break;
			}
			emit_imm(b, T1, imm);
			rs = T1;
		}
		emit_alu(b, !is64, op == BPF_ADD ? ALU_ADD : ALU_SUB, rd, rd, rs);
		break;
	case BPF_AND:
	case BPF_OR:
	case BPF_XOR:
		if (k && is_simm12(imm)) {
			/* the 12-bit immediate is sign-extended like BPF's */
			if (op == BPF_AND)
				emit_andi(b, rd, rd, imm);
			else if (op == BPF_OR)
				emit_ori(b, rd, rd, imm);
			else
				emit_xori(b, rd, rd, imm);
			break;
		}
		if (k) {
			emit_imm(b, T1, imm);
			rs = T1;
		}
		emit_alu(b, false, op == BPF_AND ? ALU_AND : op == BPF_OR ? ALU_OR : ALU_XOR,
			 rd, rd, rs);
		break;
	case BPF_MUL:
		if (k) {
			emit_imm(b, T1, imm);
			rs = T1;
		}
		emit_alu(b, !is64, ALU_MUL, rd, rd, rs);
		break;
	case BPF_DIV:
	case BPF_MOD:
		emit_div(c, insn);
		return;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH:
		emit_shift(c, insn);
		return;
	case BPF_NEG:
		emit_alu(b, !is64, ALU_SUB, rd, RV_ZERO, rd);
		break;
	case BPF_MOV:
		if (k) {
			emit_imm(b, rd, is64 ? (int64_t)imm : (int64_t)(uint32_t)imm);
			return;
		}
		if (insn->off) {
			emit_movsx(c, insn);
			return;
		}
		if (is64)
			emit_mv(b, rd, rs);
		else
			emit_zext32(c, rd, rs);
		return;
	case BPF_END:
		emit_endian(c, insn);
		return;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "unknown ALU opcode 0x%02x", insn->code);
		return;
	}
	if (!is64)
		emit_zext32(c, rd, rd);
}

/* ---- memory ----------------------------------------------------------- */

static const uint8_t load_f3[4] = {
	[BPF_W >> 3] = LD_WU, [BPF_H >> 3] = LD_HU, [BPF_B >> 3] = LD_BU, [BPF_DW >> 3] = LD_D,
};
static const uint8_t load_sx_f3[4] = {
	[BPF_W >> 3] = LD_W, [BPF_H >> 3] = LD_H, [BPF_B >> 3] = LD_B, [BPF_DW >> 3] = LD_D,
};
static const uint8_t store_f3[4] = {
	[BPF_W >> 3] = ST_W, [BPF_H >> 3] = ST_H, [BPF_B >> 3] = ST_B, [BPF_DW >> 3] = ST_D,
};

static void translate_ldx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bool sx = insn_is_ldx_sext(insn);
	unsigned sz = insn_size(insn) >> 3;
	int32_t disp;
	int base = mem_operand(c, R(insn->src_reg), insn->off, &disp);
	uint32_t at = (uint32_t)c->b.len;

	emit_load(&c->b, sx ? load_sx_f3[sz] : load_f3[sz], R(insn->dst_reg), base, disp);
	/* fault-safe: the same load with an exception table entry whose
	 * fixup (emit_probe_fixup) zeroes rd and resumes after it */
	if (insn_is_probe_load(insn))
		bpfrt_jit_probe_load(&c->jp, at, (uint32_t)c->b.len, (uint32_t)R(insn->dst_reg));
}

/* A fault-safe load faulted: li rd, 0; j back after the load. */
static void emit_probe_fixup(struct bpfrt_jit_passes *jp, const struct bpfrt_jit_probe *p)
{
	struct rv_buf *b = &CTX(jp)->b;
	int64_t d;

	emit_addi(b, (int)p->reg, RV_ZERO, 0);
	d = (int64_t)p->resume_off - (int64_t)b->len;
	if (d < -(1 << 20))
		bpfrt_jit_fail(jp, -E2BIG, "fault-safe load's fixup beyond 1 MiB");
	emit_jal(b, RV_ZERO, (int32_t)d);
}

static void translate_st(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int32_t disp;
	int base = mem_operand(c, R(insn->dst_reg), insn->off, &disp);
	int val = RV_ZERO;

	if (insn->imm) {
		emit_imm(&c->b, T2, insn->imm);
		val = T2;
	}
	emit_store(&c->b, store_f3[insn_size(insn) >> 3], val, base, disp);
}

static void translate_stx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int32_t disp;
	int base = mem_operand(c, R(insn->dst_reg), insn->off, &disp);

	emit_store(&c->b, store_f3[insn_size(insn) >> 3], R(insn->src_reg), base, disp);
}

static void translate_atomic(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct rv_buf *b = &c->b;
	bool is64 = insn_size(insn) == BPF_DW;
	int addr = R(insn->dst_reg), rs = R(insn->src_reg);
	static const int8_t amo[16] = {
		[BPF_ADD >> 4] = AMO_ADD, [BPF_OR >> 4] = AMO_OR,
		[BPF_AND >> 4] = AMO_AND, [BPF_XOR >> 4] = AMO_XOR,
	};

	/* AMOs take no displacement */
	if (insn->off) {
		if (is_simm12(insn->off)) {
			emit_addi(b, T1, addr, insn->off);
		} else {
			emit_imm(b, T1, insn->off);
			emit_alu(b, false, ALU_ADD, T1, T1, addr);
		}
		addr = T1;
	}

	switch (insn->imm) {
	case BPF_ADD: case BPF_OR: case BPF_AND: case BPF_XOR:
		emit_amo(b, (enum rv_amo)amo[insn->imm >> 4], is64, RV_ZERO, rs, addr);
		return;
	case BPF_ADD | BPF_FETCH: case BPF_OR | BPF_FETCH:
	case BPF_AND | BPF_FETCH: case BPF_XOR | BPF_FETCH:
	case BPF_XCHG: {
		enum rv_amo op = insn->imm == BPF_XCHG ? AMO_SWAP :
				 (enum rv_amo)amo[(insn->imm & ~BPF_FETCH) >> 4];

		emit_amo(b, op, is64, T2, rs, addr);
		/* the .w forms sign-extend what they fetched */
		if (is64)
			emit_mv(b, rs, T2);
		else
			emit_zext32(c, rs, T2);
		return;
	}
	case BPF_CMPXCHG: {
		/* r0 = *addr; if r0 (low 32 bits for .w) matched, *addr = src */
		int expect = RV_A5;
		size_t loop, j_ne;

		if (!is64) {
			emit_addiw(b, T3, RV_A5, 0); /* lr.w sign-extends: compare alike */
			expect = T3;
		}
		loop = b->len;
		emit_amo(b, AMO_LR, is64, T2, RV_ZERO, addr);
		j_ne = emit_local_branch(c, BR_NE, T2, expect);
		emit_amo(b, AMO_SC, is64, T4, rs, addr);
		emit_branch(b, BR_NE, T4, RV_ZERO, -(int32_t)(b->len - loop));
		patch_local(c, j_ne);
		if (is64)
			emit_mv(b, RV_A5, T2);
		else
			emit_zext32(c, RV_A5, T2);
		return;
	}
	}
	bpfrt_jit_fail(&c->jp, -EINVAL, "unknown atomic operation 0x%x", insn->imm);
}

/* ---- jumps and calls -------------------------------------------------- */

static void translate_cond_jump(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct rv_buf *b = &c->b;
	bool is32 = insn_class(insn) == BPF_JMP32;
	uint8_t op = insn_op(insn);
	int64_t target = insn_branch_target(insn, c->jp.pc);
	int a = R(insn->dst_reg), s;
	int cond;
	bool swap = false;

	if (target == c->jp.pc + 1)
		return; /* both ways lead to the next instruction; compares have no effects */

	/* 32-bit compares: sign-extending both sides keeps equality and
	 * both signed and unsigned order of the low halves */
	if (is32) {
		emit_addiw(b, T2, a, 0);
		a = T2;
	}
	if (insn_src(insn) == BPF_X) {
		s = R(insn->src_reg);
		if (is32) {
			emit_addiw(b, T3, s, 0);
			s = T3;
		}
	} else if (insn->imm == 0) {
		s = RV_ZERO;
	} else if (op == BPF_JSET && is_simm12(insn->imm)) {
		emit_andi(b, T1, a, insn->imm);
		emit_jump_to(c, BR_NE, T1, RV_ZERO, c->jp.prev.start[target]);
		return;
	} else {
		emit_imm(b, T1, insn->imm);
		s = T1;
	}

	switch (op) {
	case BPF_JEQ:  cond = BR_EQ; break;
	case BPF_JNE:  cond = BR_NE; break;
	case BPF_JGT:  cond = BR_LTU; swap = true; break;
	case BPF_JGE:  cond = BR_GEU; break;
	case BPF_JLT:  cond = BR_LTU; break;
	case BPF_JLE:  cond = BR_GEU; swap = true; break;
	case BPF_JSGT: cond = BR_LT; swap = true; break;
	case BPF_JSGE: cond = BR_GE; break;
	case BPF_JSLT: cond = BR_LT; break;
	case BPF_JSLE: cond = BR_GE; swap = true; break;
	case BPF_JSET:
		emit_alu(b, false, ALU_AND, T1, a, s);
		emit_jump_to(c, BR_NE, T1, RV_ZERO, c->jp.prev.start[target]);
		return;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "unknown jump opcode 0x%02x", insn->code);
		return;
	}
	if (swap)
		emit_jump_to(c, cond, s, a, c->jp.prev.start[target]);
	else
		emit_jump_to(c, cond, a, s, c->jp.prev.start[target]);
}

static void emit_call_reg(struct jit_ctx *c, int reg)
{
	emit_jalr(&c->b, RV_RA, reg, 0);
	emit_mv(&c->b, RV_A5, RV_A0);
}

static void translate_callx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct rv_buf *b = &c->b;
	size_t j_bad1, j_bad2, j_done;

	emit_mv(b, T4, R(insn->dst_reg));
	emit_imm(b, T1, BPFRT_MAX_HELPER_ID);
	j_bad1 = emit_local_branch(c, BR_GEU, T4, T1);
	emit_imm(b, T2, (int64_t)(uintptr_t)c->jp.prog->helpers);
	emit_imm(b, T1, (int64_t)sizeof(struct bpfrt_helper));
	emit_alu(b, false, ALU_MUL, T1, T4, T1);
	emit_alu(b, false, ALU_ADD, T2, T2, T1);
	emit_load(b, LD_D, T2, T2, (int32_t)offsetof(struct bpfrt_helper, fn));
	j_bad2 = emit_local_branch(c, BR_EQ, T2, RV_ZERO);
	emit_call_reg(c, T2);
	j_done = emit_local_jump(c);
	patch_local(c, j_bad1);
	patch_local(c, j_bad2);
	emit_imm(b, T1, c->jp.pc);
	emit_store_run_state(c, offsetof(struct bpfrt_run_state, abort_pc), ST_W, T1);
	emit_store_run_state(c, offsetof(struct bpfrt_run_state, abort_arg), ST_D, T4);
	emit_imm(b, T1, ENOENT);
	emit_store_run_state(c, offsetof(struct bpfrt_run_state, abort_err), ST_W, T1);
	emit_jump_to(c, -1, 0, 0, c->jp.prev.abort_off);
	patch_local(c, j_done);
}

/* Tail call (helpers/callback.h has the contract): ask for the target,
 * then replace this function's frame with it; on failure r0 = -ENOENT and
 * the program goes on. */
static void translate_tail_call(struct jit_ctx *c)
{
	struct rv_buf *b = &c->b;
	size_t j_fail;

	/* r1-r3 are a0-a2 already */
	emit_imm(b, T1, (int64_t)(uintptr_t)bpfrt_tail_call_jit_target);
	emit_jalr(b, RV_RA, T1, 0);
	j_fail = emit_local_branch(c, BR_EQ, RV_A0, RV_ZERO);
	emit_mv(b, T4, RV_A0); /* the teardown may use T1 */
	emit_load_run_state(c, offsetof(struct bpfrt_run_state, tail_call_ctx), RV_A0);
	emit_addi(b, RV_A1, RV_ZERO, 0);
	emit_frame_teardown(c, c->jp.sub);
	emit_jalr(b, RV_ZERO, T4, 0); /* the target returns to our caller */
	patch_local(c, j_fail);
	emit_addi(b, RV_A5, RV_ZERO, -ENOENT);
}

static void translate_call(struct jit_ctx *c, const struct bpf_insn *insn)
{
	bpfrt_helper_fn fn;

	if (insn->src_reg == BPF_PSEUDO_CALL) {
		int s = bpfrt_jit_callee(&c->jp, insn);
		uint32_t own;
		int64_t d;

		if (s < 0)
			return;
		/* private stack: s5 moves around the call */
		own = bpfrt_jit_call_shift(&c->jp);
		if (own)
			emit_addi(&c->b, RV_S5, RV_S5, -(int32_t)own);
		d = (int64_t)c->jp.prev.fstart[s] - prev_pos(c);
		if (!c->jp.force_long && is_simm21(d))
			emit_jal(&c->b, RV_RA, (int32_t)d);
		else
			emit_far(c, RV_RA, c->jp.prev.fstart[s]);
		if (own)
			emit_addi(&c->b, RV_S5, RV_S5, (int32_t)own);
		emit_mv(&c->b, RV_A5, RV_A0);
		return;
	}
	fn = bpfrt_jit_helper(&c->jp, insn);
	if (fn == bpfrt_helper_tail_call) {
		translate_tail_call(c);
	} else if (fn) {
		emit_imm(&c->b, T1, (int64_t)(uintptr_t)fn);
		emit_call_reg(c, T1);
	}
}

/* lddw; a BPF_PSEUDO_FUNC source loads the callee's native address. */
static void translate_lddw(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int rd = R(insn->dst_reg);

	if (insn->src_reg == BPF_PSEUDO_FUNC) {
		int s = bpfrt_jit_callee(&c->jp, insn);
		uint32_t hi;
		int32_t lo;

		if (s < 0)
			return;
		/* pc-relative, fixed size: right wherever the image lands */
		split_hi_lo((int64_t)c->jp.prev.fstart[s] - prev_pos(c), &hi, &lo);
		emit_auipc(&c->b, rd, hi);
		emit_addi(&c->b, rd, rd, lo);
		return;
	}
	emit_imm(&c->b, rd, (int64_t)insn_lddw_imm(insn));
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
		break;
	case BPF_LDX:
		translate_ldx(c, insn);
		break;
	case BPF_ST:
		translate_st(c, insn);
		break;
	case BPF_STX:
		if (insn_mode(insn) == BPF_ATOMIC)
			translate_atomic(c, insn);
		else
			translate_stx(c, insn);
		break;
	case BPF_LD:
		if (!insn_is_lddw(insn) || c->jp.pc + 1 >= c->jp.n) {
			bpfrt_jit_fail(&c->jp, -EINVAL, "unsupported load opcode 0x%02x",
				       insn->code);
			break;
		}
		translate_lddw(c, insn);
		return 2;
	case BPF_JMP:
	case BPF_JMP32:
		switch (insn_op(insn)) {
		case BPF_JA: {
			int64_t t = insn_branch_target(insn, c->jp.pc);

			if (t != c->jp.pc + 1)
				emit_jump_to(c, -1, 0, 0, c->jp.prev.start[t]);
			break;
		}
		case BPF_CALL:
			if (insn_src(insn) == BPF_X)
				translate_callx(c, insn);
			else
				translate_call(c, insn);
			break;
		case BPF_EXIT:
			emit_epilogue(c, c->jp.sub);
			break;
		case BPF_JCOND:
			if (insn_is_may_goto(insn) && insn_class(insn) == BPF_JMP)
				translate_may_goto(c, insn);
			else
				bpfrt_jit_fail(&c->jp, -EINVAL, "unknown opcode 0x%02x",
					       insn->code);
			break;
		default:
			translate_cond_jump(c, insn);
		}
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "unknown opcode 0x%02x", insn->code);
	}
	return 1;
}

/* ---- passes (jit/passes.c drives them) ------------------------------- */

static const struct bpfrt_jit_arch rv_arch = {
	.max_insn_code = MAX_INSN_CODE,
	/* a few words: short branches are chosen by the estimated distance
	 * and the passes correct it */
	.seed_insn_code = 16,
	.frame_size = sizeof(struct func_frame),
	.prescan = prescan,
	.emit_prologue = emit_prologue,
	.emit_insn = translate_insn,
	.emit_abort_stub = emit_abort_stub,
	.emit_probe_fixup = emit_probe_fixup,
};

static int rv_compile(struct bpfrt_prog *prog)
{
	uint64_t ext = detect_ext();
	struct jit_ctx c = {
		.zba = ext & HWPROBE_EXT_ZBA,
		.zbb = ext & HWPROBE_EXT_ZBB,
	};

	return bpfrt_jit_compile(&c.jp, prog, &rv_arch, &c.b.p, &c.b.len);
}

/* ebreak words; c.ebreak where only 2-byte alignment is left. */
static void rv_fill_traps(void *dst, size_t len)
{
	uint8_t *p = dst;
	const uint32_t ebreak = RV_EBREAK;
	const uint16_t c_ebreak = RV_C_EBREAK;

	if (((uintptr_t)p & 1) && len) {
		*p++ = 0;
		len--;
	}
	if (((uintptr_t)p & 2) && len >= 2) {
		memcpy(p, &c_ebreak, 2);
		p += 2;
		len -= 2;
	}
	for (; len >= 4; p += 4, len -= 4)
		memcpy(p, &ebreak, 4);
	if (len >= 2) {
		memcpy(p, &c_ebreak, 2);
		p += 2;
		len -= 2;
	}
	if (len)
		*p = 0;
}

const struct bpfrt_jit_backend bpfrt_jit_riscv64 = {
	.arch = "riscv64",
	.compile = rv_compile,
	.fill_traps = rv_fill_traps,
#if defined(CS_API_MAJOR) && CS_API_MAJOR >= 5
	.cs_arch = CS_ARCH_RISCV,
	.cs_mode = CS_MODE_RISCV64 | CS_MODE_RISCVC,
#else
	/* capstone before 5.0 has no RISC-V: listings come from objdump
	 * (jit.c), or show raw words without one */
	.cs_arch = -1,
	.cs_mode = 0,
#endif
};
