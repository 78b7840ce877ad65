/* AArch64 (A64) instruction encoders for the BPF JIT.
 *
 * Every instruction is one little-endian 32-bit word. The helpers here
 * only build words; they know nothing about BPF. Register numbers are A64
 * numbers: 0-30 are x0-x30, 31 is xzr or sp depending on the instruction
 * (the name says which). `sf` selects the 64-bit (X) form; a 32-bit (W)
 * result always clears the upper half, which is exactly BPF's ALU32 rule. */
#ifndef BPFRT_JIT_ARM64_EMIT_H
#define BPFRT_JIT_ARM64_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum a64_reg {
	A64_FP = 29, A64_LR = 30,
	A64_ZR = 31, A64_SP = 31,
};

enum a64_cond {
	A64_EQ = 0, A64_NE = 1, A64_HS = 2, A64_LO = 3, A64_MI = 4, A64_PL = 5,
	A64_HI = 8, A64_LS = 9, A64_GE = 10, A64_LT = 11, A64_GT = 12, A64_LE = 13,
};

/* Load/store access sizes (the size field) and opc values. */
enum a64_size { A64_B = 0, A64_H = 1, A64_W = 2, A64_X = 3 };
enum a64_ldst { A64_STORE = 0, A64_LOAD = 1, A64_LOAD_SX64 = 2 };

#define A64_SF(sf) ((uint32_t)(sf) << 31)

/* ---- arithmetic ------------------------------------------------------- */

/* add/sub (immediate): imm12, optionally shifted left by 12. Rn/Rd may be sp. */
static inline uint32_t a64_addsub_imm(bool sf, bool sub, bool setflags, int rd, int rn,
				      uint32_t imm12, bool lsl12)
{
	return 0x11000000 | A64_SF(sf) | (uint32_t)sub << 30 | (uint32_t)setflags << 29 |
	       (uint32_t)lsl12 << 22 | (imm12 & 0xfff) << 10 | (uint32_t)rn << 5 | (uint32_t)rd;
}

/* add/sub (shifted register, no shift). Register 31 is zr. */
static inline uint32_t a64_addsub_reg(bool sf, bool sub, bool setflags, int rd, int rn, int rm)
{
	return 0x0b000000 | A64_SF(sf) | (uint32_t)sub << 30 | (uint32_t)setflags << 29 |
	       (uint32_t)rm << 16 | (uint32_t)rn << 5 | (uint32_t)rd;
}

/* Logical (shifted register) opcodes, with N = invert the second operand. */
enum a64_logic { A64_AND = 0, A64_ORR = 1, A64_EOR = 2, A64_ANDS = 3 };

static inline uint32_t a64_logic_reg(bool sf, enum a64_logic opc, bool invert, int rd, int rn,
				     int rm)
{
	return 0x0a000000 | A64_SF(sf) | (uint32_t)opc << 29 | (uint32_t)invert << 21 |
	       (uint32_t)rm << 16 | (uint32_t)rn << 5 | (uint32_t)rd;
}

/* Logical (immediate); nimms is the 13-bit N:immr:imms from a64_logic_imm(). */
static inline uint32_t a64_logic_imm(bool sf, enum a64_logic opc, int rd, int rn, uint32_t nimms)
{
	return 0x12000000 | A64_SF(sf) | (uint32_t)opc << 29 | nimms << 10 |
	       (uint32_t)rn << 5 | (uint32_t)rd;
}

static inline uint32_t a64_mov_reg(bool sf, int rd, int rm)
{
	return a64_logic_reg(sf, A64_ORR, false, rd, A64_ZR, rm);
}

/* mov to or from sp (add #0) */
static inline uint32_t a64_mov_sp(int rd, int rn)
{
	return a64_addsub_imm(true, false, false, rd, rn, 0, false);
}

enum a64_wide { A64_MOVN = 0, A64_MOVZ = 2, A64_MOVK = 3 };

static inline uint32_t a64_movw(bool sf, enum a64_wide opc, int rd, uint16_t imm16, unsigned hw)
{
	return 0x12800000 | A64_SF(sf) | (uint32_t)opc << 29 | hw << 21 | (uint32_t)imm16 << 5 |
	       (uint32_t)rd;
}

/* Bitfield moves: sbfm/ubfm (lsl/lsr/asr/sxt?/uxt? are aliases). */
static inline uint32_t a64_bfm(bool sf, bool is_unsigned, int rd, int rn, unsigned immr,
			       unsigned imms)
{
	return 0x13000000 | A64_SF(sf) | (uint32_t)is_unsigned << 30 | (uint32_t)sf << 22 |
	       immr << 16 | imms << 10 | (uint32_t)rn << 5 | (uint32_t)rd;
}

/* Data processing, two sources. */
enum a64_dp2 {
	A64_UDIV = 0x02, A64_SDIV = 0x03, A64_LSLV = 0x08, A64_LSRV = 0x09, A64_ASRV = 0x0a,
};

static inline uint32_t a64_dp2(bool sf, enum a64_dp2 op, int rd, int rn, int rm)
{
	return 0x1ac00000 | A64_SF(sf) | (uint32_t)rm << 16 | (uint32_t)op << 10 |
	       (uint32_t)rn << 5 | (uint32_t)rd;
}

/* madd/msub: rd = ra +/- rn * rm */
static inline uint32_t a64_madd(bool sf, bool sub, int rd, int rn, int rm, int ra)
{
	return 0x1b000000 | A64_SF(sf) | (uint32_t)rm << 16 | (uint32_t)sub << 15 |
	       (uint32_t)ra << 10 | (uint32_t)rn << 5 | (uint32_t)rd;
}

/* Data processing, one source: rev16 (opc 1), rev32/rev (2), rev64 (3). */
static inline uint32_t a64_rev(bool sf, unsigned opc, int rd, int rn)
{
	return 0x5ac00000 | A64_SF(sf) | opc << 10 | (uint32_t)rn << 5 | (uint32_t)rd;
}

/* ---- memory ----------------------------------------------------------- */

/* [rn + imm12 * (1 << size)] */
static inline uint32_t a64_ldst_uimm(enum a64_size size, enum a64_ldst opc, int rt, int rn,
				     uint32_t imm12)
{
	return 0x39000000 | (uint32_t)size << 30 | (uint32_t)opc << 22 | (imm12 & 0xfff) << 10 |
	       (uint32_t)rn << 5 | (uint32_t)rt;
}

/* ldur/stur family: [rn + simm9] */
static inline uint32_t a64_ldst_simm9(enum a64_size size, enum a64_ldst opc, int rt, int rn,
				      int32_t simm9)
{
	return 0x38000000 | (uint32_t)size << 30 | (uint32_t)opc << 22 |
	       ((uint32_t)simm9 & 0x1ff) << 12 | (uint32_t)rn << 5 | (uint32_t)rt;
}

/* [rn + rm] */
static inline uint32_t a64_ldst_reg(enum a64_size size, enum a64_ldst opc, int rt, int rn, int rm)
{
	return 0x38206800 | (uint32_t)size << 30 | (uint32_t)opc << 22 | (uint32_t)rm << 16 |
	       (uint32_t)rn << 5 | (uint32_t)rt;
}

/* stp xt1, xt2, [sp, #-16]! */
static inline uint32_t a64_push_pair(int rt1, int rt2)
{
	return 0xa9800000 | (0x7eu << 15) | (uint32_t)rt2 << 10 | (uint32_t)A64_SP << 5 |
	       (uint32_t)rt1;
}

/* ldp xt1, xt2, [sp], #16 */
static inline uint32_t a64_pop_pair(int rt1, int rt2)
{
	return 0xa8c00000 | (0x02u << 15) | (uint32_t)rt2 << 10 | (uint32_t)A64_SP << 5 |
	       (uint32_t)rt1;
}

/* ---- atomics ---------------------------------------------------------- */

/* LSE read-modify-write with acquire+release: ldaddal, ldclral, ldeoral,
 * ldsetal (opc 0-3) and swpal. rs is the operand, rt receives the old value. */
enum a64_lse { A64_LDADD = 0, A64_LDCLR = 1, A64_LDEOR = 2, A64_LDSET = 3, A64_SWP = 8 };

static inline uint32_t a64_lse_al(bool sf, enum a64_lse op, int rs, int rt, int rn)
{
	return 0xb8e00000 | (uint32_t)sf << 30 | (uint32_t)rs << 16 | (uint32_t)op << 12 |
	       (uint32_t)rn << 5 | (uint32_t)rt;
}

/* casal rs, rt, [rn]: rs = expected in, old value out; rt = new value. */
static inline uint32_t a64_casal(bool sf, int rs, int rt, int rn)
{
	return 0x88e0fc00 | (uint32_t)sf << 30 | (uint32_t)rs << 16 | (uint32_t)rn << 5 |
	       (uint32_t)rt;
}

static inline uint32_t a64_ldaxr(bool sf, int rt, int rn)
{
	return 0x885ffc00 | (uint32_t)sf << 30 | (uint32_t)rn << 5 | (uint32_t)rt;
}

/* stlxr ws, rt, [rn]: ws = 0 on success */
static inline uint32_t a64_stlxr(bool sf, int ws, int rt, int rn)
{
	return 0x8800fc00 | (uint32_t)sf << 30 | (uint32_t)ws << 16 | (uint32_t)rn << 5 |
	       (uint32_t)rt;
}

#define A64_DMB_ISH 0xd5033bbfu

/* ---- control flow ----------------------------------------------------- */

/* Displacements are in instructions (bytes / 4). */
static inline uint32_t a64_b(int32_t disp) { return 0x14000000 | ((uint32_t)disp & 0x3ffffff); }
static inline uint32_t a64_bl(int32_t disp) { return 0x94000000 | ((uint32_t)disp & 0x3ffffff); }

static inline uint32_t a64_bcond(enum a64_cond cond, int32_t disp)
{
	return 0x54000000 | ((uint32_t)disp & 0x7ffff) << 5 | (uint32_t)cond;
}

static inline uint32_t a64_cbz(bool sf, bool nonzero, int rt, int32_t disp)
{
	return 0x34000000 | A64_SF(sf) | (uint32_t)nonzero << 24 |
	       ((uint32_t)disp & 0x7ffff) << 5 | (uint32_t)rt;
}

static inline uint32_t a64_tbz(bool nonzero, int rt, unsigned bit, int32_t disp)
{
	return 0x36000000 | (bit >> 5) << 31 | (uint32_t)nonzero << 24 | (bit & 31) << 19 |
	       ((uint32_t)disp & 0x3fff) << 5 | (uint32_t)rt;
}

static inline uint32_t a64_blr(int rn) { return 0xd63f0000 | (uint32_t)rn << 5; }
static inline uint32_t a64_br(int rn) { return 0xd61f0000 | (uint32_t)rn << 5; }

#define A64_RET 0xd65f03c0u

/* mrs xt, tpidr_el0 */
static inline uint32_t a64_mrs_tpidr(int rt) { return 0xd53bd040 | (uint32_t)rt; }

static inline uint32_t a64_brk(uint16_t imm16) { return 0xd4200000 | (uint32_t)imm16 << 5; }

static inline bool a64_fits_signed(int64_t v, unsigned bits)
{
	return v >= -(INT64_C(1) << (bits - 1)) && v < (INT64_C(1) << (bits - 1));
}

/* N:immr:imms for a logical immediate of the given width (32 or 64), or
 * -1 when v has no such encoding (0, all ones, not a rotated run of ones
 * repeated in 2..64-bit elements). */
static inline int32_t a64_encode_logic_imm(uint64_t v, unsigned width)
{
	unsigned size = 64, ones, rot;
	uint64_t mask, elt;

	if (width == 32) {
		v &= 0xffffffffu;
		v |= v << 32;
	}
	if (v == 0 || v == ~UINT64_C(0))
		return -1;
	while (size > 2) {
		unsigned half = size / 2;
		uint64_t m = (UINT64_C(1) << half) - 1;

		if ((v & m) != ((v >> half) & m))
			break;
		size = half;
	}
	mask = size == 64 ? ~UINT64_C(0) : (UINT64_C(1) << size) - 1;
	elt = v & mask;
	ones = (unsigned)__builtin_popcountll(elt);
	/* find the rotation that turns elt into ones contiguous low bits */
	for (rot = 0; rot < size; rot++) {
		uint64_t r = rot ? ((elt >> rot) | (elt << (size - rot))) & mask : elt;

		if (r == (UINT64_C(1) << ones) - 1)
			break;
	}
	if (rot == size)
		return -1;
	/* ROR(pattern, immr) == elt, so immr undoes rot */
	{
		unsigned immr = (size - rot) % size;
		unsigned imms = ((~(size * 2 - 1)) & 0x3f) | (ones - 1);
		unsigned n = size == 64;

		return (int32_t)(n << 12 | immr << 6 | imms);
	}
}

#endif
