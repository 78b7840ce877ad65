/* RV64GC instruction encoders for the BPF JIT.
 *
 * Each helper appends one 32-bit instruction to the pass buffer. They know
 * nothing about BPF: registers here are RISC-V numbers (x0 ... x31). Only
 * uncompressed encodings are emitted, so every instruction is 4 bytes and
 * the image stays 4-byte aligned. */
#ifndef BPFRT_JIT_RV_EMIT_H
#define BPFRT_JIT_RV_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum rv_gpr {
	RV_ZERO = 0, RV_RA = 1, RV_SP = 2, RV_GP = 3, RV_TP = 4,
	RV_T0 = 5, RV_T1 = 6, RV_T2 = 7, RV_S0 = 8, RV_S1 = 9,
	RV_A0 = 10, RV_A1, RV_A2, RV_A3, RV_A4, RV_A5, RV_A6, RV_A7,
	RV_S2 = 18, RV_S3, RV_S4, RV_S5, RV_S6, RV_S7, RV_S8, RV_S9, RV_S10, RV_S11,
	RV_T3 = 28, RV_T4, RV_T5, RV_T6,
};

/* Major opcodes. */
enum {
	OPC_LOAD = 0x03, OPC_OP_IMM = 0x13, OPC_AUIPC = 0x17, OPC_OP_IMM32 = 0x1b,
	OPC_STORE = 0x23, OPC_AMO = 0x2f, OPC_OP = 0x33, OPC_LUI = 0x37,
	OPC_OP32 = 0x3b, OPC_BRANCH = 0x63, OPC_JALR = 0x67, OPC_JAL = 0x6f,
	OPC_SYSTEM = 0x73,
};

/* funct3 of branches. */
enum rv_cond {
	BR_EQ = 0, BR_NE = 1, BR_LT = 4, BR_GE = 5, BR_LTU = 6, BR_GEU = 7,
};

/* funct3 (| funct7 << 3) of register-register ALU operations. */
enum rv_alu {
	ALU_ADD = 0x000, ALU_SUB = 0x100, ALU_SLL = 0x001, ALU_SLT = 0x002,
	ALU_SLTU = 0x003, ALU_XOR = 0x004, ALU_SRL = 0x005, ALU_SRA = 0x105,
	ALU_OR = 0x006, ALU_AND = 0x007,
	ALU_MUL = 0x008, ALU_DIV = 0x00c, ALU_DIVU = 0x00d, ALU_REM = 0x00e,
	ALU_REMU = 0x00f,
};

/* funct5 of A-extension operations. */
enum rv_amo {
	AMO_ADD = 0x00, AMO_SWAP = 0x01, AMO_LR = 0x02, AMO_SC = 0x03,
	AMO_XOR = 0x04, AMO_OR = 0x08, AMO_AND = 0x0c,
};

/* funct3 of loads and stores. */
enum {
	LD_B = 0, LD_H = 1, LD_W = 2, LD_D = 3, LD_BU = 4, LD_HU = 5, LD_WU = 6,
	ST_B = 0, ST_H = 1, ST_W = 2, ST_D = 3,
};

#define RV_EBREAK   0x00100073u
#define RV_C_EBREAK 0x9002u

struct rv_buf {
	uint8_t *p;     /* buffer start */
	size_t len;     /* bytes emitted */
};

static inline bool is_simm12(int64_t v) { return v >= -2048 && v <= 2047; }
static inline bool is_simm13(int64_t v) { return v >= -4096 && v <= 4095; }
static inline bool is_simm21(int64_t v) { return v >= -(1 << 20) && v < (1 << 20); }
static inline bool is_simm32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

static inline void emit32(struct rv_buf *b, uint32_t insn)
{
	memcpy(b->p + b->len, &insn, 4);
	b->len += 4;
}

static inline uint32_t rv_r(uint32_t f7, int rs2, int rs1, uint32_t f3, int rd, uint32_t opc)
{
	return f7 << 25 | (uint32_t)rs2 << 20 | (uint32_t)rs1 << 15 | f3 << 12 |
	       (uint32_t)rd << 7 | opc;
}

static inline uint32_t rv_i(int32_t imm, int rs1, uint32_t f3, int rd, uint32_t opc)
{
	return ((uint32_t)imm & 0xfff) << 20 | (uint32_t)rs1 << 15 | f3 << 12 |
	       (uint32_t)rd << 7 | opc;
}

static inline uint32_t rv_s(int32_t imm, int rs2, int rs1, uint32_t f3, uint32_t opc)
{
	uint32_t u = (uint32_t)imm;

	return ((u >> 5) & 0x7f) << 25 | (uint32_t)rs2 << 20 | (uint32_t)rs1 << 15 | f3 << 12 |
	       (u & 0x1f) << 7 | opc;
}

static inline uint32_t rv_b(int32_t off, int rs2, int rs1, uint32_t f3)
{
	uint32_t u = (uint32_t)off;

	return ((u >> 12) & 1) << 31 | ((u >> 5) & 0x3f) << 25 | (uint32_t)rs2 << 20 |
	       (uint32_t)rs1 << 15 | f3 << 12 | ((u >> 1) & 0xf) << 8 | ((u >> 11) & 1) << 7 |
	       OPC_BRANCH;
}

static inline uint32_t rv_j(int32_t off, int rd)
{
	uint32_t u = (uint32_t)off;

	return ((u >> 20) & 1) << 31 | ((u >> 1) & 0x3ff) << 21 | ((u >> 11) & 1) << 20 |
	       ((u >> 12) & 0xff) << 12 | (uint32_t)rd << 7 | OPC_JAL;
}

static inline uint32_t rv_u(uint32_t imm20, int rd, uint32_t opc)
{
	return (imm20 & 0xfffff) << 12 | (uint32_t)rd << 7 | opc;
}

/* ---- instructions ------------------------------------------------------ */

/* add/sub/.../mul/div...: alu is enum rv_alu; w selects the *w form. */
static inline void emit_alu(struct rv_buf *b, bool w, enum rv_alu alu, int rd, int rs1, int rs2)
{
	emit32(b, rv_r((uint32_t)alu >> 3, rs2, rs1, (uint32_t)alu & 7, rd,
		       w ? OPC_OP32 : OPC_OP));
}

static inline void emit_addi(struct rv_buf *b, int rd, int rs1, int32_t imm)
{
	emit32(b, rv_i(imm, rs1, 0, rd, OPC_OP_IMM));
}

static inline void emit_addiw(struct rv_buf *b, int rd, int rs1, int32_t imm)
{
	emit32(b, rv_i(imm, rs1, 0, rd, OPC_OP_IMM32));
}

static inline void emit_xori(struct rv_buf *b, int rd, int rs1, int32_t imm)
{
	emit32(b, rv_i(imm, rs1, 4, rd, OPC_OP_IMM));
}

static inline void emit_ori(struct rv_buf *b, int rd, int rs1, int32_t imm)
{
	emit32(b, rv_i(imm, rs1, 6, rd, OPC_OP_IMM));
}

static inline void emit_andi(struct rv_buf *b, int rd, int rs1, int32_t imm)
{
	emit32(b, rv_i(imm, rs1, 7, rd, OPC_OP_IMM));
}

static inline void emit_sltiu(struct rv_buf *b, int rd, int rs1, int32_t imm)
{
	emit32(b, rv_i(imm, rs1, 3, rd, OPC_OP_IMM));
}

static inline void emit_mv(struct rv_buf *b, int rd, int rs)
{
	if (rd != rs)
		emit_addi(b, rd, rs, 0);
}

/* 64-bit shifts by immediate (sh 0..63). */
static inline void emit_slli(struct rv_buf *b, int rd, int rs1, unsigned sh)
{
	emit32(b, rv_i((int32_t)(sh & 63), rs1, 1, rd, OPC_OP_IMM));
}

static inline void emit_srli(struct rv_buf *b, int rd, int rs1, unsigned sh)
{
	emit32(b, rv_i((int32_t)(sh & 63), rs1, 5, rd, OPC_OP_IMM));
}

static inline void emit_srai(struct rv_buf *b, int rd, int rs1, unsigned sh)
{
	emit32(b, rv_i((int32_t)(0x400 | (sh & 63)), rs1, 5, rd, OPC_OP_IMM));
}

/* 32-bit shifts by immediate (sh 0..31), result sign-extended. */
static inline void emit_slliw(struct rv_buf *b, int rd, int rs1, unsigned sh)
{
	emit32(b, rv_i((int32_t)(sh & 31), rs1, 1, rd, OPC_OP_IMM32));
}

static inline void emit_srliw(struct rv_buf *b, int rd, int rs1, unsigned sh)
{
	emit32(b, rv_i((int32_t)(sh & 31), rs1, 5, rd, OPC_OP_IMM32));
}

static inline void emit_sraiw(struct rv_buf *b, int rd, int rs1, unsigned sh)
{
	emit32(b, rv_i((int32_t)(0x400 | (sh & 31)), rs1, 5, rd, OPC_OP_IMM32));
}

static inline void emit_lui(struct rv_buf *b, int rd, uint32_t imm20)
{
	emit32(b, rv_u(imm20, rd, OPC_LUI));
}

static inline void emit_auipc(struct rv_buf *b, int rd, uint32_t imm20)
{
	emit32(b, rv_u(imm20, rd, OPC_AUIPC));
}

static inline void emit_load(struct rv_buf *b, unsigned f3, int rd, int base, int32_t off)
{
	emit32(b, rv_i(off, base, f3, rd, OPC_LOAD));
}

static inline void emit_store(struct rv_buf *b, unsigned f3, int src, int base, int32_t off)
{
	emit32(b, rv_s(off, src, base, f3, OPC_STORE));
}

static inline void emit_branch(struct rv_buf *b, enum rv_cond cond, int rs1, int rs2, int32_t off)
{
	emit32(b, rv_b(off, rs2, rs1, (uint32_t)cond));
}

static inline void emit_jal(struct rv_buf *b, int rd, int32_t off)
{
	emit32(b, rv_j(off, rd));
}

static inline void emit_jalr(struct rv_buf *b, int rd, int rs1, int32_t off)
{
	emit32(b, rv_i(off, rs1, 0, rd, OPC_JALR));
}

/* AMO/LR/SC with both acquire and release ordering (sequentially
 * consistent, as the interpreter's __ATOMIC_SEQ_CST). */
static inline void emit_amo(struct rv_buf *b, enum rv_amo op, bool is64, int rd, int rs2, int rs1)
{
	emit32(b, (uint32_t)op << 27 | 1u << 26 | 1u << 25 | (uint32_t)rs2 << 20 |
		  (uint32_t)rs1 << 15 | (is64 ? 3u : 2u) << 12 | (uint32_t)rd << 7 | OPC_AMO);
}

/* Zba add.uw rd, rs1, zero = zext.w */
static inline void emit_zext_w_zba(struct rv_buf *b, int rd, int rs)
{
	emit32(b, rv_r(0x04, RV_ZERO, rs, 0, rd, OPC_OP32));
}

/* Zbb rev8 (RV64) */
static inline void emit_rev8_zbb(struct rv_buf *b, int rd, int rs)
{
	emit32(b, rv_i(0x6b8, rs, 5, rd, OPC_OP_IMM));
}

/* Splits a pc-relative distance for auipc + 12-bit immediate. */
static inline void split_hi_lo(int64_t d, uint32_t *hi20, int32_t *lo12)
{
	*lo12 = (int32_t)(((d & 0xfff) ^ 0x800) - 0x800);
	*hi20 = (uint32_t)(((d - *lo12) >> 12) & 0xfffff);
}

#endif
