/* x86-64 instruction encoders for the BPF JIT.
 *
 * Each helper appends one machine instruction to the pass buffer. They know
 * nothing about BPF: registers here are x86 numbers (0 = rax ... 15 = r15).
 * The buffer always has room for the longest BPF instruction's code because
 * the translator reserves space before each BPF instruction. */
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

struct x86_buf {
	uint8_t *p;     /* buffer start */
	size_t len;     /* bytes emitted */
};

static inline void emit1(struct x86_buf *b, uint8_t v) { b->p[b->len++] = v; }
static inline void emit2(struct x86_buf *b, uint8_t v0, uint8_t v1)
{
	b->p[b->len++] = v0;
	b->p[b->len++] = v1;
}
static inline void emit_u16(struct x86_buf *b, uint16_t v) { memcpy(b->p + b->len, &v, 2); b->len += 2; }
static inline void emit_u32(struct x86_buf *b, uint32_t v) { memcpy(b->p + b->len, &v, 4); b->len += 4; }
static inline void emit_u64(struct x86_buf *b, uint64_t v) { memcpy(b->p + b->len, &v, 8); b->len += 8; }

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

/* ModRM (+SIB, +disp) for [base + disp]. */
static inline void emit_mem_operand(struct x86_buf *b, int reg, int base, int32_t disp)
{
	int mod;

	if (disp == 0 && (base & 7) != RBP)
		mod = 0;
	else if (is_imm8(disp))
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

/* op reg, [base + disp]. byte_reg: reg is used as a byte register. */
static inline void emit_rm(struct x86_buf *b, bool p66, bool w, uint16_t opc, int reg,
			   int base, int32_t disp, bool byte_reg)
{
	if (p66)
		emit1(b, 0x66);
	emit_rex(b, w, reg, 0, base, byte_reg && needs_rex_for_byte(reg));
	if (opc > 0xff)
		emit1(b, opc >> 8);
	emit1(b, opc & 0xff);
	emit_mem_operand(b, reg, base, disp);
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

/* Group-3 unary ops (f7 /digit): 2 not, 3 neg, 4 mul, 6 div, 7 idiv. */
static inline void emit_grp3(struct x86_buf *b, bool w, int digit, int rm)
{
	emit_rex(b, w, 0, 0, rm, false);
	emit1(b, 0xf7);
	emit_modrm(b, 3, digit, rm);
}

/* jcc/jmp with a known displacement (from the end of the jump). */
static inline void emit_jcc(struct x86_buf *b, enum x86_cc cc, int32_t disp_from_end)
{
	/* rel8 form is 2 bytes; the displacement assumed it */
	emit2(b, 0x70 | cc, (uint8_t)disp_from_end);
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

		memcpy(b->p + b->len, nops[k], k);
		b->len += k;
		n -= k;
	}
}

#endif
