/* x86-64 backend of the BPF JIT.
 *
 * Shape: one table maps BPF registers to x86 registers, small encoders in
 * emit.h, one switch over opcodes (translate_insn), and a driver that
 * re-emits the whole program until no instruction's offset changes, so
 * jumps use rel8 wherever the converged distance allows.
 *
 * Every subprogram becomes its own native function following the SysV
 * calling convention: BPF r1-r5 are the argument registers, r0 is rax and
 * r6-r9 live in callee-saved registers, so a BPF-to-BPF call is a plain
 * `call rel32` and a helper call needs no argument shuffling at all.
 *
 * Frame of one function (stack grows down):
 *	return address
 *	saved rbp            <- rbp = BPF r10 (only when the frame is used)
 *	BPF stack            [rbp - stack_depth, rbp)
 *	(alignment pad)
 *	saved rbx/r12-r15    (only those the function writes)
 *
 * Image layout: per subprogram [prologue][body][stubs]; the offsets are
 * recorded in prog->jit_insn_off as described in jit/jit.h.
 *
 * Private stack (prog->privstack, core/stack_abi.h has the contract):
 * rbp, already callee-saved, holds the private frame, so helper, kfunc and
 * local calls need no save/restore around them; main loads it from its
 * per-thread slot (fs:-relative) and claims the stack, subprograms inherit
 * it (the caller moves rbp below its own frame around a local call), and
 * no BPF stack lives on the native stack. Its code is in the functions
 * marked "private stack" below. */
#include "jit/x86_64/emit.h"

#include "core/error.h"
#include "core/stack_abi.h"
#include "core/run.h"
#include "isa/isa.h"
#include "isa/liveness.h"
#include "jit/backend.h"
#include "helpers/callback.h"
#include "jit/passes.h"
#include "verifier/validate.h"

#ifndef BPFRT_NO_CAPSTONE
#include <capstone/capstone.h>
#else
#define CS_ARCH_X86 3 /* capstone's numbers, for listings made elsewhere */
#define CS_MODE_64 8
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The one place that knows the register mapping. */
static const uint8_t reg_map[BPF_NREGS] = {
	[BPF_R0] = RAX,
	[BPF_R1] = RDI, [BPF_R2] = RSI, [BPF_R3] = RDX, [BPF_R4] = RCX, [BPF_R5] = R8,
	[BPF_R6] = RBX, [BPF_R7] = R13, [BPF_R8] = R14, [BPF_R9] = R15,
	[BPF_R10] = RBP,
};
/* Scratch registers the translation may clobber at any point: r10/r11
 * are caller-saved and unused by BPF; r12 is callee-saved, so a function
 * that needs it (see insn_needs_r12) saves it. */
#define AUX  R10
#define TMP  R11
#define TMP2 R12

/* Callee-saved registers in push order. */
static const uint8_t saved_order[] = { RBX, R12, R13, R14, R15 };

#define MAX_INSN_CODE   160 /* room reserved per BPF instruction */
#define IMAGE_ALIGN     64  /* functions start at a cache line (passes.h) */
#ifndef LOOP_ALIGN
#define LOOP_ALIGN      16 /* loop heads start a fetch block */
#endif

struct func_frame {
	uint16_t saved_mask;    /* bit x86 reg: callee-saved register to save */
	bool uses_fp;           /* push rbp; mov rbp, rsp */
	bool has_calls;         /* keeps rsp 16-byte aligned at calls */
	uint32_t sub;           /* bytes subtracted from rsp after rbp */
	uint32_t saved_cnt;
};

enum {
	F_TARGET = BPFRT_JIT_TARGET, /* some branch lands here */
	F_LOOP = BPFRT_JIT_LOOP,     /* a backward branch lands here */
	F_SWAP = 4,     /* "d op= s" is emitted as "s op= d" (see coalesce()) */
	F_ELIDE = 8,    /* the "mov s, d" that F_SWAP made redundant */
	F_SKIP = 16,    /* part of a copy whose only reader uses the source (subst()) */
	F_SUBST = 32,   /* reads a source register in place of a skipped copy */
};

struct jit_ctx {
	struct bpfrt_jit_passes jp; /* prog, pc, offsets, private stack (passes.h) */
	struct x86_buf b;       /* pass buffer (the driver grows it) */
	bool bmi2;
	bool no_align;          /* loop heads unaligned (a retry after growth) */
	uint8_t *flags;         /* per insn F_* (jp.marks) */
	uint16_t *live_out;     /* per insn: BPF registers live after it */
	int8_t *dst_sub, *src_sub; /* per insn: BPF reg read instead of dst/src, or -1 */
	uint8_t *skip_len;      /* per F_SKIP group start: instructions in the group */
	bool bmi1;
	struct func_frame *frames; /* jp.frames */
	/* peephole state, valid only within straight-line code */
	int zf_reg;             /* BPF reg whose full value set ZF just now, or -1 */
	bool zf_w32;            /* that value came from a 32-bit ALU op */
	uint16_t zext;          /* BPF regs whose upper 32 bits are known zero */
};

/* The backend context around the driver's jp (passes.h). */
#define CTX(jp) bpfrt_container_of(jp, struct jit_ctx, jp)

/* CPUID leaf 7 EBX feature bit: 3 BMI1, 8 BMI2. */
static bool cpu_has_leaf7_ebx(unsigned bit)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return b & (1u << bit);
#else
	return false;
#endif
}

/* ---- small helpers ---------------------------------------------------- */

static inline int R(uint8_t bpf_reg) { return reg_map[bpf_reg]; }

static inline bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

static inline unsigned log2_u64(uint64_t v) { return 63 - (unsigned)__builtin_clzll(v); }

/* Position of the code being emitted as it was in the previous pass; jump
 * displacements use previous-pass positions on both ends, so they shrink
 * monotonically and the final (converged) pass is exact. */
static int64_t prev_pos(const struct jit_ctx *c)
{
	return bpfrt_jit_prev_pos(&c->jp, c->jp.pc);
}

/* jmp or jcc (cc < 0: unconditional) to a previous-pass offset. */
static void emit_jump_to(struct jit_ctx *c, int cc, int64_t target)
{
	int64_t from = prev_pos(c);
	int64_t d8 = target - (from + 2);

	if (!c->jp.force_long && is_imm8(d8)) {
		if (cc < 0)
			emit_jmp_rel8(&c->b, (int8_t)d8);
		else
			emit_jcc(&c->b, (enum x86_cc)cc, (int32_t)d8);
		return;
	}
	if (cc < 0)
		emit_jmp_rel32(&c->b, (int32_t)(target - (from + 5)));
	else
		emit_jcc_rel32(&c->b, (enum x86_cc)cc, (int32_t)(target - (from + 6)));
}

/* Forward jump inside one instruction's code: emit with a placeholder,
 * patch with patch_local() once the label is reached. */
static size_t emit_local_jcc(struct jit_ctx *c, int cc)
{
	emit2(&c->b, cc < 0 ? 0xeb : (uint8_t)(0x70 | cc), 0);
	return c->b.len;
}

static void patch_local(struct jit_ctx *c, size_t after_jump)
{
	size_t d = c->b.len - after_jump;

	if (d > 127)
		bpfrt_jit_fail(&c->jp, -EFAULT, "local jump too long");
	c->b.p[after_jump - 1] = (uint8_t)d;
}

/* Accesses to bpfrt_run_state through fs: (initial-exec TLS). */
static int32_t run_state_disp(const struct jit_ctx *c, size_t field)
{
	return (int32_t)(c->jp.tp_off + (intptr_t)field);
}

static void emit_store_run_state_reg(struct jit_ctx *c, size_t field, int reg)
{
	emit_fs_rm(&c->b, false, true, 0x89, reg, run_state_disp(c, field));
}

static void emit_load_run_state_reg(struct jit_ctx *c, size_t field, int reg)
{
	emit_fs_rm(&c->b, false, true, 0x8b, reg, run_state_disp(c, field));
}

static void emit_store_run_state_imm32(struct jit_ctx *c, size_t field, uint32_t v)
{
	emit_fs_rm(&c->b, false, false, 0xc7, 0, run_state_disp(c, field));
	emit_u32(&c->b, v);
}

/* Near call to an absolute address: rel32 when reachable from the image,
 * else through rax (r0 is clobbered by every call anyway). */
static void emit_call_abs(struct jit_ctx *c, uint64_t fn)
{
	/* before the address is known the movabs form keeps every pass's size */
	emit_branch_abs(&c->b, c->jp.base, fn, true, RAX);
}

/* ---- prescan ---------------------------------------------------------- */

/* A division whose divisor needs a register of its own while rdx is
 * saved: such a function saves r12. Must match emit_div(). */
static bool div_uses_r12(const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool sign = insn->off == 1;
	int dst = R(insn->dst_reg);

	if (insn_src(insn) == BPF_K) {
		uint64_t d = is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm;

		if (d == 0 || (sign && insn->imm == -1) || (!sign && is_pow2(d)))
			return false;
	} else {
		int src = R(insn->src_reg);

		if (src != RAX && src != RDX)
			return false;
	}
	return dst != RDX;
}

static bool insn_needs_r12(const struct bpf_insn *insn)
{
	uint8_t cls = insn_class(insn);

	if ((cls == BPF_ALU || cls == BPF_ALU64) &&
	    (insn_op(insn) == BPF_DIV || insn_op(insn) == BPF_MOD))
		return div_uses_r12(insn);
	/* fetching and/or/xor loop with r0 as the base register */
	if (cls == BPF_STX && insn_mode(insn) == BPF_ATOMIC && insn->dst_reg == BPF_R0)
		return true;
	return false;
}

/* Some division or atomic of the subprogram needs r12. */
static bool subprog_needs_r12(const struct jit_ctx *c, const struct bpfrt_subprog *sp)
{
	for (uint32_t pc = sp->start; pc < sp->end; pc++) {
		const struct bpf_insn *insn = &c->jp.insns[pc];

		if (insn_needs_r12(insn))
			return true;
		if (insn_is_lddw(insn))
			pc++;
	}
	return false;
}

/* The callee-saved registers among used, in push order. */
static void set_saved_regs(struct func_frame *f, uint16_t used)
{
	for (unsigned k = 0; k < sizeof(saved_order); k++)
		if (used & (1u << saved_order[k])) {
			f->saved_mask |= (uint16_t)(1u << saved_order[k]);
			f->saved_cnt++;
		}
}

/* Entry rsp is 8 mod 16 and calls need 0 mod 16; pushed is what the
 * prologue pushes and subtracts before f->sub's padding. */
static void align_for_calls(struct func_frame *f, uint32_t pushed)
{
	if (f->has_calls && pushed % 16 != 8)
		f->sub += 8;
}

/* Frames from bpfrt_jit_frame(): rbp is BPF r10 and pushed only where
 * the frame sets it or, in private main, claims it; r12 is a scratch
 * register some functions save. With a private stack only callbacks keep
 * a BPF stack on the native stack. */
static void layout_frames(struct jit_ctx *c)
{
	struct bpfrt_prog *prog = c->jp.prog;

	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		struct func_frame *f = &c->frames[s];
		struct bpfrt_jit_frame fr;
		uint16_t used;
		bool pushes_rbp;

		bpfrt_jit_frame(&c->jp, s, &fr);
		used = (uint16_t)bpfrt_jit_map_regs(fr.saved, reg_map);
		if (fr.saves_all || subprog_needs_r12(c, &prog->subprogs[s]))
			used |= 1u << TMP2;
		pushes_rbp = fr.saved & (1u << BPF_R10);
		f->uses_fp = fr.sets_fp;
		f->has_calls = fr.calls;
		set_saved_regs(f, used);
		f->sub = (fr.stack + 7) & ~7u;
		align_for_calls(f, 8 * pushes_rbp + f->sub + 8 * f->saved_cnt +
				   8 * fr.keeps_entry_sp);
	}
}

static bool is_alu64_k(const struct bpf_insn *insn, uint8_t op, uint8_t dst, int32_t imm)
{
	return insn && insn->code == (BPF_ALU64 | op | BPF_K) && insn->dst_reg == dst &&
	       insn->imm == imm && insn->off == 0;
}

/* ---- register liveness ------------------------------------------------ */

#define RBIT(r)  ((uint16_t)(1u << (r)))

/* Local calls keep r6-r9: a callee works in the caller's callee-saved
 * registers (isa/liveness.h). */
#define LIVE_FLAGS BPFRT_LIVE_LOCAL_CALL_READS_R6_R9

static void insn_use_def(const struct jit_ctx *c, const struct bpf_insn *insn, uint16_t *use,
			 uint16_t *def)
{
	bpfrt_insn_reg_flow(c->jp.prog, insn, LIVE_FLAGS, use, def);
}

/* live_out[pc] = registers some path from pc reads before writing. */
static int compute_liveness(struct jit_ctx *c)
{
	if (bpfrt_reg_liveness(c->jp.prog, c->jp.insns, c->jp.n, LIVE_FLAGS, NULL, c->live_out))
		return bpfrt_err(-ENOMEM, "jit: out of memory");
	return 0;
}

/* "d op= s; ...; s = d" with d dead afterwards and neither register
 * touched in between becomes "s op= d; ...": the result goes straight
 * where the program wants it and the copy disappears (clang keeps loop
 * accumulators in one register and computes into a temporary). */
static void coalesce(struct jit_ctx *c)
{
	for (uint32_t s = 0; s < c->jp.prog->subprog_cnt; s++) {
		const struct bpfrt_subprog *sp = &c->jp.prog->subprogs[s];

		for (uint32_t pc = sp->start; pc < sp->end; pc++) {
			const struct bpf_insn *insn = &c->jp.insns[pc];
			uint8_t op = insn_op(insn);
			uint16_t regs = RBIT(insn->dst_reg) | RBIT(insn->src_reg);

			if (insn_is_lddw(insn)) {
				pc++;
				continue;
			}
			if (insn_class(insn) != BPF_ALU64 || insn_src(insn) != BPF_X ||
			    insn->off != 0 || insn->dst_reg == insn->src_reg ||
			    insn->dst_reg >= BPF_R10 || insn->src_reg >= BPF_R10 ||
			    (c->flags[pc] & (F_SWAP | F_ELIDE)) ||
			    (op != BPF_ADD && op != BPF_AND && op != BPF_OR && op != BPF_XOR &&
			     op != BPF_MUL))
				continue;
			for (uint32_t j = pc + 1; j < sp->end && j < pc + 16; j++) {
				const struct bpf_insn *nj = &c->jp.insns[j];
				uint16_t u, d;

				if (c->flags[j] & (F_TARGET | F_SWAP | F_ELIDE))
					break;
				if (nj->code == (BPF_ALU64 | BPF_MOV | BPF_X) && nj->off == 0 &&
				    nj->dst_reg == insn->src_reg && nj->src_reg == insn->dst_reg) {
					if (!(c->live_out[j] & RBIT(insn->dst_reg))) {
						c->flags[pc] |= F_SWAP;
						c->flags[j] |= F_ELIDE;
					}
					break;
				}
				insn_use_def(c, nj, &u, &d);
				if (((u | d) & regs) || insn_is_jump_class(nj))
					break;
				if (insn_is_lddw(nj))
					j++;
			}
		}
	}
}

/* Copies that only feed one reader which can take the copy's source:
 *	d = (u32)s  (mov32, or mov + lsh 32 + rsh 32)  read by a conditional
 *	            jump that can compare s's low half instead;
 *	d = s & m   (m covering the shift mask)  read as a shift count, which
 *	            x86 masks itself.
 * The copy is skipped (F_SKIP) and the reader marked (F_SUBST). */
enum copy_kind { COPY_ZEXT, COPY_MASK };

static bool is_cond_jump(const struct bpf_insn *insn)
{
	return insn_is_branch(insn) && insn_op(insn) != BPF_JA && !insn_is_may_goto(insn);
}

static bool jump_takes_zext_source(const struct bpf_insn *j, bool as_dst)
{
	uint8_t op = insn_op(j);
	bool unsigned_op = op == BPF_JEQ || op == BPF_JNE || op == BPF_JGT || op == BPF_JGE ||
			   op == BPF_JLT || op == BPF_JLE || op == BPF_JSET;

	if (insn_class(j) == BPF_JMP32)
		return true;
	if (insn_src(j) == BPF_K)
		return as_dst && unsigned_op && (j->imm >= 0 || op == BPF_JSET);
	/* 64-bit register compare: both sides must become 32-bit (checked
	 * once all copies are known) */
	return unsigned_op && j->dst_reg != j->src_reg;
}

static int copy_group(const struct jit_ctx *c, uint32_t pc, uint32_t end, enum copy_kind *kind,
		      int32_t *mask)
{
	const struct bpf_insn *i0 = &c->jp.insns[pc], *i1 = pc + 1 < end ? i0 + 1 : NULL;
	const struct bpf_insn *i2 = pc + 2 < end ? i0 + 2 : NULL;
	uint8_t d = i0->dst_reg;

	if ((i0->code != (BPF_ALU | BPF_MOV | BPF_X) && i0->code != (BPF_ALU64 | BPF_MOV | BPF_X)) ||
	    i0->off != 0 || d == i0->src_reg || d >= BPF_R10 || i0->src_reg >= BPF_R10)
		return 0;
	for (uint32_t k = 1; k <= 2 && pc + k < end; k++)
		if (c->flags[pc + k] & (F_TARGET | F_SWAP | F_ELIDE | F_SKIP | F_SUBST))
			return 0;
	if (i1 && i1->code == (insn_class(i0) | BPF_AND | BPF_K) && i1->dst_reg == d &&
	    (i1->imm & 31) == 31) {
		*kind = COPY_MASK;
		*mask = i1->imm;
		return 2;
	}
	if (insn_class(i0) == BPF_ALU) {
		*kind = COPY_ZEXT;
		return 1;
	}
	if (is_alu64_k(i1, BPF_LSH, d, 32) && is_alu64_k(i2, BPF_RSH, d, 32)) {
		*kind = COPY_ZEXT;
		return 3;
	}
	return 0;
}

static void subst(struct jit_ctx *c, uint32_t *grp_of_dst, uint32_t *grp_of_src)
{
	for (uint32_t sp_i = 0; sp_i < c->jp.prog->subprog_cnt; sp_i++) {
		const struct bpfrt_subprog *sp = &c->jp.prog->subprogs[sp_i];

		for (uint32_t pc = sp->start; pc < sp->end; pc++) {
			enum copy_kind kind;
			int32_t mask = 0;
			int len;
			uint8_t d, s;

			if (insn_is_lddw(&c->jp.insns[pc])) {
				pc++;
				continue;
			}
			if (c->flags[pc] & (F_SWAP | F_ELIDE | F_SKIP | F_SUBST) ||
			    !(len = copy_group(c, pc, sp->end, &kind, &mask)))
				continue;
			d = c->jp.insns[pc].dst_reg;
			s = c->jp.insns[pc].src_reg;
			for (uint32_t j = pc + (uint32_t)len; j < sp->end; j++) {
				const struct bpf_insn *nj = &c->jp.insns[j];
				uint16_t u, df;

				if (c->flags[j] & (F_TARGET | F_SWAP | F_ELIDE | F_SKIP))
					break;
				insn_use_def(c, nj, &u, &df);
				if (u & RBIT(d)) {
					bool ok = !(c->live_out[j] & RBIT(d));

					if (kind == COPY_ZEXT && is_cond_jump(nj) && ok) {
						bool as_dst = nj->dst_reg == d;

						if ((as_dst ? c->dst_sub[j] : c->src_sub[j]) >= 0 ||
						    (insn_src(nj) == BPF_X && nj->dst_reg == nj->src_reg) ||
						    !jump_takes_zext_source(nj, as_dst))
							break;
						if (as_dst) {
							c->dst_sub[j] = (int8_t)s;
							grp_of_dst[j] = pc;
						} else {
							c->src_sub[j] = (int8_t)s;
							grp_of_src[j] = pc;
						}
					} else if (kind == COPY_MASK && ok && insn_src(nj) == BPF_X &&
						   (nj->code & 0x07) >= BPF_ALU &&
						   (insn_op(nj) == BPF_LSH || insn_op(nj) == BPF_RSH ||
						    insn_op(nj) == BPF_ARSH) &&
						   nj->src_reg == d && nj->dst_reg != d &&
						   (insn_class(nj) == BPF_ALU || (mask & 63) == 63)) {
						c->src_sub[j] = (int8_t)s;
						grp_of_src[j] = UINT32_MAX; /* never reverted */
					} else {
						break;
					}
					c->flags[j] |= F_SUBST;
					c->flags[pc] |= F_SKIP;
					c->skip_len[pc] = (uint8_t)len;
					for (int k = 1; k < len; k++)
						c->flags[pc + k] |= F_SKIP;
					break;
				}
				if ((df & (RBIT(d) | RBIT(s))) || insn_is_jump_class(nj))
					break;
				if (insn_is_lddw(nj))
					j++;
			}
		}
	}
	/* a 64-bit register compare needs both sides replaced; otherwise
	 * put the copy back */
	for (uint32_t j = 0; j < c->jp.n; j++) {
		const struct bpf_insn *nj = &c->jp.insns[j];
		bool one_sided;

		if (!(c->flags[j] & F_SUBST) || !is_cond_jump(nj) || insn_class(nj) != BPF_JMP ||
		    insn_src(nj) != BPF_X)
			continue;
		one_sided = (c->dst_sub[j] < 0) != (c->src_sub[j] < 0);
		if (!one_sided)
			continue;
		uint32_t g = c->dst_sub[j] >= 0 ? grp_of_dst[j] : grp_of_src[j];

		for (int k = 0; k < c->skip_len[g]; k++)
			c->flags[g + k] &= (uint8_t)~F_SKIP;
		c->dst_sub[j] = c->src_sub[j] = -1;
		c->flags[j] &= (uint8_t)~F_SUBST;
	}
}

/* ---- prologue / epilogue --------------------------------------------- */

static void emit_frame_teardown(struct jit_ctx *c, uint32_t s);
static void emit_private_main_prologue(struct jit_ctx *c);

static void emit_prologue(struct bpfrt_jit_passes *jp, uint32_t s)
{
	struct jit_ctx *c = CTX(jp);
	const struct func_frame *f = &c->frames[s];

	/* nothing is known about flags or upper halves at a function entry */
	c->zf_reg = -1;
	c->zext = 0;
	if (c->jp.priv && s == 0) {
		emit_private_main_prologue(c);
		return;
	}
	if (f->uses_fp) {
		emit_push(&c->b, RBP);
		emit_mov_rr(&c->b, true, RBP, RSP);
	}
	if (f->sub)
		emit_alu_ri(&c->b, true, ALU_SUB, RSP, (int32_t)f->sub);
	for (unsigned k = 0; k < sizeof(saved_order); k++)
		if (f->saved_mask & (1u << saved_order[k]))
			emit_push(&c->b, saved_order[k]);
	if (s == 0 && c->jp.has_callx) {
		/* a helper may run another program on this thread: keep the
		 * outer run's unwind point and put it back on the way out */
		/* push fs:[entry_sp] */
		emit_fs_rm(&c->b, false, false, 0xff, 6,
			   run_state_disp(c, offsetof(struct bpfrt_run_state, entry_sp)));
		emit_store_run_state_reg(c, offsetof(struct bpfrt_run_state, entry_sp), RSP);
	}
}

/* Private stack, main function:
 *	push rbp; [sub rsp, pad]; push callee-saved; push fs:[entry_sp]
 *	mov fs:[entry_sp], rsp
 *	mov rax, fs:[slots]         ; this thread's slot array
 *	mov rbp, [rax+slot]         ; its frame top, 0 if none/in use
 *	test rbp, rbp
 *	jnz have
 *	  rbp = host->claim_slow(prog)  ; r1, r2 kept
 *	  test rbp, rbp; jnz claim  ; claimed: the slot stays 0
 *	  tear down; ret            ; skipped run: r0 = 0
 * have:
 *	mov qword [rax+slot], 0
 * claim:
 */
static void emit_private_main_prologue(struct jit_ctx *c)
{
	const struct func_frame *f = &c->frames[0];
	struct x86_buf *b = &c->b;
	size_t j_have, j_got;

	emit_push(b, RBP);
	if (f->sub)
		emit_alu_ri(b, true, ALU_SUB, RSP, (int32_t)f->sub);
	for (unsigned k = 0; k < sizeof(saved_order); k++)
		if (f->saved_mask & (1u << saved_order[k]))
			emit_push(b, saved_order[k]);

	emit_fs_rm(b, false, true, 0x8b, RAX, (int32_t)c->jp.priv_slots); /* mov rax, fs:[slots] */
	emit_rm(b, false, true, 0x8b, RBP, RAX, c->jp.priv_slot, false);   /* mov rbp, [rax+slot] */
	emit_test_rr(b, true, RBP, RBP);
	j_have = emit_local_jcc(c, CC_NE);
	emit_push(b, RDI);
	emit_push(b, RSI);
	emit_mov_imm64(b, RDI, (uint64_t)(uintptr_t)c->jp.prog);
	emit_call_abs(c, c->jp.priv_claim_slow);
	emit_pop(b, RSI);
	emit_pop(b, RDI);
	emit_mov_rr(b, true, RBP, RAX);
	emit_test_rr(b, true, RAX, RAX);
	j_got = emit_local_jcc(c, CC_NE);
	c->jp.priv_release = false;
	emit_frame_teardown(c, 0);
	c->jp.priv_release = true;
	emit1(b, X86_RET);
	patch_local(c, j_have);
	emit_rm(b, false, true, 0xc7, 0, RAX, c->jp.priv_slot, false);    /* mov qword [rax+slot], 0 */
	emit_u32(b, 0);
	patch_local(c, j_got);  /* claimed by the slow path: the slot stays 0 */
	/* the unwind point, in the stack's own C area: no outer value to
	 * save and restore */
	emit_rex(b, true, RSP, 0, RBP, false); /* mov [rbp + off], rsp */
	emit1(b, 0x89);
	emit_mem_operand(b, RSP, RBP, BPFRT_PRIVSTACK_ENTRY_SP_OFF);
}

/* Private stack, main function: gives the stack back (unless the run
 * never claimed it) and undoes the prologue. */
static void emit_private_main_teardown(struct jit_ctx *c)
{
	const struct func_frame *f = &c->frames[0];

	if (c->jp.priv_release) {
		/* rdx (BPF r3) is dead at an exit and in a tail call, which
		 * passes rdi and rsi and holds its target in r11 */
		emit_fs_rm(&c->b, false, true, 0x8b, RDX, (int32_t)c->jp.priv_slots); /* mov rdx, fs:[slots] */
		emit_rm(&c->b, false, true, 0x89, RBP, RDX, c->jp.priv_slot, false);  /* mov [rdx+slot], rbp */
	}
	for (int k = (int)sizeof(saved_order) - 1; k >= 0; k--)
		if (f->saved_mask & (1u << saved_order[k]))
			emit_pop(&c->b, saved_order[k]);
	if (f->sub)
		emit_alu_ri(&c->b, true, ALU_ADD, RSP, (int32_t)f->sub);
	emit_pop(&c->b, RBP);
}

static void emit_frame_teardown(struct jit_ctx *c, uint32_t s)
{
	const struct func_frame *f = &c->frames[s];

	if (c->jp.priv && s == 0) {
		emit_private_main_teardown(c);
		return;
	}
	if (s == 0 && c->jp.has_callx) {
		/* pop fs:[entry_sp] */
		emit_fs_rm(&c->b, false, false, 0x8f, 0,
			   run_state_disp(c, offsetof(struct bpfrt_run_state, entry_sp)));
	}
	for (int k = (int)sizeof(saved_order) - 1; k >= 0; k--)
		if (f->saved_mask & (1u << saved_order[k]))
			emit_pop(&c->b, saved_order[k]);
	if (f->uses_fp)
		emit1(&c->b, X86_LEAVE);
	else if (f->sub)
		emit_alu_ri(&c->b, true, ALU_ADD, RSP, (int32_t)f->sub);
}

static void emit_epilogue(struct jit_ctx *c, uint32_t s)
{
	emit_frame_teardown(c, s);
	emit1(&c->b, X86_RET);
}


/* Unwinds an aborted run from any call depth: back to main's frame, then
 * main's epilogue; bpfrt_prog_run reads the reason from the run state. */
static void emit_abort_stub(struct bpfrt_jit_passes *jp)
{
	struct jit_ctx *c = CTX(jp);
	const struct func_frame *f = &c->frames[0];

	if (c->jp.priv) {
		/* private stack: a guard-page fault resumes here too (the
		 * SIGSEGV handler sets rsp = entry_sp); rbp is unknown, so
		 * the stack is given back by C */
		emit_mov_imm64(&c->b, RDI, (uint64_t)(uintptr_t)c->jp.prog);
		emit_call_abs(c, c->jp.priv_release_aborted);
		emit_mov_rr(&c->b, true, RSP, RAX); /* the entry rsp it returns */
		c->jp.priv_release = false;
		emit_frame_teardown(c, 0);
		c->jp.priv_release = true;
		emit_rr(&c->b, false, 0x31, RAX, RAX);
		emit1(&c->b, X86_RET);
		return;
	}

	emit_load_run_state_reg(c, offsetof(struct bpfrt_run_state, entry_sp), RSP);
	/* past the saved outer entry_sp and the callee-saved registers */
	emit_lea(&c->b, true, RBP, RSP, (int32_t)(8 + f->sub + 8 * f->saved_cnt));
	emit_epilogue(c, 0);
}

/* ---- ALU -------------------------------------------------------------- */

static void emit_mov_reg(struct jit_ctx *c, bool is64, int dst, int src)
{
	if (dst == src && is64)
		return;
	emit_mov_rr(&c->b, is64, dst, src);
}

/* Zero-extends the low half of a BPF register unless already known. */
static void emit_zext(struct jit_ctx *c, uint8_t bpf_reg)
{
	if (c->zext & (1u << bpf_reg))
		return;
	emit_mov_rr(&c->b, false, R(bpf_reg), R(bpf_reg));
}

static void emit_div(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool sign = insn->off == 1;
	bool is_mod = insn_op(insn) == BPF_MOD;
	int dst = R(insn->dst_reg);
	int divisor;
	size_t j_zero = 0, j_m1 = 0, j_done1 = 0, j_done2 = 0;

	if (insn_src(insn) == BPF_K) {
		uint64_t d = is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm;

		if (d == 0) {
			/* x / 0 = 0, x % 0 = x */
			if (!is_mod)
				emit_rr(b, false, 0x31, dst, dst);
			else if (!is64)
				emit_zext(c, insn->dst_reg);
			return;
		}
		if (sign && insn->imm == -1) {
			if (!is_mod)
				emit_grp3(b, is64, 3, dst); /* neg: INT_MIN stays INT_MIN */
			else
				emit_rr(b, false, 0x31, dst, dst);
			return;
		}
		if (!sign && is_pow2(d)) {
			unsigned sh = log2_u64(d);

			if (is_mod)
				emit_alu_ri(b, is64, ALU_AND, dst, (int32_t)(d - 1));
			else if (sh)
				emit_shift_ri(b, is64, SH_SHR, dst, (uint8_t)sh);
			else if (!is64)
				emit_zext(c, insn->dst_reg);
			return;
		}
		emit_mov_imm64(b, TMP, d);
		divisor = TMP;
	} else {
		int src = R(insn->src_reg);

		if (src == RAX || src == RDX) {
			emit_mov_rr(b, true, TMP, src);
			divisor = TMP;
		} else {
			divisor = src;
		}
		emit_test_rr(b, is64, divisor, divisor);
		j_zero = emit_local_jcc(c, CC_E);
		if (sign) {
			emit_alu_ri(b, is64, ALU_CMP, divisor, -1);
			j_m1 = emit_local_jcc(c, CC_E);
		}
	}

	/* the division proper: dividend in (r|e)dx:(r|e)ax */
	{
		int save_rdx = divisor == TMP ? TMP2 : TMP;
		int res = is_mod ? RDX : RAX;

		if (dst != RAX)
			emit_mov_rr(b, true, AUX, RAX);
		if (dst != RDX)
			emit_mov_rr(b, true, save_rdx, RDX);
		if (dst != RAX)
			emit_mov_rr(b, is64, RAX, dst);
		if (sign) {
			emit_rex(b, is64, 0, 0, 0, false);
			emit1(b, 0x99); /* cqo / cdq */
		} else {
			emit_rr(b, false, 0x31, RDX, RDX);
		}
		emit_grp3(b, is64, sign ? 7 : 6, divisor);
		/* a 32-bit div already zero-extended eax and edx */
		if (dst != res)
			emit_mov_rr(b, is64, dst, res);
		if (dst != RAX)
			emit_mov_rr(b, true, RAX, AUX);
		if (dst != RDX)
			emit_mov_rr(b, true, RDX, save_rdx);
	}

	if (!j_zero)
		return;
	j_done1 = emit_local_jcc(c, -1);
	patch_local(c, j_zero);
	if (!is_mod)
		emit_rr(b, false, 0x31, dst, dst);
	else if (!is64)
		emit_mov_rr(b, false, dst, dst);
	if (sign) {
		j_done2 = emit_local_jcc(c, -1);
		patch_local(c, j_m1);
		if (!is_mod)
			emit_grp3(b, is64, 3, dst);
		else
			emit_rr(b, false, 0x31, dst, dst);
		patch_local(c, j_done2);
	}
	patch_local(c, j_done1);
}

static void emit_shift(struct jit_ctx *c, const struct bpf_insn *insn, enum x86_shift op)
{
	struct x86_buf *b = &c->b;
	bool is64 = insn_class(insn) == BPF_ALU64;
	int dst = R(insn->dst_reg);

	if (insn_src(insn) == BPF_K) {
		uint8_t n = (uint8_t)(insn->imm & (is64 ? 63 : 31));

		if (n)
			emit_shift_ri(b, is64, op, dst, n);
		else if (!is64)
			emit_zext(c, insn->dst_reg);
		return;
	}
	int src = R(c->flags[c->jp.pc] & F_SUBST ? (uint8_t)c->src_sub[c->jp.pc] : insn->src_reg);

	if (c->bmi2) {
		int pp = op == SH_SHL ? 1 : op == SH_SAR ? 2 : 3;

		emit_bmi2_shift(b, is64, pp, dst, dst, src);
		return;
	}
	if (src == RCX) {
		emit_shift_cl(b, is64, op, dst);
	} else if (dst == RCX) {
		emit_mov_rr(b, true, TMP, RCX);
		emit_mov_rr(b, true, RCX, src);
		emit_shift_cl(b, is64, op, TMP);
		emit_mov_rr(b, true, RCX, TMP);
	} else {
		emit_mov_rr(b, true, TMP, RCX);
		emit_mov_rr(b, true, RCX, src);
		emit_shift_cl(b, is64, op, dst);
		emit_mov_rr(b, true, RCX, TMP);
	}
}

static void emit_mul(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	bool is64 = insn_class(insn) == BPF_ALU64;
	int dst = R(insn->dst_reg);

	if (insn_src(insn) == BPF_X) {
		emit_rr(b, is64, 0x0faf, dst, R(insn->src_reg));
		return;
	}
	int32_t imm = insn->imm;
	uint64_t uimm = is64 ? (uint64_t)(int64_t)imm : (uint32_t)imm;

	if (imm == 0) {
		emit_rr(b, false, 0x31, dst, dst);
	} else if (imm == 1) {
		if (!is64)
			emit_zext(c, insn->dst_reg);
	} else if (imm > 0 && is_pow2(uimm)) {
		emit_shift_ri(b, is64, SH_SHL, dst, (uint8_t)log2_u64(uimm));
	} else if (is_imm8(imm)) {
		emit_rr(b, is64, 0x6b, dst, dst);
		emit1(b, (uint8_t)imm);
	} else {
		emit_rr(b, is64, 0x69, dst, dst);
		emit_u32(b, (uint32_t)imm);
	}
}

static void emit_endian(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	int dst = R(insn->dst_reg);
	/* ALU64 END is the unconditional bswap; ALU END|TO_BE swaps too */
	bool swap = insn_class(insn) == BPF_ALU64 || insn_src(insn) == BPF_X;

	switch (insn->imm) {
	case 16:
		if (swap) {
			/* rol r16, 8 */
			emit1(b, 0x66);
			emit_shift_ri(b, false, SH_ROL, dst, 8);
		}
		emit_rr(b, false, 0x0fb7, dst, dst); /* movzx r32, r16 */
		break;
	case 32:
		if (swap) {
			emit_rex(b, false, 0, 0, dst, false);
			emit2(b, 0x0f, 0xc8 + (dst & 7));
		} else {
			emit_zext(c, insn->dst_reg);
		}
		break;
	case 64:
		if (swap) {
			emit_rex(b, true, 0, 0, dst, false);
			emit2(b, 0x0f, 0xc8 + (dst & 7));
		}
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "bad byte-swap width %d", insn->imm);
	}
}

/* mov with sign extension: off = 8/16/32 */
static void emit_movsx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	bool is64 = insn_class(insn) == BPF_ALU64;
	int dst = R(insn->dst_reg), src = R(insn->src_reg);

	switch (insn->off) {
	case 8:
		emit_rr_byte(b, is64, 0x0fbe, dst, src);
		break;
	case 16:
		emit_rr(b, is64, 0x0fbf, dst, src);
		break;
	case 32:
		if (is64)
			emit_rr(b, true, 0x63, dst, src);
		else
			emit_mov_rr(b, false, dst, src);
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "bad movsx width %d", insn->off);
	}
}

/* The instruction k after the current one, if it and everything up to
 * it is straight-line code that can be folded into the current one (no
 * branch lands in between). */
static const struct bpf_insn *foldable_at(const struct jit_ctx *c, uint32_t k)
{
	for (uint32_t i = 1; i <= k; i++) {
		uint32_t next = c->jp.pc + i;

		if (next >= c->jp.prog->subprogs[c->jp.sub].end ||
		    (c->flags[next] & (F_TARGET | F_SWAP | F_ELIDE | F_SKIP | F_SUBST)))
			return NULL;
	}
	return &c->jp.insns[c->jp.pc + k];
}

static const struct bpf_insn *foldable_next(const struct jit_ctx *c)
{
	return foldable_at(c, 1);
}


/* [mov dst, src;] lsh dst, 32; rsh|arsh dst, 32: the zero- or
 * sign-extension idiom of clang, one x86 instruction. at is the index
 * (relative to the current instruction) of the lsh. Returns the number of
 * instructions consumed, 0 if no match. */
static int try_fold_zext_compare(struct jit_ctx *c, uint8_t dst, uint8_t src, uint32_t at);

static int try_fold_extend(struct jit_ctx *c, uint8_t dst, uint8_t src, uint32_t at)
{
	const struct bpf_insn *lsh = at ? foldable_at(c, at) : &c->jp.insns[c->jp.pc];
	const struct bpf_insn *rsh = foldable_at(c, at + 1);
	int n;

	if (!is_alu64_k(lsh, BPF_LSH, dst, 32) || !rsh)
		return 0;
	if (is_alu64_k(rsh, BPF_RSH, dst, 32)) {
		if ((n = try_fold_zext_compare(c, dst, src, at + 2)))
			return n;
		if (dst == src)
			emit_zext(c, dst);
		else
			emit_mov_rr(&c->b, false, R(dst), R(src));
		return (int)at + 2;
	}
	if (is_alu64_k(rsh, BPF_ARSH, dst, 32)) {
		emit_rr(&c->b, true, 0x63, R(dst), R(src)); /* movsxd */
		return (int)at + 2;
	}
	return 0;
}

/* mov a, b; rsh a, k; lsh b, 64 - k; or b, a: a rotate of b (a keeps
 * b >> k). The rotate takes one instruction off b's dependency chain. */
static int try_fold_rotate(struct jit_ctx *c, const struct bpf_insn *insn)
{
	uint8_t a = insn->dst_reg, b = insn->src_reg;
	const struct bpf_insn *rsh = foldable_at(c, 1), *lsh = foldable_at(c, 2);
	const struct bpf_insn *or = foldable_at(c, 3);
	int32_t k;

	if (!rsh || !lsh || !or || a == b || rsh->code != (BPF_ALU64 | BPF_RSH | BPF_K) ||
	    rsh->dst_reg != a)
		return 0;
	k = rsh->imm;
	if (k <= 0 || k >= 64 || !is_alu64_k(lsh, BPF_LSH, b, 64 - k) ||
	    or->code != (BPF_ALU64 | BPF_OR | BPF_X) || or->dst_reg != b || or->src_reg != a)
		return 0;
	if (c->live_out[c->jp.pc + 3] & (1u << a)) {
		emit_mov_rr(&c->b, true, R(a), R(b));
		emit_shift_ri(&c->b, true, SH_SHR, R(a), (uint8_t)k);
	}
	emit_shift_ri(&c->b, true, SH_ROL, R(b), (uint8_t)(64 - k));
	return 4;
}

/* mov a, b; xor a, -1; and a, imm: with BMI1, a = imm; andn a, b, a. */
static int try_fold_andn(struct jit_ctx *c, const struct bpf_insn *insn)
{
	const struct bpf_insn *x = foldable_at(c, 1), *and = foldable_at(c, 2);
	int a = R(insn->dst_reg), b = R(insn->src_reg);

	if (!c->bmi1 || insn->dst_reg == insn->src_reg || !is_alu64_k(x, BPF_XOR, insn->dst_reg, -1) ||
	    !and || and->code != (BPF_ALU64 | BPF_AND | BPF_K) || and->dst_reg != insn->dst_reg)
		return 0;
	emit_mov_imm64(&c->b, a, (uint64_t)(int64_t)and->imm);
	/* VEX.LZ.0F38.W1 F2 /r: andn a, b, a */
	emit1(&c->b, 0xc4);
	emit1(&c->b, (uint8_t)(((~a >> 3) & 1) << 7 | 1 << 6 | ((~a >> 3) & 1) << 5 | 0x02));
	emit1(&c->b, (uint8_t)(0x80 | ((~b & 0xf) << 3)));
	emit1(&c->b, 0xf2);
	emit_modrm(&c->b, 3, a, a);
	return 3;
}

/* mov dst, src; add dst, imm|reg  ->  lea dst, [src + imm|reg]. Returns
 * the number of instructions consumed, 0 if no match. */
static int try_fold_mov_add(struct jit_ctx *c, const struct bpf_insn *insn)
{
	const struct bpf_insn *nx = foldable_next(c);
	bool is64 = insn_class(insn) == BPF_ALU64;
	int dst = R(insn->dst_reg), src = R(insn->src_reg);

	if (!nx || insn->dst_reg == insn->src_reg || insn->off != 0 ||
	    insn_class(nx) != insn_class(insn) || nx->dst_reg != insn->dst_reg)
		return 0;
	if (nx->code == (insn_class(insn) | BPF_ADD | BPF_K)) {
		const struct bpf_insn *nx2 = foldable_at(c, 2);

		/* mov dst, src; add dst, imm; add dst, reg: one lea */
		if (nx2 && nx2->code == (insn_class(insn) | BPF_ADD | BPF_X) &&
		    nx2->dst_reg == insn->dst_reg && nx2->src_reg != insn->dst_reg) {
			emit_rm_sib(&c->b, is64, 0x8d, dst, src, R(nx2->src_reg), 0, nx->imm);
			return 3;
		}
		emit_lea(&c->b, is64, dst, src, nx->imm);
		return 2;
	}
	if (nx->code == (insn_class(insn) | BPF_SUB | BPF_K) && nx->imm != INT32_MIN) {
		emit_lea(&c->b, is64, dst, src, -nx->imm);
		return 2;
	}
	if (nx->code == (insn_class(insn) | BPF_ADD | BPF_X) && nx->src_reg != insn->dst_reg) {
		emit_rm_sib(&c->b, is64, 0x8d, dst, src, R(nx->src_reg), 0, 0);
		return 2;
	}
	return 0;
}

static int translate_alu(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool k = insn_src(insn) == BPF_K;
	int dst = R(insn->dst_reg);
	int src = R(insn->src_reg);
	uint8_t op = insn_op(insn);
	int consumed;
	static const int8_t grp1[16] = {
		[BPF_ADD >> 4] = ALU_ADD, [BPF_SUB >> 4] = ALU_SUB, [BPF_OR >> 4] = ALU_OR,
		[BPF_AND >> 4] = ALU_AND, [BPF_XOR >> 4] = ALU_XOR,
	};

	switch (op) {
	case BPF_ADD: case BPF_SUB: case BPF_OR: case BPF_AND: case BPF_XOR:
		if (k) {
			int32_t imm = insn->imm;

			if (imm == 0 && op != BPF_AND) {
				/* identity: only the zero-extension remains */
				if (!is64)
					emit_zext(c, insn->dst_reg);
				return 1;
			}
			if (op == BPF_AND && !is64 && imm == -1) {
				emit_zext(c, insn->dst_reg);
				return 1;
			}
			if (op == BPF_AND && (imm == 0xff || imm == 0xffff)) {
				emit_rr_byte(b, false, imm == 0xff ? 0x0fb6 : 0x0fb7, dst, dst);
				return 1;
			}
			emit_alu_ri(b, is64, grp1[op >> 4], dst, imm);
		} else {
			if (op == BPF_XOR && dst == src) {
				emit_rr(b, false, 0x31, dst, dst);
			} else if (op == BPF_SUB && dst == src) {
				emit_rr(b, false, 0x31, dst, dst);
			} else {
				emit_alu_rr(b, is64, grp1[op >> 4], dst, src);
			}
		}
		c->zf_reg = insn->dst_reg;
		c->zf_w32 = !is64;
		return 1;
	case BPF_MOV:
		if (k) {
			if (is64)
				emit_mov_imm64(b, dst, (uint64_t)(int64_t)insn->imm);
			else
				emit_mov_imm64(b, dst, (uint32_t)insn->imm);
			return 1;
		}
		if (insn->off) {
			emit_movsx(c, insn);
			return 1;
		}
		if (is64) {
			int n = try_fold_extend(c, insn->dst_reg, insn->src_reg, 1);

			if (!n)
				n = try_fold_rotate(c, insn);
			if (!n)
				n = try_fold_andn(c, insn);
			if (n)
				return n;
		} else if ((consumed = try_fold_zext_compare(c, insn->dst_reg, insn->src_reg, 1))) {
			return consumed;
		}
		if ((consumed = try_fold_mov_add(c, insn)))
			return consumed;
		if (dst == src && !is64)
			emit_zext(c, insn->dst_reg);
		else
			emit_mov_reg(c, is64, dst, src);
		return 1;
	case BPF_MUL:
		emit_mul(c, insn);
		return 1;
	case BPF_DIV:
	case BPF_MOD:
		emit_div(c, insn);
		return 1;
	case BPF_LSH:
		if (is64 && k && (consumed = try_fold_extend(c, insn->dst_reg, insn->dst_reg, 0)))
			return consumed;
		emit_shift(c, insn, SH_SHL);
		return 1;
	case BPF_RSH:
		emit_shift(c, insn, SH_SHR);
		return 1;
	case BPF_ARSH:
		emit_shift(c, insn, SH_SAR);
		return 1;
	case BPF_NEG:
		emit_grp3(b, is64, 3, dst);
		c->zf_reg = insn->dst_reg;
		c->zf_w32 = !is64;
		return 1;
	case BPF_END:
		emit_endian(c, insn);
		return 1;
	}
	bpfrt_jit_fail(&c->jp, -EINVAL, "unknown ALU opcode 0x%02x", insn->code);
	return 1;
}

/* ---- memory ----------------------------------------------------------- */

/* ldx d, [b+off]; d op= s|imm; stx [b+off], d with d dead afterwards:
 * one read-modify-write instruction on memory. */
static int try_fold_mem_rmw(struct jit_ctx *c, const struct bpf_insn *insn)
{
	const struct bpf_insn *op = foldable_at(c, 1), *st = foldable_at(c, 2);
	uint8_t size = insn_size(insn), d = insn->dst_reg, b = insn->src_reg;
	static const int8_t grp1[16] = {
		[BPF_ADD >> 4] = ALU_ADD, [BPF_SUB >> 4] = ALU_SUB, [BPF_OR >> 4] = ALU_OR,
		[BPF_AND >> 4] = ALU_AND, [BPF_XOR >> 4] = ALU_XOR,
	};
	struct x86_buf *buf = &c->b;
	bool byte = size == BPF_B, w = size == BPF_DW;
	int alu;

	if (insn_mode(insn) != BPF_MEM || !op || !st || b == d ||
	    (insn_class(op) != BPF_ALU64 && (insn_class(op) != BPF_ALU || w)) ||
	    op->dst_reg != d || op->off != 0 ||
	    (insn_src(op) == BPF_X && (op->src_reg == d || op->src_reg == BPF_R10)) ||
	    st->code != (BPF_STX | size | BPF_MEM) || st->dst_reg != b || st->src_reg != d ||
	    st->off != insn->off || (c->live_out[c->jp.pc + 2] & RBIT(d)))
		return 0;
	switch (insn_op(op)) {
	case BPF_ADD: case BPF_SUB: case BPF_OR: case BPF_AND: case BPF_XOR:
		alu = grp1[insn_op(op) >> 4];
		break;
	default:
		return 0;
	}
	if (insn_src(op) == BPF_X) {
		emit_rm(buf, size == BPF_H, w, (uint16_t)((alu << 3) | (byte ? 0 : 1)),
			R(op->src_reg), R(b), insn->off, byte);
		return 3;
	}
	if (byte) {
		emit_rm(buf, false, false, 0x80, alu, R(b), insn->off, false);
		emit1(buf, (uint8_t)op->imm);
	} else if (is_imm8(op->imm)) {
		emit_rm(buf, size == BPF_H, w, 0x83, alu, R(b), insn->off, false);
		emit1(buf, (uint8_t)op->imm);
	} else {
		emit_rm(buf, size == BPF_H, w, 0x81, alu, R(b), insn->off, false);
		if (size == BPF_H)
			emit_u16(buf, (uint16_t)op->imm);
		else
			emit_u32(buf, (uint32_t)op->imm);
	}
	return 3;
}

static void translate_ldx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	int dst = R(insn->dst_reg), base = R(insn->src_reg);
	bool sx = insn_is_ldx_sext(insn);
	uint32_t at = (uint32_t)b->len;

	switch (insn_size(insn)) {
	case BPF_B:
		emit_rm(b, false, sx, sx ? 0x0fbe : 0x0fb6, dst, base, insn->off, false);
		break;
	case BPF_H:
		emit_rm(b, false, sx, sx ? 0x0fbf : 0x0fb7, dst, base, insn->off, false);
		break;
	case BPF_W:
		emit_rm(b, false, sx, sx ? 0x63 : 0x8b, dst, base, insn->off, false);
		break;
	default:
		emit_rm(b, false, true, 0x8b, dst, base, insn->off, false);
	}
	/* fault-safe: the same load, plus an exception table entry whose
	 * fixup (emit_probe_fixup) zeroes dst and resumes after it */
	if (insn_is_probe_load(insn))
		bpfrt_jit_probe_load(&c->jp, at, (uint32_t)b->len, (uint32_t)dst);
}

/* A fault-safe load faulted: xor dst, dst; jmp back after the load
 * (rel32 always, so every pass has the same size). */
static void emit_probe_fixup(struct bpfrt_jit_passes *jp, const struct bpfrt_jit_probe *p)
{
	struct x86_buf *b = &CTX(jp)->b;

	emit_alu_rr(b, false, ALU_XOR, (int)p->reg, (int)p->reg);
	emit_jmp_rel32(b, (int32_t)((int64_t)p->resume_off - (int64_t)(b->len + 5)));
}

static void translate_st(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	int base = R(insn->dst_reg);

	switch (insn_size(insn)) {
	case BPF_B:
		emit_rm(b, false, false, 0xc6, 0, base, insn->off, false);
		emit1(b, (uint8_t)insn->imm);
		break;
	case BPF_H:
		emit_rm(b, true, false, 0xc7, 0, base, insn->off, false);
		emit_u16(b, (uint16_t)insn->imm);
		break;
	case BPF_W:
		emit_rm(b, false, false, 0xc7, 0, base, insn->off, false);
		emit_u32(b, (uint32_t)insn->imm);
		break;
	default:
		emit_rm(b, false, true, 0xc7, 0, base, insn->off, false);
		emit_u32(b, (uint32_t)insn->imm);
	}
}

static void translate_stx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	int base = R(insn->dst_reg), src = R(insn->src_reg);

	switch (insn_size(insn)) {
	case BPF_B:
		emit_rm(b, false, false, 0x88, src, base, insn->off, true);
		break;
	case BPF_H:
		emit_rm(b, true, false, 0x89, src, base, insn->off, false);
		break;
	case BPF_W:
		emit_rm(b, false, false, 0x89, src, base, insn->off, false);
		break;
	default:
		emit_rm(b, false, true, 0x89, src, base, insn->off, false);
	}
}

static void emit_lock(struct x86_buf *b) { emit1(b, 0xf0); }

static void translate_atomic(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	bool is64 = insn_size(insn) == BPF_DW;
	int base = R(insn->dst_reg), src = R(insn->src_reg);
	int32_t off = insn->off;
	static const uint8_t rmw[16] = {
		[BPF_ADD >> 4] = 0x01, [BPF_OR >> 4] = 0x09,
		[BPF_AND >> 4] = 0x21, [BPF_XOR >> 4] = 0x31,
	};

	switch (insn->imm) {
	case BPF_ADD: case BPF_OR: case BPF_AND: case BPF_XOR:
		emit_lock(b);
		emit_rm(b, false, is64, rmw[insn->imm >> 4], src, base, off, false);
		return;
	case BPF_ADD | BPF_FETCH:
		emit_lock(b);
		emit_rm(b, false, is64, 0x0fc1, src, base, off, false); /* xadd */
		return;
	case BPF_XCHG:
		emit_rm(b, false, is64, 0x87, src, base, off, false);
		return;
	case BPF_CMPXCHG:
		emit_lock(b);
		emit_rm(b, false, is64, 0x0fb1, src, base, off, false);
		if (!is64)
			emit_mov_rr(b, false, RAX, RAX); /* r0 = zext(old) */
		return;
	case BPF_OR | BPF_FETCH:
	case BPF_AND | BPF_FETCH:
	case BPF_XOR | BPF_FETCH: {
		/* no single x86 instruction: cmpxchg loop in rax */
		int operand = src;
		size_t loop;

		emit_mov_rr(b, true, AUX, RAX);         /* save r0 */
		if (src == RAX)
			operand = AUX;
		if (base == RAX) {
			emit_mov_rr(b, true, TMP2, RAX);
			base = TMP2;
		}
		emit_rm(b, false, is64, 0x8b, RAX, base, off, false);
		loop = b->len;
		emit_mov_rr(b, is64, TMP, RAX);
		emit_alu_rr(b, is64, (enum x86_alu)(rmw[(insn->imm & ~BPF_FETCH) >> 4] >> 3),
			    TMP, operand);
		emit_lock(b);
		emit_rm(b, false, is64, 0x0fb1, TMP, base, off, false);
		emit2(b, 0x75, (uint8_t)(int8_t)(loop - (b->len + 2))); /* jne loop */
		if (src != RAX) {
			emit_mov_rr(b, is64, src, RAX);
			emit_mov_rr(b, true, RAX, AUX);
		} else if (!is64) {
			emit_mov_rr(b, false, RAX, RAX);
		}
		return;
	}
	}
	bpfrt_jit_fail(&c->jp, -EINVAL, "unknown atomic operation 0x%x", insn->imm);
}

/* ---- jumps and calls -------------------------------------------------- */

static int jmp_cc(uint8_t op)
{
	switch (op) {
	case BPF_JEQ:  return CC_E;
	case BPF_JNE:  return CC_NE;
	case BPF_JSET: return CC_NE;
	case BPF_JGT:  return CC_A;
	case BPF_JGE:  return CC_AE;
	case BPF_JLT:  return CC_B;
	case BPF_JLE:  return CC_BE;
	case BPF_JSGT: return CC_G;
	case BPF_JSGE: return CC_GE;
	case BPF_JSLT: return CC_L;
	case BPF_JSLE: return CC_LE;
	}
	return -1;
}

/* Conditional jump at jpc (the current instruction or one folded into
 * it). cmp_reg >= 0 compares that x86 register's low 32 bits instead of
 * dst (its zero-extended copy, dead after the jump). Returns the number of
 * instructions consumed from jpc: 2 when "jcc +1; ja X" became "j!cc X". */
static int emit_cond_jump(struct jit_ctx *c, uint32_t jpc, int dst_sub, int src_sub,
			  int prev_zf_reg, bool prev_zf_w32)
{
	const struct bpf_insn *insn = &c->jp.insns[jpc];
	struct x86_buf *b = &c->b;
	int cmp_reg = dst_sub >= 0 ? R((uint8_t)dst_sub) : -1;
	bool is64 = insn_class(insn) == BPF_JMP && dst_sub < 0 && src_sub < 0;
	uint8_t op = insn_op(insn);
	int cc = jmp_cc(op);
	int dst = cmp_reg >= 0 ? cmp_reg : R(insn->dst_reg);
	int64_t target = insn_branch_target(insn, jpc);
	const struct bpf_insn *nx;
	int consumed = 1;

	if (cc < 0) {
		c->jp.err = bpfrt_err(-EINVAL, "jit: insn %u: unknown jump opcode 0x%02x",
				   jpc, insn->code);
		return 1;
	}
	if (target == jpc + 1)
		return 1; /* both ways lead to the next instruction; compares have no effects */
	nx = foldable_at(c, jpc - c->jp.pc + 1);
	if (target == jpc + 2 && nx && insn_op(nx) == BPF_JA &&
	    (nx->code == (BPF_JMP | BPF_JA) || insn_is_gotol(nx))) {
		/* jump over a jump: invert the condition instead */
		target = insn_branch_target(nx, jpc + 1);
		cc ^= 1;
		consumed = 2;
	}

	if (insn_src(insn) == BPF_X) {
		int src = R(src_sub >= 0 ? (uint8_t)src_sub : insn->src_reg);

		if (op == BPF_JSET)
			emit_test_rr(b, is64, dst, src);
		else
			emit_alu_rr(b, is64, ALU_CMP, dst, src);
	} else if (op == BPF_JSET) {
		if (insn->imm == 0)
			return 1; /* never taken */
		emit_test_ri(b, is64, dst, insn->imm);
	} else if (insn->imm == 0) {
		/* cmp r, 0 and test r, r set the same flags; when the previous
		 * ALU instruction left ZF for this very value, only ZF matters */
		bool zf_ok = cmp_reg < 0 && (op == BPF_JEQ || op == BPF_JNE) &&
			     prev_zf_reg == insn->dst_reg && (prev_zf_w32 || is64);

		if (!zf_ok)
			emit_test_rr(b, is64, dst, dst);
	} else {
		emit_alu_ri(b, is64, ALU_CMP, dst, insn->imm);
	}
	emit_jump_to(c, cc, c->jp.prev.start[target]);
	return consumed;
}

static int translate_cond_jump(struct jit_ctx *c, const struct bpf_insn *insn,
			       int prev_zf_reg, bool prev_zf_w32)
{
	if (c->flags[c->jp.pc] & F_SUBST)
		return emit_cond_jump(c, c->jp.pc, c->dst_sub[c->jp.pc], c->src_sub[c->jp.pc], -1,
				      false);
	return emit_cond_jump(c, c->jp.pc, -1, -1, prev_zf_reg, prev_zf_w32);
}

/* A zero-extending copy dst = (u32)src that only feeds the conditional
 * jump right after it (dst dead afterwards): compare src's low half
 * directly. at is the jump's index relative to the current instruction.
 * Returns instructions consumed including the jump, 0 if no match. */
static int try_fold_zext_compare(struct jit_ctx *c, uint8_t dst, uint8_t src, uint32_t at)
{
	const struct bpf_insn *j = foldable_at(c, at);
	uint8_t op;

	if (!j || !is_cond_jump(j) || j->dst_reg != dst || insn_src(j) != BPF_K || (c->live_out[c->jp.pc + at] & (1u << dst)))
		return 0;
	op = insn_op(j);
	/* a 64-bit compare of a zero-extended value equals the 32-bit one
	 * only for unsigned (and equality) conditions against imm >= 0 */
	if (insn_class(j) == BPF_JMP &&
	    (j->imm < 0 || op == BPF_JSGT || op == BPF_JSGE || op == BPF_JSLT || op == BPF_JSLE))
		return 0;
	return (int)at + emit_cond_jump(c, c->jp.pc + at, src, -1, -1, false);
}

/* may_goto: the run's budget (core/run.h) at fs:, spent: jump.
 *	cmp dword fs:[may_goto_left], 0
 *	je target
 *	dec dword fs:[may_goto_left] */
static void translate_may_goto(struct jit_ctx *c, const struct bpf_insn *insn)
{
	int32_t disp = run_state_disp(c, offsetof(struct bpfrt_run_state, may_goto_left));
	int64_t t = insn_branch_target(insn, c->jp.pc);

	emit_fs_rm(&c->b, false, false, 0x83, 7, disp);
	emit1(&c->b, 0);
	emit_jump_to(c, CC_E, c->jp.prev.start[t]);
	emit_fs_rm(&c->b, false, false, 0xff, 1, disp);
}

static void translate_callx(struct jit_ctx *c, const struct bpf_insn *insn)
{
	struct x86_buf *b = &c->b;
	size_t j_bad1, j_bad2, j_done;

	emit_mov_rr(b, true, TMP, R(insn->dst_reg));
	emit_alu_ri(b, true, ALU_CMP, TMP, BPFRT_MAX_HELPER_ID - 1);
	j_bad1 = emit_local_jcc(c, CC_A);
	emit_mov_imm64_keep_flags(b, AUX, (uint64_t)(uintptr_t)c->jp.prog->helpers);
	/* rax (r0) is free: the call defines it and an abort discards it */
	emit_rr(b, true, 0x69, RAX, TMP);
	emit_u32(b, (uint32_t)sizeof(struct bpfrt_helper));
	emit_rm_sib(b, true, 0x8b, AUX, AUX, RAX, 0, (int32_t)offsetof(struct bpfrt_helper, fn));
	emit_test_rr(b, true, AUX, AUX);
	j_bad2 = emit_local_jcc(c, CC_E);
	emit_call_r(b, AUX);
	j_done = emit_local_jcc(c, -1);
	patch_local(c, j_bad1);
	patch_local(c, j_bad2);
	emit_store_run_state_imm32(c, offsetof(struct bpfrt_run_state, abort_pc), c->jp.pc);
	emit_store_run_state_reg(c, offsetof(struct bpfrt_run_state, abort_arg), TMP);
	emit_store_run_state_imm32(c, offsetof(struct bpfrt_run_state, abort_err), ENOENT);
	/* the stub's distance is out of this instruction's control: rel32 */
	emit_jmp_rel32(b, (int32_t)((int64_t)c->jp.prev.abort_off - (prev_pos(c) + 5)));
	patch_local(c, j_done);
}

/* Tail call (helpers/callback.h has the contract): ask for the target,
 * then replace this function's frame with it; on failure r0 = -ENOENT and
 * the program goes on. */
static void translate_tail_call(struct jit_ctx *c)
{
	struct x86_buf *b = &c->b;
	size_t j_fail;

	emit_call_abs(c, (uint64_t)(uintptr_t)bpfrt_tail_call_jit_target);
	emit_test_rr(b, true, RAX, RAX);
	j_fail = emit_local_jcc(c, CC_E);
	emit_mov_rr(b, true, TMP, RAX);
	emit_load_run_state_reg(c, offsetof(struct bpfrt_run_state, tail_call_ctx), RDI);
	emit_rr(b, false, 0x31, RSI, RSI);
	emit_frame_teardown(c, c->jp.sub);
	emit_jmp_r(b, TMP);
	patch_local(c, j_fail);
	emit_mov_imm64(b, RAX, (uint64_t)(int64_t)-ENOENT);
}

/* Local call; with a private stack rbp moves around it
 * (bpfrt_jit_call_shift). */
static void emit_local_call(struct jit_ctx *c, int s)
{
	uint32_t own = bpfrt_jit_call_shift(&c->jp);

	if (own)
		emit_alu_ri(&c->b, true, ALU_SUB, RBP, (int32_t)own);
	emit_call_rel32(&c->b, (int32_t)((int64_t)c->jp.prev.fstart[s] - (prev_pos(c) + 5)));
	if (own)
		emit_alu_ri(&c->b, true, ALU_ADD, RBP, (int32_t)own);
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
		/* fixed-size movabs: the address is only known in the last passes */
		emit_rex(&c->b, true, 0, 0, dst, false);
		emit1(&c->b, 0xb8 + (dst & 7));
		emit_u64(&c->b, c->jp.base + c->jp.prev.fstart[s]);
		return;
	}
	emit_mov_imm64(&c->b, dst, insn_lddw_imm(insn));
}

/* ---- one instruction -------------------------------------------------- */

/* Tracks which registers have known-zero upper halves after insn. */
static void update_zext(struct jit_ctx *c, const struct bpf_insn *insn)
{
	uint16_t dbit = (uint16_t)(1u << insn->dst_reg);
	uint16_t sbit = (uint16_t)(1u << insn->src_reg);

	switch (insn_class(insn)) {
	case BPF_ALU:
		if (insn_op(insn) == BPF_END && insn->imm == 64)
			c->zext &= (uint16_t)~dbit;
		else
			c->zext |= dbit;
		break;
	case BPF_ALU64:
		if (insn_op(insn) == BPF_MOV && insn_src(insn) == BPF_K && insn->imm >= 0) {
			c->zext |= dbit;
		} else if (insn_op(insn) == BPF_AND && insn_src(insn) == BPF_K && insn->imm >= 0) {
			c->zext |= dbit;
		} else if (insn_op(insn) == BPF_RSH && insn_src(insn) == BPF_K &&
			   (insn->imm & 63) >= 32) {
			c->zext |= dbit;
		} else if (insn_op(insn) == BPF_MOV && insn_src(insn) == BPF_X && insn->off == 0 &&
			   (c->zext & sbit)) {
			c->zext |= dbit;
		} else {
			c->zext &= (uint16_t)~dbit;
		}
		break;
	case BPF_LDX:
		if (insn_mode(insn) == BPF_MEM && insn_size(insn) != BPF_DW)
			c->zext |= dbit;
		else
			c->zext &= (uint16_t)~dbit;
		break;
	case BPF_LD:
		if (insn_is_lddw(insn) && insn->src_reg == 0 && insn_lddw_imm(insn) <= UINT32_MAX)
			c->zext |= dbit;
		else
			c->zext &= (uint16_t)~dbit;
		break;
	case BPF_STX:
		if (insn_mode(insn) == BPF_ATOMIC) {
			bool w = insn_size(insn) == BPF_W;

			if (insn->imm == BPF_CMPXCHG)
				c->zext = w ? c->zext | 1 : c->zext & (uint16_t)~1u;
			else if (insn->imm & BPF_FETCH)
				c->zext = w ? c->zext | sbit : c->zext & (uint16_t)~sbit;
		}
		break;
	case BPF_JMP:
	case BPF_JMP32:
		if (insn_op(insn) == BPF_CALL)
			c->zext = 0;
		break;
	}
}

/* Returns the number of BPF instruction slots consumed. */
static int translate_insn(struct bpfrt_jit_passes *jp, uint32_t pc)
{
	struct jit_ctx *c = CTX(jp);
	const struct bpf_insn *insn = &jp->insns[pc];
	int prev_zf = c->zf_reg;
	bool prev_zf_w32 = c->zf_w32;
	int consumed = 1;

	c->zf_reg = -1;
	if (c->flags[c->jp.pc] & F_TARGET) {
		prev_zf = -1;
		c->zext = 0;
	}
	if ((c->flags[c->jp.pc] & F_SKIP) && c->skip_len[c->jp.pc]) {
		/* its only reader reads the source instead */
		c->zext &= (uint16_t)~RBIT(insn->dst_reg);
		return c->skip_len[c->jp.pc];
	}
	if (c->flags[c->jp.pc] & F_ELIDE) {
		/* s = d after "s op= d": s already holds the value */
		update_zext(c, insn);
		return 1;
	}
	if (c->flags[c->jp.pc] & F_SWAP) {
		int d = R(insn->dst_reg), s = R(insn->src_reg);

		if (insn_op(insn) == BPF_MUL)
			emit_rr(&c->b, true, 0x0faf, s, d);
		else
			emit_alu_rr(&c->b, true, (enum x86_alu)(insn_op(insn) == BPF_ADD ? ALU_ADD :
								 insn_op(insn) == BPF_AND ? ALU_AND :
								 insn_op(insn) == BPF_OR ? ALU_OR : ALU_XOR),
				    s, d);
		c->zext &= (uint16_t)~(RBIT(insn->dst_reg) | RBIT(insn->src_reg));
		return 1;
	}
	if ((insn_class(insn) == BPF_ALU || insn_class(insn) == BPF_ALU64 || insn_is_lddw(insn)) &&
	    !(c->live_out[c->jp.pc] & RBIT(insn->dst_reg))) {
		/* the value is never read: nothing to compute */
		c->zext &= (uint16_t)~RBIT(insn->dst_reg);
		return insn_is_lddw(insn) ? 2 : 1;
	}

	switch (insn_class(insn)) {
	case BPF_ALU:
	case BPF_ALU64:
		consumed = translate_alu(c, insn);
		break;
	case BPF_LDX:
		if (!(consumed = try_fold_mem_rmw(c, insn))) {
			consumed = 1;
			translate_ldx(c, insn);
		}
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
		consumed = 2;
		break;
	case BPF_JMP:
	case BPF_JMP32:
		switch (insn_op(insn)) {
		case BPF_JA: {
			int64_t t = insn_branch_target(insn, c->jp.pc);

			if (t != c->jp.pc + 1)
				emit_jump_to(c, -1, c->jp.prev.start[t]);
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
			consumed = translate_cond_jump(c, insn, prev_zf, prev_zf_w32);
		}
		break;
	default:
		bpfrt_jit_fail(&c->jp, -EINVAL, "unknown opcode 0x%02x", insn->code);
	}
	if (insn_is_lddw(insn))
		update_zext(c, insn);
	else
		for (int k = 0; k < consumed; k++)
			update_zext(c, insn + k);
	return consumed;
}

/* ---- passes (jit/passes.c drives them) ------------------------------- */

/* The driver's prescan hook: frames, then the liveness and the copy
 * coalescing that read its branch marks (jp->marks are c->flags). */
static int analyze(struct bpfrt_jit_passes *jp)
{
	struct jit_ctx *c = CTX(jp);
	uint32_t *gd, *gs;
	int err;

	c->frames = jp->frames;
	c->flags = jp->marks;
	layout_frames(c);
	if ((err = compute_liveness(c)))
		return err;
	coalesce(c);
	gd = calloc(jp->n + 1, sizeof(uint32_t));
	gs = calloc(jp->n + 1, sizeof(uint32_t));
	if (gd && gs)
		subst(c, gd, gs);
	else
		err = bpfrt_err(-ENOMEM, "jit: out of memory");
	free(gd);
	free(gs);
	return err;
}

static void x86_pad_insn(struct bpfrt_jit_passes *jp, uint32_t pc)
{
	struct jit_ctx *c = CTX(jp);

	if ((c->flags[pc] & F_LOOP) && !c->no_align && LOOP_ALIGN > 1) {
		/* worst case until the address is known, so the image only
		 * shrinks once it is */
		size_t pad = c->jp.base ? (size_t)(-(c->jp.base + c->b.len)) & (LOOP_ALIGN - 1)
					: LOOP_ALIGN - 1;

		emit_nops(&c->b, (unsigned)pad);
	}
}

static void x86_shrink(struct bpfrt_jit_passes *jp)
{
	CTX(jp)->no_align = true;
}

static void x86_fill_traps(void *dst, size_t len)
{
	memset(dst, 0xcc, len);
}

/* Sizes with unknown addresses, then again at the real address (helper
 * calls may shrink to rel32, loop-head padding changes); growth there
 * means starting over without loop alignment. */
static const struct bpfrt_jit_arch x86_arch = {
	.max_insn_code = MAX_INSN_CODE,
	.seed_insn_code = MAX_INSN_CODE,
	.image_align = IMAGE_ALIGN,
	.addr_dependent = true,
	.fill_traps = x86_fill_traps,
	.frame_size = sizeof(struct func_frame),
	.prescan = analyze,
	.emit_prologue = emit_prologue,
	.pad_insn = x86_pad_insn,
	.emit_insn = translate_insn,
	.emit_abort_stub = emit_abort_stub,
	.emit_probe_fixup = emit_probe_fixup,
	.shrink = x86_shrink,
};

static int x86_compile(struct bpfrt_prog *prog)
{
	struct jit_ctx c = {
		.b = { .cap = SIZE_MAX },
		.bmi2 = cpu_has_leaf7_ebx(8),
		.bmi1 = cpu_has_leaf7_ebx(3),
		.zf_reg = -1,
	};
	uint32_t n = prog->insn_cnt;
	int err;

	c.live_out = calloc(n + 1, sizeof(*c.live_out));
	c.dst_sub = malloc(n + 1);
	c.src_sub = malloc(n + 1);
	c.skip_len = calloc(n + 1, 1);
	if (c.live_out && c.dst_sub && c.src_sub && c.skip_len) {
		memset(c.dst_sub, -1, n + 1);
		memset(c.src_sub, -1, n + 1);
		err = bpfrt_jit_compile(&c.jp, prog, &x86_arch, &c.b.p, &c.b.len);
	} else {
		err = bpfrt_err(-ENOMEM, "jit: out of memory");
	}
	free(c.live_out);
	free(c.dst_sub);
	free(c.src_sub);
	free(c.skip_len);
	return err;
}

const struct bpfrt_jit_backend bpfrt_jit_x86_64 = {
	.arch = "x86_64",
	.compile = x86_compile,
	.fill_traps = x86_fill_traps,
	.arch_prepare_trampoline = bpfrt_x86_prepare_trampoline,
	.cs_arch = CS_ARCH_X86,
	.cs_mode = CS_MODE_64,
};
