/* The x86-64 instruction encoder: the one every code generator of bpfrt
 * uses (the BPF JIT, the fentry/fexit/multi trampolines, kprobe
 * trampolines and the relocation of displaced instructions).
 *
 * Each helper appends one machine instruction to a buffer. They know
 * nothing about BPF: registers are x86 numbers (0 = rax ... 15 = r15; the
 * same numbers name xmm0-15 in SSE forms). A buffer has a capacity: what
 * does not fit is dropped and sets overflow, which the generator turns
 * into -E2BIG (the JIT's pass buffer has room for the longest instruction
 * reserved before each one and an unbounded capacity).
 *
 * Memory operands take the shortest displacement unless a generator asks
 * for at least min_disp bytes (1 or 4): code whose layout is fixed keeps
 * its encoding. */
#ifndef BPFRT_JIT_X86_EMIT_H
#define BPFRT_JIT_X86_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum x86_gpr {
	RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
	R8, R9, R10, R11, R12, R13, R14, R15,
};

/* Condition codes (the low nibble of jcc/setcc/cmovcc). */
enum x86_cc {
	CC_O = 0x0, CC_NO = 0x1, CC_B = 0x2, CC_AE = 0x3, CC_E = 0x4,
	CC_NE = 0x5, CC_BE = 0x6, CC_A = 0x7, CC_S = 0x8, CC_NS = 0x9,
	CC_L = 0xc, CC_GE = 0xd, CC_LE = 0xe, CC_G = 0xf,
};

/* Group-1 ALU operations: the /digit of 0x81/0x83 and (digit << 3) | 1 is
 * the register form's opcode. */
enum x86_alu {
	ALU_ADD = 0, ALU_OR = 1, ALU_AND = 4, ALU_SUB = 5, ALU_XOR = 6, ALU_CMP = 7,
};

/* Group-2 shift operations (/digit of 0xc1/0xd1/0xd3). */
enum x86_shift { SH_ROL = 0, SH_SHL = 4, SH_SHR = 5, SH_SAR = 7 };

/* One-byte instructions. */
enum x86_op1 {
	X86_PUSHFQ = 0x9c, X86_POPFQ = 0x9d, X86_RET = 0xc3, X86_LEAVE = 0xc9, X86_INT3 = 0xcc,
};

/* Opcodes of the relative branches (code patching decodes them too). */
enum x86_branch_op {
	X86_CALL_REL32 = 0xe8, X86_JMP_REL32 = 0xe9, X86_JMP_REL8 = 0xeb,
};
/* Length of a rel32 call or jmp: the unit of a patched site. */
#define X86_REL32_BRANCH_LEN 5

struct x86_buf {
	uint8_t *p;     /* buffer start */
	size_t len;     /* bytes emitted */
	size_t cap;     /* bytes p can hold (SIZE_MAX: the caller guarantees room) */
	bool overflow;  /* something did not fit (and was dropped) */
};

static inline bool x86_room(struct x86_buf *b, size_t n)
{
	if (__builtin_expect(b->len <= b->cap && b->cap - b->len >= n, 1))
		return true;
	b->overflow = true;
	return false;
}

static inline void emit_bytes(struct x86_buf *b, const void *v, size_t n)
{
	if (x86_room(b, n)) {
		memcpy(b->p + b->len, v, n);
		b->len += n;
	}
}

static inline void emit1(struct x86_buf *b, uint8_t v)
{
	if (x86_room(b, 1))
		b->p[b->len++] = v;
}
static inline void emit2(struct x86_buf *b, uint8_t v0, uint8_t v1)
{
	emit1(b, v0);
	emit1(b, v1);
}
static inline void emit_u16(struct x86_buf *b, uint16_t v) { emit_bytes(b, &v, 2); }
static inline void emit_u32(struct x86_buf *b, uint32_t v) { emit_bytes(b, &v, 4); }
static inline void emit_u64(struct x86_buf *b, uint64_t v) { emit_bytes(b, &v, 8); }

static inline bool is_imm8(int64_t v) { return v >= -128 && v <= 127; }
static inline bool is_simm32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
static inline bool is_uimm32(uint64_t v) { return v <= UINT32_MAX; }

/* Byte operations on spl/bpl/sil/dil need an (empty) REX prefix. */
static inline bool needs_rex_for_byte(int reg) { return reg >= 4 && reg <= 7; }

/* REX prefix if any bit is needed (or force for byte registers). */
static inline void emit_rex(struct x86_buf *b, bool w, int reg, int index, int rm, bool force)
{
	uint8_t rex = 0x40 | (w << 3) | ((reg >> 3) << 2) | ((index >> 3) << 1) | (rm >> 3);

	if (rex != 0x40 || force)
		emit1(b, rex);
}

static inline void emit_modrm(struct x86_buf *b, int mod, int reg, int rm)
{
	emit1(b, (uint8_t)((mod << 6) | ((reg & 7) << 3) | (rm & 7)));
}

/* ModRM (+SIB, +disp) for [base + disp], the displacement at least
 * min_disp bytes (0, 1 or 4). */
static inline void emit_mem_operand_min(struct x86_buf *b, int reg, int base, int32_t disp,
					int min_disp)
{
	int mod;

	if (disp == 0 && (base & 7) != RBP && min_disp == 0)
		mod = 0;
	else if (is_imm8(disp) && min_disp <= 1)
		mod = 1;
	else
		mod = 2;
	emit_modrm(b, mod, reg, base);
	if ((base & 7) == RSP)
		emit1(b, 0x24); /* SIB: base only */
	if (mod == 1)
		emit1(b, (uint8_t)disp);
	else if (mod == 2)
		emit_u32(b, (uint32_t)disp);
}

/* ModRM (+SIB, +disp) for [base + disp], shortest form. */
static inline void emit_mem_operand(struct x86_buf *b, int reg, int base, int32_t disp)
{
	emit_mem_operand_min(b, reg, base, disp, 0);
}

/* op reg, rm (register-register form); opc is one or two opcode bytes
 * (two when the first is 0x0f). */
static inline void emit_rr(struct x86_buf *b, bool w, uint16_t opc, int reg, int rm)
{
	emit_rex(b, w, reg, 0, rm, false);
	if (opc > 0xff)
		emit1(b, opc >> 8);
	emit1(b, opc & 0xff);
	emit_modrm(b, 3, reg, rm);
}

/* Same with byte-register operands (forces REX for spl..dil). */
static inline void emit_rr_byte(struct x86_buf *b, bool w, uint16_t opc, int reg, int rm)
{
	emit_rex(b, w, reg, 0, rm, needs_rex_for_byte(rm));
	if (opc > 0xff)
		emit1(b, opc >> 8);
	emit1(b, opc & 0xff);
	emit_modrm(b, 3, reg, rm);
}

/* op reg, [base + disp] with a displacement of at least min_disp bytes.
 * byte_reg: reg is used as a byte register. */
static inline void emit_rm_min(struct x86_buf *b, bool p66, bool w, uint16_t opc, int reg,
			       int base, int32_t disp, bool byte_reg, int min_disp)
{
	if (p66)
		emit1(b, 0x66);
	emit_rex(b, w, reg, 0, base, byte_reg && needs_rex_for_byte(reg));
	if (opc > 0xff)
		emit1(b, opc >> 8);
	emit1(b, opc & 0xff);
	emit_mem_operand_min(b, reg, base, disp, min_disp);
}

/* op reg, [base + disp], shortest form. */
static inline void emit_rm(struct x86_buf *b, bool p66, bool w, uint16_t opc, int reg,
			   int base, int32_t disp, bool byte_reg)
{
	emit_rm_min(b, p66, w, opc, reg, base, disp, byte_reg, 0);
}

/* op reg, [base + index*scale + disp] */
static inline void emit_rm_sib(struct x86_buf *b, bool w, uint8_t opc, int reg, int base,
			       int index, unsigned scale_log2, int32_t disp)
{
	int mod = (disp == 0 && (base & 7) != RBP) ? 0 : is_imm8(disp) ? 1 : 2;

	emit_rex(b, w, reg, index, base, false);
	emit1(b, opc);
	emit_modrm(b, mod, reg, RSP);
	emit1(b, (uint8_t)((scale_log2 << 6) | ((index & 7) << 3) | (base & 7)));
	if (mod == 1)
		emit1(b, (uint8_t)disp);
	else if (mod == 2)
		emit_u32(b, (uint32_t)disp);
}

/* op reg, [rip + disp] (disp from the end of the instruction, which the
 * caller computes: nothing may follow the displacement). */
static inline void emit_rip_rm(struct x86_buf *b, bool w, uint8_t opc, int reg, int32_t disp)
{
	emit_rex(b, w, reg, 0, 0, false);
	emit1(b, opc);
	emit_modrm(b, 0, reg, RBP); /* mod 00, rm 101: rip + disp32 */
	emit_u32(b, (uint32_t)disp);
}

/* Length of emit_rip_rm's instruction. */
static inline size_t rip_rm_len(bool w, int reg)
{
	return (w || reg >= 8 ? 1 : 0) + 6;
}

/* op reg, fs:[disp] (a thread-pointer-relative access: initial-exec TLS).
 * Immediates, if the opcode has one, follow. */
static inline void emit_fs_rm(struct x86_buf *b, bool p66, bool w, uint8_t opc, int reg,
			      int32_t disp)
{
	emit1(b, 0x64);
	if (p66)
		emit1(b, 0x66);
	emit_rex(b, w, reg, 0, 0, false);
	emit1(b, opc);
	emit_modrm(b, 0, reg, RSP); /* SIB follows */
	emit1(b, 0x25);             /* no base, no index: disp32 */
	emit_u32(b, (uint32_t)disp);
}

/* SSE moves between xmm and [base + disp]: movups (unaligned) and movdqa
 * (16-aligned), in both directions. */
enum x86_sse_mov {
	SSE_MOVUPS_LOAD = 0x0f10, SSE_MOVUPS_STORE = 0x0f11,
	SSE_MOVDQA_LOAD = 0x0f6f, SSE_MOVDQA_STORE = 0x0f7f,
};

static inline void emit_sse_mov(struct x86_buf *b, enum x86_sse_mov op, int xmm, int base,
				int32_t disp, int min_disp)
{
	bool p66 = op == SSE_MOVDQA_LOAD || op == SSE_MOVDQA_STORE;

	emit_rm_min(b, p66, false, (uint16_t)op, xmm, base, disp, false, min_disp);
}

/* mov dst, src (64- or 32-bit; the 32-bit form zero-extends). */
static inline void emit_mov_rr(struct x86_buf *b, bool w, int dst, int src)
{
	emit_rr(b, w, 0x89, src, dst);
}

/* ALU dst, src for the group-1 operations. */
static inline void emit_alu_rr(struct x86_buf *b, bool w, enum x86_alu op, int dst, int src)
{
	emit_rr(b, w, (uint16_t)((op << 3) | 1), src, dst);
}

/* ALU dst, imm32 always in the 32-bit immediate form (0x81, or the
 * accumulator's short form): code whose layout must not depend on the
 * value. */
static inline void emit_alu_ri32(struct x86_buf *b, bool w, enum x86_alu op, int dst, int32_t imm)
{
	emit_rex(b, w, 0, 0, dst, false);
	if (dst == RAX) {
		emit1(b, (uint8_t)((op << 3) | 5));
	} else {
		emit1(b, 0x81);
		emit_modrm(b, 3, op, dst);
	}
	emit_u32(b, (uint32_t)imm);
}

/* ALU [base + disp], imm (imm8 form when it fits). */
static inline void emit_alu_mi(struct x86_buf *b, bool w, enum x86_alu op, int base,
			       int32_t disp, int32_t imm, int min_disp)
{
	emit_rm_min(b, false, w, is_imm8(imm) ? 0x83 : 0x81, op, base, disp, false, min_disp);
	if (is_imm8(imm))
		emit1(b, (uint8_t)imm);
	else
		emit_u32(b, (uint32_t)imm);
}

/* ALU dst, imm with the shortest encoding. */
static inline void emit_alu_ri(struct x86_buf *b, bool w, enum x86_alu op, int dst, int32_t imm)
{
	if (is_imm8(imm)) {
		emit_rex(b, w, 0, 0, dst, false);
		emit1(b, 0x83);
		emit_modrm(b, 3, op, dst);
		emit1(b, (uint8_t)imm);
	} else if (dst == RAX) {
		emit_rex(b, w, 0, 0, 0, false);
		emit1(b, (uint8_t)((op << 3) | 5));
		emit_u32(b, (uint32_t)imm);
	} else {
		emit_rex(b, w, 0, 0, dst, false);
		emit1(b, 0x81);
		emit_modrm(b, 3, op, dst);
		emit_u32(b, (uint32_t)imm);
	}
}

/* test a, b */
static inline void emit_test_rr(struct x86_buf *b, bool w, int a, int c)
{
	emit_rr(b, w, 0x85, c, a);
}

/* test reg, imm: imm8 on the low byte when the mask fits it. */
static inline void emit_test_ri(struct x86_buf *b, bool w, int reg, int32_t imm)
{
	if (imm >= 0 && imm <= 0xff) {
		if (reg == RAX) {
			emit2(b, 0xa8, (uint8_t)imm);
			return;
		}
		emit_rex(b, false, 0, 0, reg, needs_rex_for_byte(reg));
		emit1(b, 0xf6);
		emit_modrm(b, 3, 0, reg);
		emit1(b, (uint8_t)imm);
		return;
	}
	if (reg == RAX) {
		emit_rex(b, w, 0, 0, 0, false);
		emit1(b, 0xa9);
	} else {
		emit_rex(b, w, 0, 0, reg, false);
		emit1(b, 0xf7);
		emit_modrm(b, 3, 0, reg);
	}
	emit_u32(b, (uint32_t)imm);
}

/* test dword/qword [base + disp], imm32 */
static inline void emit_test_mi(struct x86_buf *b, bool w, int base, int32_t disp, uint32_t imm,
				int min_disp)
{
	emit_rm_min(b, false, w, 0xf7, 0, base, disp, false, min_disp);
	emit_u32(b, imm);
}

/* mov dst, imm64 in the 10-byte form whatever the value (movabs): the
 * size does not depend on the address it holds. */
static inline void emit_movabs(struct x86_buf *b, int dst, uint64_t v)
{
	emit_rex(b, true, 0, 0, dst, false);
	emit1(b, 0xb8 + (dst & 7));
	emit_u64(b, v);
}

/* Loads a 64-bit constant with the shortest encoding; zero uses xor, so
 * it clobbers the flags. */
static inline void emit_mov_imm64(struct x86_buf *b, int dst, uint64_t v)
{
	if (v == 0) {
		emit_rr(b, false, 0x31, dst, dst);
	} else if (is_uimm32(v)) {
		emit_rex(b, false, 0, 0, dst, false);
		emit1(b, 0xb8 + (dst & 7));
		emit_u32(b, (uint32_t)v);
	} else if (is_simm32((int64_t)v)) {
		emit_rex(b, true, 0, 0, dst, false);
		emit1(b, 0xc7);
		emit_modrm(b, 3, 0, dst);
		emit_u32(b, (uint32_t)v);
	} else {
		emit_rex(b, true, 0, 0, dst, false);
		emit1(b, 0xb8 + (dst & 7));
		emit_u64(b, v);
	}
}

/* Same but preserving the flags (no xor for zero). */
static inline void emit_mov_imm64_keep_flags(struct x86_buf *b, int dst, uint64_t v)
{
	if (v == 0) {
		emit_rex(b, false, 0, 0, dst, false);
		emit1(b, 0xb8 + (dst & 7));
		emit_u32(b, 0);
	} else {
		emit_mov_imm64(b, dst, v);
	}
}

/* lea dst, [base + disp] */
static inline void emit_lea(struct x86_buf *b, bool w, int dst, int base, int32_t disp)
{
	emit_rm(b, false, w, 0x8d, dst, base, disp, false);
}

/* Group-2 shift by an immediate (count already masked, non-zero). */
static inline void emit_shift_ri(struct x86_buf *b, bool w, enum x86_shift op, int dst, uint8_t n)
{
	emit_rex(b, w, 0, 0, dst, false);
	if (n == 1) {
		emit1(b, 0xd1);
		emit_modrm(b, 3, op, dst);
	} else {
		emit1(b, 0xc1);
		emit_modrm(b, 3, op, dst);
		emit1(b, n);
	}
}

/* Group-2 shift by cl. */
static inline void emit_shift_cl(struct x86_buf *b, bool w, enum x86_shift op, int dst)
{
	emit_rex(b, w, 0, 0, dst, false);
	emit1(b, 0xd3);
	emit_modrm(b, 3, op, dst);
}

/* BMI2 shlx/shrx/sarx dst, src, cnt. pp selects the operation:
 * 1 (66) shlx, 2 (f3) sarx, 3 (f2) shrx. */
static inline void emit_bmi2_shift(struct x86_buf *b, bool w, int pp, int dst, int src, int cnt)
{
	emit1(b, 0xc4);
	emit1(b, (uint8_t)(((~dst >> 3) & 1) << 7 | 1 << 6 | ((~src >> 3) & 1) << 5 | 0x02));
	emit1(b, (uint8_t)((w << 7) | ((~cnt & 0xf) << 3) | pp));
	emit1(b, 0xf7);
	emit_modrm(b, 3, dst, src);
}

/* An opcode with a /digit on a register: group 3 (f7: 2 not, 3 neg, 4 mul,
 * 6 div, 7 idiv), group 5 (ff: 0 inc, 1 dec, 2 call, 4 jmp). */
static inline void emit_op_digit_r(struct x86_buf *b, bool w, uint8_t opc, int digit, int rm)
{
	emit_rex(b, w, 0, 0, rm, false);
	emit1(b, opc);
	emit_modrm(b, 3, digit, rm);
}

static inline void emit_grp3(struct x86_buf *b, bool w, int digit, int rm)
{
	emit_op_digit_r(b, w, 0xf7, digit, rm);
}

/* call reg / jmp reg */
static inline void emit_call_r(struct x86_buf *b, int reg) { emit_op_digit_r(b, false, 0xff, 2, reg); }
static inline void emit_jmp_r(struct x86_buf *b, int reg) { emit_op_digit_r(b, false, 0xff, 4, reg); }

static inline void emit_push(struct x86_buf *b, int reg)
{
	emit_rex(b, false, 0, 0, reg, false);
	emit1(b, 0x50 + (reg & 7));
}

static inline void emit_pop(struct x86_buf *b, int reg)
{
	emit_rex(b, false, 0, 0, reg, false);
	emit1(b, 0x58 + (reg & 7));
}

/* jcc/jmp with a known displacement (from the end of the jump). */
static inline void emit_jcc(struct x86_buf *b, enum x86_cc cc, int32_t disp_from_end)
{
	/* rel8 form is 2 bytes; the displacement assumed it */
	emit2(b, 0x70 | cc, (uint8_t)disp_from_end);
}

/* Branches with a rel32 (from the end of the instruction) computed by the
 * caller. */
static inline void emit_call_rel32(struct x86_buf *b, int32_t rel)
{
	emit1(b, X86_CALL_REL32);
	emit_u32(b, (uint32_t)rel);
}

static inline void emit_jmp_rel32(struct x86_buf *b, int32_t rel)
{
	emit1(b, X86_JMP_REL32);
	emit_u32(b, (uint32_t)rel);
}

static inline void emit_jcc_rel32(struct x86_buf *b, enum x86_cc cc, int32_t rel)
{
	emit2(b, 0x0f, (uint8_t)(0x80 | cc));
	emit_u32(b, (uint32_t)rel);
}

static inline void emit_jmp_rel8(struct x86_buf *b, int8_t rel)
{
	emit2(b, 0xeb, (uint8_t)rel);
}

/* call/jmp target from code whose first byte runs at `at` (0: not known
 * yet): rel32 when it reaches, else movabs scratch, target; call/jmp
 * scratch. */
static inline void emit_branch_abs(struct x86_buf *b, uint64_t at, uint64_t target, bool call,
				   int scratch)
{
	if (at) {
		int64_t rel = (int64_t)(target - (at + b->len + 5));

		if (is_simm32(rel)) {
			if (call)
				emit_call_rel32(b, (int32_t)rel);
			else
				emit_jmp_rel32(b, (int32_t)rel);
			return;
		}
	}
	emit_movabs(b, scratch, target);
	if (call)
		emit_call_r(b, scratch);
	else
		emit_jmp_r(b, scratch);
}

/* ---- labels within one buffer ---- */

/* A jcc rel32 (cc < 0: jmp) to a label not yet emitted: returns the offset
 * of its rel32 for emit_label_here(). */
static inline size_t emit_jcc_fwd(struct x86_buf *b, int cc)
{
	if (cc < 0)
		emit_jmp_rel32(b, 0);
	else
		emit_jcc_rel32(b, (enum x86_cc)cc, 0);
	return b->len - 4;
}

/* Points the rel32 at `at` (from emit_jcc_fwd) at the current end. */
static inline void emit_label_here(struct x86_buf *b, size_t at)
{
	int32_t rel = (int32_t)(b->len - (at + 4));

	if (!b->overflow)
		memcpy(b->p + at, &rel, 4);
}

/* jcc rel32 (cc < 0: jmp) back to an earlier offset of the buffer. */
static inline void emit_jcc_back(struct x86_buf *b, int cc, size_t to)
{
	size_t len = cc < 0 ? 5 : 6;
	int32_t rel = (int32_t)((int64_t)to - (int64_t)(b->len + len));

	if (cc < 0)
		emit_jmp_rel32(b, rel);
	else
		emit_jcc_rel32(b, (enum x86_cc)cc, rel);
}

/* Multi-byte NOPs (the recommended forms) for alignment padding. */
static inline void emit_nops(struct x86_buf *b, unsigned n)
{
	static const uint8_t nops[9][9] = {
		{ 0 },
		{ 0x90 },
		{ 0x66, 0x90 },
		{ 0x0f, 0x1f, 0x00 },
		{ 0x0f, 0x1f, 0x40, 0x00 },
		{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};

	while (n) {
		unsigned k = n > 8 ? 8 : n;

		emit_bytes(b, nops[k], k);
		n -= k;
	}
}

#endif
