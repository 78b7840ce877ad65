/* Interpreter semantics (RFC 9669, cpu v4): every ALU op in both widths and
 * source forms with the edge cases the RFC pins down, every jump condition
 * on signed/unsigned boundaries, memory access, atomics (also across
 * threads), lddw, helper calls, callx, and BPF-to-BPF calls. */
#include "testlib.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "interp/interp.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PROG(...) ((const struct bpf_insn[]){ __VA_ARGS__ })
#define PROG_LEN(...) ARRAY_LEN(PROG(__VA_ARGS__))

/* Loads insns and runs them once in the interpreter. Returns 0 with *r0,
 * or the negative errno of the step that failed (*loaded says which). */
static int load_and_run(const struct bpf_insn *insns, size_t cnt, uint64_t arg1,
			uint64_t arg2, uint64_t *r0, bool *loaded)
{
	struct bpfrt_prog *prog;
	int err;

	*loaded = false;
	err = bpfrt_prog_load(insns, cnt, NULL, &prog);
	if (err)
		return err;
	*loaded = true;
	err = bpfrt_prog_run(prog, BPFRT_EXEC_INTERP, arg1, arg2, r0);
	bpfrt_prog_free(prog);
	return err;
}

/* Runs and reports a failure at the caller's line; returns r0 (or a
 * poison value when the run failed). */
static uint64_t run_at(int line, const struct bpf_insn *insns, size_t cnt,
		       uint64_t arg1, uint64_t arg2)
{
	uint64_t r0 = 0xdeadbeefdeadbeefull;
	bool loaded;
	int err = load_and_run(insns, cnt, arg1, arg2, &r0, &loaded);

	if (err)
		tl_fail(__FILE__, line, "%s failed: %d (%s)", loaded ? "run" : "load",
			err, bpfrt_last_error());
	return r0;
}

#define RUN_ARGS(a1, a2, ...) run_at(__LINE__, PROG(__VA_ARGS__), PROG_LEN(__VA_ARGS__), a1, a2)
#define RUN(...) RUN_ARGS(0, 0, __VA_ARGS__)
#define CHECK_R0(expect, ...) do {                                             \
	uint64_t got_ = RUN(__VA_ARGS__);                                      \
	CHECK(got_ == (uint64_t)(expect), "got 0x%llx want 0x%llx",             \
	      (unsigned long long)got_, (unsigned long long)(uint64_t)(expect)); \
} while (0)

/* ---- entry state ------------------------------------------------------ */

TEST(entry_registers)
{
	uint64_t r;

	r = RUN_ARGS(0x1111222233334444ull, 7, MOV64_REG(BPF_R0, BPF_R1), EXIT());
	CHECK_EQ(r, 0x1111222233334444ull);
	r = RUN_ARGS(1, 0x5555666677778888ull, MOV64_REG(BPF_R0, BPF_R2), EXIT());
	CHECK_EQ(r, 0x5555666677778888ull);
	/* r10 points into writable memory, 16-byte aligned */
	r = RUN(MOV64_REG(BPF_R0, BPF_R10), ALU64_IMM(BPF_AND, BPF_R0, 15), EXIT());
	CHECK_EQ(r, 0);
}

/* ---- ALU -------------------------------------------------------------- */

#define A64 BPF_ALU64
#define A32 BPF_ALU
#define NOIMM false
#define IMMOK true

struct alu_case {
	uint8_t cls;     /* BPF_ALU or BPF_ALU64 */
	uint8_t op;
	int16_t off;     /* 1 = sdiv/smod, 8/16/32 = movsx */
	uint64_t dst;
	uint64_t src;    /* also the immediate when it fits (sign-extended) */
	uint64_t want;
};

static const struct alu_case alu_cases[] = {
	/* add */
	{ A64, BPF_ADD, 0, 1, 2, 3 },
	{ A64, BPF_ADD, 0, ~0ull, 1, 0 },
	{ A64, BPF_ADD, 0, 10, (uint64_t)-3, 7 },
	{ A64, BPF_ADD, 0, 0x100000000ull, 0x7fffffff, 0x17fffffffull },
	{ A32, BPF_ADD, 0, 0xffffffff, 1, 0 },
	{ A32, BPF_ADD, 0, 0x100000005ull, 3, 8 },
	{ A32, BPF_ADD, 0, 10, (uint64_t)-3, 7 },
	{ A32, BPF_ADD, 0, 0x7fffffff, 1, 0x80000000 },
	/* sub */
	{ A64, BPF_SUB, 0, 3, 5, 0xfffffffffffffffeull },
	{ A64, BPF_SUB, 0, 0, (uint64_t)-1, 1 },
	{ A32, BPF_SUB, 0, 3, 5, 0xfffffffe },
	{ A32, BPF_SUB, 0, 0xffffffff00000010ull, 1, 0xf },
	/* mul */
	{ A64, BPF_MUL, 0, 0x100000000ull, 0x100000000ull, 0 },
	{ A64, BPF_MUL, 0, 3, (uint64_t)-2, (uint64_t)-6 },
	{ A64, BPF_MUL, 0, 0x8000000000000000ull, (uint64_t)-1, 0x8000000000000000ull },
	{ A64, BPF_MUL, 0, 0x123456789ull, 0x10, 0x1234567890ull },
	{ A32, BPF_MUL, 0, 0x80000000, (uint64_t)-1, 0x80000000 },
	{ A32, BPF_MUL, 0, 0x10000, 0x10000, 0 },
	{ A32, BPF_MUL, 0, 0xabcd00000003ull, 4, 12 },
	{ A32, BPF_MUL, 0, 3, (uint64_t)-2, 0xfffffffa },
	/* unsigned div; the ALU64 immediate is sign-extended first */
	{ A64, BPF_DIV, 0, 10, 3, 3 },
	{ A64, BPF_DIV, 0, 10, 0, 0 },
	{ A64, BPF_DIV, 0, 10, (uint64_t)-1, 0 },
	{ A64, BPF_DIV, 0, ~0ull, (uint64_t)-1, 1 },
	{ A64, BPF_DIV, 0, (uint64_t)-10, 3, 0x5555555555555552ull },
	{ A64, BPF_DIV, 0, 0x1000000000ull, 0x100000000ull, 0x10 },
	{ A32, BPF_DIV, 0, 0xffffffff00000010ull, 4, 4 },
	{ A32, BPF_DIV, 0, 0xffffffff00000010ull, 0, 0 },
	{ A32, BPF_DIV, 0, 0x10, 0x100000000ull, 0 },    /* divisor's low half is 0 */
	{ A32, BPF_DIV, 0, 0x10, 0x100000002ull, 8 },
	{ A32, BPF_DIV, 0, (uint32_t)-10, 3, 0x55555552 },
	{ A32, BPF_DIV, 0, 0xfffffffe, (uint64_t)-1, 0 },
	/* sdiv */
	{ A64, BPF_DIV, 1, (uint64_t)-10, 3, (uint64_t)-3 },
	{ A64, BPF_DIV, 1, (uint64_t)-10, (uint64_t)-3, 3 },
	{ A64, BPF_DIV, 1, 10, (uint64_t)-3, (uint64_t)-3 },
	{ A64, BPF_DIV, 1, 0x8000000000000000ull, (uint64_t)-1, 0x8000000000000000ull },
	{ A64, BPF_DIV, 1, (uint64_t)-10, 0, 0 },
	{ A32, BPF_DIV, 1, (uint32_t)-10, 3, 0xfffffffd },
	{ A32, BPF_DIV, 1, 0x12345678fffffff6ull, 3, 0xfffffffd },
	{ A32, BPF_DIV, 1, 0x80000000, (uint64_t)-1, 0x80000000 },
	{ A32, BPF_DIV, 1, 0xffffffff80000000ull, 0xffffffff, 0x80000000 },
	{ A32, BPF_DIV, 1, 0xfffffffff6ull, 0, 0 },
	{ A32, BPF_DIV, 1, 10, (uint64_t)-3, 0xfffffffd },
	/* unsigned mod: by zero leaves dst (32-bit: upper half cleared) */
	{ A64, BPF_MOD, 0, 10, 3, 1 },
	{ A64, BPF_MOD, 0, 10, 0, 10 },
	{ A64, BPF_MOD, 0, 0xffffffffffffffffull, 0, 0xffffffffffffffffull },
	{ A64, BPF_MOD, 0, 10, (uint64_t)-1, 10 },
	{ A64, BPF_MOD, 0, (uint64_t)-10, 3, 0 },
	{ A32, BPF_MOD, 0, 10, 3, 1 },
	{ A32, BPF_MOD, 0, 0xffffffff0000000aull, 0, 0xa },
	{ A32, BPF_MOD, 0, 0xffffffff0000000aull, 3, 1 },
	{ A32, BPF_MOD, 0, (uint32_t)-10, 3, 0 },
	{ A32, BPF_MOD, 0, 10, 0x100000000ull, 10 },     /* divisor's low half is 0 */
	/* smod: sign of the result follows the dividend */
	{ A64, BPF_MOD, 1, (uint64_t)-10, 3, (uint64_t)-1 },
	{ A64, BPF_MOD, 1, 10, (uint64_t)-3, 1 },
	{ A64, BPF_MOD, 1, (uint64_t)-10, (uint64_t)-3, (uint64_t)-1 },
	{ A64, BPF_MOD, 1, 0x8000000000000000ull, (uint64_t)-1, 0 },
	{ A64, BPF_MOD, 1, (uint64_t)-7, 0, (uint64_t)-7 },
	{ A32, BPF_MOD, 1, (uint32_t)-10, 3, 0xffffffff },
	{ A32, BPF_MOD, 1, 10, (uint64_t)-3, 1 },
	{ A32, BPF_MOD, 1, 0x80000000, (uint64_t)-1, 0 },
	{ A32, BPF_MOD, 1, 0xaaaabbbbfffffff9ull, 0, 0xfffffff9 },
	/* or / and / xor */
	{ A64, BPF_OR, 0, 0xf0f0f0f0f0f0f0f0ull, 0x0f, 0xf0f0f0f0f0f0f0ffull },
	{ A64, BPF_OR, 0, 0, (uint64_t)-1, ~0ull },
	{ A32, BPF_OR, 0, 0xffffffff00000001ull, 2, 3 },
	{ A32, BPF_OR, 0, 0, (uint64_t)-1, 0xffffffff },
	{ A64, BPF_AND, 0, ~0ull, (uint64_t)-16, 0xfffffffffffffff0ull },
	{ A64, BPF_AND, 0, 0x1234567890ull, 0xff0, 0x890 },
	{ A32, BPF_AND, 0, ~0ull, 0xff, 0xff },
	{ A32, BPF_AND, 0, ~0ull, (uint64_t)-16, 0xfffffff0 },
	{ A64, BPF_XOR, 0, 0xff, (uint64_t)-1, 0xffffffffffffff00ull },
	{ A64, BPF_XOR, 0, 0x5555555555555555ull, 0xaaaaaaaaaaaaaaaaull, ~0ull },
	{ A32, BPF_XOR, 0, 0xff, (uint64_t)-1, 0xffffff00 },
	{ A32, BPF_XOR, 0, 0x1234500000000ull, 1, 1 },
	/* shifts: counts masked to 6 (ALU64) or 5 (ALU) bits */
	{ A64, BPF_LSH, 0, 1, 63, 0x8000000000000000ull },
	{ A64, BPF_LSH, 0, 1, 64, 1 },
	{ A64, BPF_LSH, 0, 1, 65, 2 },
	{ A64, BPF_LSH, 0, 1, (uint64_t)-1, 0x8000000000000000ull },
	{ A64, BPF_LSH, 0, 0x8000000000000001ull, 1, 2 },
	{ A32, BPF_LSH, 0, 1, 31, 0x80000000 },
	{ A32, BPF_LSH, 0, 1, 32, 1 },
	{ A32, BPF_LSH, 0, 1, 33, 2 },
	{ A32, BPF_LSH, 0, 1, (uint64_t)-1, 0x80000000 },
	{ A32, BPF_LSH, 0, 0xffffffff, 4, 0xfffffff0 },
	{ A32, BPF_LSH, 0, 0xff00000001ull, 0, 1 },
	{ A64, BPF_RSH, 0, 0x8000000000000000ull, 63, 1 },
	{ A64, BPF_RSH, 0, 0x8000000000000000ull, 64, 0x8000000000000000ull },
	{ A64, BPF_RSH, 0, 0x8000000000000000ull, (uint64_t)-1, 1 },
	{ A64, BPF_RSH, 0, 0x8000000000000000ull, 4, 0x0800000000000000ull },
	{ A32, BPF_RSH, 0, 0xffffffff80000000ull, 31, 1 },
	{ A32, BPF_RSH, 0, 0xffffffff80000000ull, 32, 0x80000000 },
	{ A32, BPF_RSH, 0, 0x80000000, (uint64_t)-1, 1 },
	{ A32, BPF_RSH, 0, 0x80000000, 4, 0x08000000 },
	{ A64, BPF_ARSH, 0, 0x8000000000000000ull, 63, ~0ull },
	{ A64, BPF_ARSH, 0, 0x8000000000000000ull, 1, 0xc000000000000000ull },
	{ A64, BPF_ARSH, 0, 0x8000000000000000ull, 64, 0x8000000000000000ull },
	{ A64, BPF_ARSH, 0, 0x8000000000000000ull, (uint64_t)-1, ~0ull },
	{ A64, BPF_ARSH, 0, 0x7000000000000000ull, 4, 0x0700000000000000ull },
	{ A32, BPF_ARSH, 0, 0x80000000, 31, 0xffffffff },
	{ A32, BPF_ARSH, 0, 0x180000000ull, 4, 0xf8000000 },
	{ A32, BPF_ARSH, 0, 0x180000000ull, 32, 0x80000000 },
	{ A32, BPF_ARSH, 0, 0x80000000, (uint64_t)-1, 0xffffffff },
	{ A32, BPF_ARSH, 0, 0x7fffffff, 4, 0x07ffffff },
	{ A32, BPF_ARSH, 0, 0xffffffff00000010ull, 4, 1 },
	/* mov; movsx (off 8/16/32) exists only in register form */
	{ A64, BPF_MOV, 0, 5, (uint64_t)-1, ~0ull },
	{ A64, BPF_MOV, 0, 5, 0x1234567890abcdefull, 0x1234567890abcdefull },
	{ A32, BPF_MOV, 0, 5, (uint64_t)-1, 0xffffffff },
	{ A32, BPF_MOV, 0, 5, 0x1234567890abcdefull, 0x90abcdef },
	{ A64, BPF_MOV, 8, 5, 0x80, 0xffffffffffffff80ull },
	{ A64, BPF_MOV, 8, 5, 0x7f, 0x7f },
	{ A64, BPF_MOV, 8, 5, 0x1ff, ~0ull },
	{ A64, BPF_MOV, 16, 5, 0x8000, 0xffffffffffff8000ull },
	{ A64, BPF_MOV, 16, 5, 0x12347fff, 0x7fff },
	{ A64, BPF_MOV, 32, 5, 0x80000000, 0xffffffff80000000ull },
	{ A64, BPF_MOV, 32, 5, 0x17fffffffull, 0x7fffffff },
	{ A32, BPF_MOV, 8, 5, 0x80, 0xffffff80 },
	{ A32, BPF_MOV, 8, 5, 0xffffffff0000017full, 0x7f },
	{ A32, BPF_MOV, 16, 5, 0x8000, 0xffff8000 },
	{ A32, BPF_MOV, 16, 5, 0x1234500008000ull, 0xffff8000 },
};

/* Builds "r0 = dst; r1 = src; op r0, r1 (or imm); exit" and checks r0. */
static void check_alu_case(const struct alu_case *c, bool use_imm)
{
	struct bpf_insn prog[6] = {
		LDDW(BPF_R0, c->dst),
		LDDW(BPF_R1, c->src),
		INSN(c->cls | c->op | (use_imm ? BPF_K : BPF_X), BPF_R0,
		     use_imm ? 0 : BPF_R1, c->off, use_imm ? (int32_t)c->src : 0),
		EXIT(),
	};
	uint64_t got = run_at(__LINE__, prog, ARRAY_LEN(prog), 0, 0);

	CHECK(got == c->want, "%s op 0x%02x off %d %s: 0x%llx, 0x%llx -> 0x%llx want 0x%llx",
	      c->cls == A64 ? "alu64" : "alu32", c->op, c->off, use_imm ? "imm" : "reg",
	      (unsigned long long)c->dst, (unsigned long long)c->src,
	      (unsigned long long)got, (unsigned long long)c->want);
}

TEST(alu_ops_reg_and_imm)
{
	for (size_t i = 0; i < ARRAY_LEN(alu_cases); i++) {
		const struct alu_case *c = &alu_cases[i];
		bool movsx = c->op == BPF_MOV && c->off != 0;

		check_alu_case(c, false);
		/* The immediate form sees the same value when src is a
		 * sign-extended 32-bit number (or, for ALU32, always). */
		if (!movsx && (c->cls == A32 || c->src == (uint64_t)(int64_t)(int32_t)c->src)) {
			if (c->cls == A32 && (c->op == BPF_DIV || c->op == BPF_MOD) &&
			    c->src >> 32)
				continue; /* case is about the register's upper half */
			check_alu_case(c, true);
		}
	}
}

TEST(alu_neg)
{
	CHECK_R0((uint64_t)-5, MOV64_IMM(BPF_R0, 5), INSN(BPF_ALU64 | BPF_NEG, BPF_R0, 0, 0, 0), EXIT());
	CHECK_R0(0x8000000000000000ull, LDDW(BPF_R0, 0x8000000000000000ull),
		 INSN(BPF_ALU64 | BPF_NEG, BPF_R0, 0, 0, 0), EXIT());
	CHECK_R0(0xfffffffb, MOV64_IMM(BPF_R0, 5), INSN(BPF_ALU | BPF_NEG, BPF_R0, 0, 0, 0), EXIT());
	CHECK_R0(0x80000000, MOV32_IMM(BPF_R0, (int32_t)0x80000000),
		 INSN(BPF_ALU | BPF_NEG, BPF_R0, 0, 0, 0), EXIT());
	CHECK_R0(0xffffffff, LDDW(BPF_R0, 0xffffffff00000001ull),
		 INSN(BPF_ALU | BPF_NEG, BPF_R0, 0, 0, 0), EXIT());
	CHECK_R0(0, MOV64_IMM(BPF_R0, 0), INSN(BPF_ALU64 | BPF_NEG, BPF_R0, 0, 0, 0), EXIT());
}

TEST(alu_mov_imm_sign_extension)
{
	CHECK_R0(0xffffffff80000000ull, MOV64_IMM(BPF_R0, (int32_t)0x80000000), EXIT());
	CHECK_R0(0x80000000, MOV32_IMM(BPF_R0, (int32_t)0x80000000), EXIT());
	/* mov32 clears what was in the upper half */
	CHECK_R0(7, LDDW(BPF_R0, ~0ull), MOV32_IMM(BPF_R0, 7), EXIT());
	CHECK_R0(0x89abcdef, LDDW(BPF_R1, 0x0123456789abcdefull), LDDW(BPF_R0, ~0ull),
		 MOV32_REG(BPF_R0, BPF_R1), EXIT());
	/* same register as source and destination */
	CHECK_R0(0xffffffffffffff80ull, MOV64_IMM(BPF_R0, 0x180),
		 MOVSX64_REG(BPF_R0, BPF_R0, 8), EXIT());
	CHECK_R0(3, MOV64_IMM(BPF_R0, 3), ALU64_REG(BPF_ADD, BPF_R0, BPF_R0),
		 ALU64_REG(BPF_SUB, BPF_R0, BPF_R0), ALU64_IMM(BPF_ADD, BPF_R0, 3), EXIT());
	/* the SDIV/SMOD builder macros from insns.h */
	CHECK_R0((uint64_t)-2, MOV64_IMM(BPF_R0, -7), SDIV64_IMM(BPF_R0, 3), EXIT());
	CHECK_R0((uint64_t)-1, MOV64_IMM(BPF_R0, -7), SMOD64_IMM(BPF_R0, 3), EXIT());
}

TEST(alu_endianness)
{
	const uint64_t v = 0x1122334455667788ull;

	CHECK_R0(0x7788, LDDW(BPF_R0, v), ENDIAN(BPF_TO_LE, BPF_R0, 16), EXIT());
	CHECK_R0(0x55667788, LDDW(BPF_R0, v), ENDIAN(BPF_TO_LE, BPF_R0, 32), EXIT());
	CHECK_R0(v, LDDW(BPF_R0, v), ENDIAN(BPF_TO_LE, BPF_R0, 64), EXIT());
	CHECK_R0(0x8877, LDDW(BPF_R0, v), ENDIAN(BPF_TO_BE, BPF_R0, 16), EXIT());
	CHECK_R0(0x88776655, LDDW(BPF_R0, v), ENDIAN(BPF_TO_BE, BPF_R0, 32), EXIT());
	CHECK_R0(0x8877665544332211ull, LDDW(BPF_R0, v), ENDIAN(BPF_TO_BE, BPF_R0, 64), EXIT());
	CHECK_R0(0x8877, LDDW(BPF_R0, v), BSWAP(BPF_R0, 16), EXIT());
	CHECK_R0(0x88776655, LDDW(BPF_R0, v), BSWAP(BPF_R0, 32), EXIT());
	CHECK_R0(0x8877665544332211ull, LDDW(BPF_R0, v), BSWAP(BPF_R0, 64), EXIT());
	CHECK_R0(0x0180, MOV64_IMM(BPF_R0, 0x8001), BSWAP(BPF_R0, 16), EXIT());
}

/* ---- jumps ------------------------------------------------------------ */

static const uint8_t jmp_ops[] = {
	BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE,
	BPF_JSGT, BPF_JSGE, BPF_JSLT, BPF_JSLE, BPF_JSET,
};

/* Independent oracle: what the condition means, written as a table of
 * comparisons on the operands' unsigned and signed views. */
static bool jmp_oracle(uint8_t op, bool is32, uint64_t a, uint64_t b)
{
	uint64_t ua = is32 ? (uint32_t)a : a, ub = is32 ? (uint32_t)b : b;
	int64_t sa = is32 ? (int32_t)(uint32_t)a : (int64_t)a;
	int64_t sb = is32 ? (int32_t)(uint32_t)b : (int64_t)b;

	switch (op) {
	case BPF_JEQ:  return ua == ub;
	case BPF_JNE:  return ua != ub;
	case BPF_JGT:  return ua > ub;
	case BPF_JGE:  return ua >= ub;
	case BPF_JLT:  return ua < ub;
	case BPF_JLE:  return ua <= ub;
	case BPF_JSGT: return sa > sb;
	case BPF_JSGE: return sa >= sb;
	case BPF_JSLT: return sa < sb;
	case BPF_JSLE: return sa <= sb;
	case BPF_JSET: return (ua & ub) != 0;
	}
	return false;
}

/* r0 = 1 if "if r1 op r2/imm goto" is taken, else 0. */
static uint64_t jump_taken(uint8_t cls, uint8_t op, bool use_imm, uint64_t a, uint64_t b)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(BPF_R0, 0),
		LDDW(BPF_R1, a),
		LDDW(BPF_R2, b),
		INSN(cls | op | (use_imm ? BPF_K : BPF_X), BPF_R1, use_imm ? 0 : BPF_R2,
		     1, use_imm ? (int32_t)b : 0),
		EXIT(),
		MOV64_IMM(BPF_R0, 1),
		EXIT(),
	};

	return run_at(__LINE__, prog, ARRAY_LEN(prog), 0, 0);
}

TEST(jump_conditions_boundaries)
{
	static const uint64_t vals[] = {
		0, 1, 2, ~0ull, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
		0x17fffffffull, 0x7fffffffffffffffull, 0x8000000000000000ull,
		0xffffffff00000000ull, (uint64_t)-2, 0xffffffff80000000ull,
	};

	for (size_t o = 0; o < ARRAY_LEN(jmp_ops); o++)
		for (int w = 0; w < 2; w++)
			for (size_t i = 0; i < ARRAY_LEN(vals); i++)
				for (size_t j = 0; j < ARRAY_LEN(vals); j++) {
					uint8_t cls = w ? BPF_JMP32 : BPF_JMP;
					uint64_t a = vals[i], b = vals[j];
					bool want = jmp_oracle(jmp_ops[o], w, a, b);
					uint64_t got = jump_taken(cls, jmp_ops[o], false, a, b);

					CHECK(got == want, "%s op 0x%02x reg 0x%llx, 0x%llx: %llu",
					      w ? "jmp32" : "jmp", jmp_ops[o],
					      (unsigned long long)a, (unsigned long long)b,
					      (unsigned long long)got);
					/* immediates are sign-extended to 64 bits */
					if (b != (uint64_t)(int64_t)(int32_t)b)
						continue;
					got = jump_taken(cls, jmp_ops[o], true, a, b);
					CHECK(got == want, "%s op 0x%02x imm 0x%llx, 0x%llx: %llu",
					      w ? "jmp32" : "jmp", jmp_ops[o],
					      (unsigned long long)a, (unsigned long long)b,
					      (unsigned long long)got);
					if (tl_failed())
						return;
				}
}

/* Hand-written anchors, so the oracle itself is checked. */
TEST(jump_conditions_anchors)
{
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JSGT, true, 0, (uint64_t)-1), 1);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JGT, true, 0, (uint64_t)-1), 0);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JGT, true, 0xffffffff, (uint64_t)-1), 0);
	CHECK_EQ(jump_taken(BPF_JMP32, BPF_JEQ, true, 0xffffffff, (uint64_t)-1), 1);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JEQ, true, 0xffffffff, (uint64_t)-1), 0);
	CHECK_EQ(jump_taken(BPF_JMP32, BPF_JEQ, false, 0x100000005ull, 5), 1);
	CHECK_EQ(jump_taken(BPF_JMP32, BPF_JSLT, false, 0x80000000, 0), 1);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JSLT, false, 0x80000000, 0), 0);
	CHECK_EQ(jump_taken(BPF_JMP32, BPF_JSET, false, 0x100000000ull, 0x100000000ull), 0);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JSET, false, 0x100000000ull, 0x100000000ull), 1);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JLE, false, 5, 5), 1);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JLT, false, 5, 5), 0);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JSGE, false, 0x8000000000000000ull, 0x7fffffffffffffffull), 0);
	CHECK_EQ(jump_taken(BPF_JMP, BPF_JGE, false, 0x8000000000000000ull, 0x7fffffffffffffffull), 1);
}

TEST(jump_unconditional_and_loops)
{
	/* ja skips forward: 0 + 2, back to 2, + 1 = 3 (1 if ja fell through) */
	CHECK_R0(3,
		 MOV64_IMM(BPF_R0, 0),
		 JA(2),                             /* -> 4 */
		 ALU64_IMM(BPF_ADD, BPF_R0, 1),     /* 2 */
		 EXIT(),
		 ALU64_IMM(BPF_ADD, BPF_R0, 2),     /* 4 */
		 JMP_IMM(BPF_JEQ, BPF_R0, 2, -4),   /* -> 2 */
		 EXIT());
	/* gotol uses imm, not off */
	CHECK_R0(3,
		 MOV64_IMM(BPF_R0, 0),
		 GOTOL(2),                          /* -> 4 */
		 ALU64_IMM(BPF_ADD, BPF_R0, 1),     /* 2 */
		 EXIT(),
		 ALU64_IMM(BPF_ADD, BPF_R0, 2),     /* 4 */
		 JMP_IMM(BPF_JEQ, BPF_R0, 2, -4),   /* -> 2 */
		 EXIT());
	/* backward jumps: sum 1..100 */
	CHECK_R0(5050,
		 MOV64_IMM(BPF_R0, 0),
		 MOV64_IMM(BPF_R1, 100),
		 ALU64_REG(BPF_ADD, BPF_R0, BPF_R1),
		 ALU64_IMM(BPF_SUB, BPF_R1, 1),
		 JMP_IMM(BPF_JNE, BPF_R1, 0, -3),
		 EXIT());
	/* ja backwards and gotol backwards */
	CHECK_R0(3,
		 MOV64_IMM(BPF_R0, 0),
		 JA(2),
		 ALU64_IMM(BPF_ADD, BPF_R0, 1),     /* 2 */
		 EXIT(),                            /* 3 */
		 ALU64_IMM(BPF_ADD, BPF_R0, 2),     /* 4 */
		 GOTOL(-4));                        /* -> 2 */
	/* conditional jump with negative offset not taken falls through */
	CHECK_R0(9, MOV64_IMM(BPF_R0, 9), JMP_IMM(BPF_JEQ, BPF_R0, 0, -2), EXIT());
}

/* ---- memory ----------------------------------------------------------- */

TEST(mem_loads)
{
	uint8_t mem[16];

	for (int i = 0; i < 16; i++)
		mem[i] = (uint8_t)(0xf0 + i) ^ (i & 1 ? 0x80 : 0);
	/* mem = f0 71 f2 73 f4 75 f6 77 f8 79 fa 7b fc 7d fe 7f */
	uint64_t p = (uint64_t)(uintptr_t)mem;

	CHECK_EQ(RUN_ARGS(p, 0, LDX(BPF_B, BPF_R0, BPF_R1, 1), EXIT()), 0x71);
	CHECK_EQ(RUN_ARGS(p, 0, LDX(BPF_H, BPF_R0, BPF_R1, 1), EXIT()), 0xf271);
	CHECK_EQ(RUN_ARGS(p, 0, LDX(BPF_W, BPF_R0, BPF_R1, 3), EXIT()), 0xf675f473);
	CHECK_EQ(RUN_ARGS(p, 0, LDX(BPF_DW, BPF_R0, BPF_R1, 5), EXIT()), 0xfc7bfa79f877f675ull);
	/* negative offset from a base past the start */
	CHECK_EQ(RUN_ARGS(p + 8, 0, LDX(BPF_B, BPF_R0, BPF_R1, -8), EXIT()), 0xf0);
	/* sign-extending loads */
	CHECK_EQ(RUN_ARGS(p, 0, LDXSX(BPF_B, BPF_R0, BPF_R1, 0), EXIT()), 0xfffffffffffffff0ull);
	CHECK_EQ(RUN_ARGS(p, 0, LDXSX(BPF_B, BPF_R0, BPF_R1, 1), EXIT()), 0x71);
	CHECK_EQ(RUN_ARGS(p, 0, LDXSX(BPF_H, BPF_R0, BPF_R1, 1), EXIT()), 0xfffffffffffff271ull);
	CHECK_EQ(RUN_ARGS(p, 0, LDXSX(BPF_H, BPF_R0, BPF_R1, 0), EXIT()), 0x71f0);
	CHECK_EQ(RUN_ARGS(p, 0, LDXSX(BPF_W, BPF_R0, BPF_R1, 3), EXIT()), 0xfffffffff675f473ull);
	CHECK_EQ(RUN_ARGS(p, 0, LDXSX(BPF_W, BPF_R0, BPF_R1, 0), EXIT()), 0x73f271f0);
	/* loads overwrite the whole destination register */
	CHECK_EQ(RUN_ARGS(p, 0, LDDW(BPF_R0, ~0ull), LDX(BPF_B, BPF_R0, BPF_R1, 0), EXIT()), 0xf0);
	/* destination is also the base register */
	CHECK_EQ(RUN_ARGS(p, 0, LDX(BPF_H, BPF_R1, BPF_R1, 2), MOV64_REG(BPF_R0, BPF_R1), EXIT()), 0x73f2);
}

TEST(mem_stores)
{
	uint8_t mem[24];
	uint64_t p = (uint64_t)(uintptr_t)mem;
	uint64_t v;

	memset(mem, 0xaa, sizeof(mem));
	RUN_ARGS(p, 0, ST(BPF_B, BPF_R1, 1, 0x11), ST(BPF_H, BPF_R1, 3, 0x2233),
		 ST(BPF_W, BPF_R1, 5, 0x44556677), ST(BPF_DW, BPF_R1, 9, -2),
		 MOV64_IMM(BPF_R0, 0), EXIT());
	CHECK(mem[0] == 0xaa && mem[1] == 0x11 && mem[2] == 0xaa);
	CHECK(mem[3] == 0x33 && mem[4] == 0x22);
	CHECK(mem[5] == 0x77 && mem[6] == 0x66 && mem[7] == 0x55 && mem[8] == 0x44);
	memcpy(&v, mem + 9, 8);
	CHECK_EQ(v, 0xfffffffffffffffeull, "st dw sign-extends imm: 0x%llx", (unsigned long long)v);
	CHECK_EQ(mem[17], 0xaa);

	memset(mem, 0xaa, sizeof(mem));
	RUN_ARGS(p, 0, LDDW(BPF_R2, 0x0102030405060708ull),
		 STX(BPF_B, BPF_R1, BPF_R2, 0), STX(BPF_H, BPF_R1, BPF_R2, 2),
		 STX(BPF_W, BPF_R1, BPF_R2, 5), STX(BPF_DW, BPF_R1, BPF_R2, 11),
		 MOV64_IMM(BPF_R0, 0), EXIT());
	CHECK(mem[0] == 0x08 && mem[1] == 0xaa);
	CHECK(mem[2] == 0x08 && mem[3] == 0x07 && mem[4] == 0xaa);
	CHECK(mem[5] == 0x08 && mem[8] == 0x05 && mem[9] == 0xaa);
	memcpy(&v, mem + 11, 8);
	CHECK_EQ(v, 0x0102030405060708ull);
	CHECK(mem[10] == 0xaa && mem[19] == 0xaa);

	/* negative offsets */
	memset(mem, 0, sizeof(mem));
	RUN_ARGS(p + 8, 0, ST(BPF_W, BPF_R1, -4, 0x01020304), MOV64_IMM(BPF_R0, 0), EXIT());
	CHECK(mem[4] == 0x04 && mem[7] == 0x01 && mem[8] == 0);
}

TEST(mem_stack)
{
	/* store/load through r10 in every width, round trip */
	CHECK_R0(0x1122334455667788ull, LDDW(BPF_R1, 0x1122334455667788ull),
		 STX(BPF_DW, BPF_R10, BPF_R1, -8), LDX(BPF_DW, BPF_R0, BPF_R10, -8), EXIT());
	CHECK_R0(0xbeef, ST(BPF_H, BPF_R10, -512, 0xbeef), LDX(BPF_H, BPF_R0, BPF_R10, -512), EXIT());
	CHECK_R0(0xfffffffffffffffeull, ST(BPF_B, BPF_R10, -1, 0xfe),
		 LDXSX(BPF_B, BPF_R0, BPF_R10, -1), EXIT());
	/* the stack's address can be passed around */
	CHECK_R0(42, MOV64_REG(BPF_R1, BPF_R10), ALU64_IMM(BPF_ADD, BPF_R1, -16),
		 ST(BPF_W, BPF_R1, 0, 42), LDX(BPF_W, BPF_R0, BPF_R10, -16), EXIT());
}

TEST(lddw)
{
	CHECK_R0(0x1122334455667788ull, LDDW(BPF_R0, 0x1122334455667788ull), EXIT());
	/* a negative low half does not leak into the high half */
	CHECK_R0(0x00000001ffffffffull, LDDW(BPF_R0, 0x00000001ffffffffull), EXIT());
	CHECK_R0(0x80000000ffffffffull, LDDW(BPF_R0, 0x80000000ffffffffull), EXIT());
	CHECK_R0(0, LDDW(BPF_R0, 0), EXIT());
	/* execution continues right after the second slot */
	CHECK_R0(0x100000002ull, LDDW(BPF_R0, 0x100000000ull), ALU64_IMM(BPF_ADD, BPF_R0, 2), EXIT());
}

/* ---- atomics ---------------------------------------------------------- */

struct atomic_case {
	uint8_t size;
	int32_t op;
	uint64_t mem, src, r0; /* before */
	uint64_t want_mem, want_src, want_r0;
};

#define OLD32 0xffffffff00000000ull /* canary above a 32-bit slot */

static const struct atomic_case atomic_cases[] = {
	/* dw */
	{ BPF_DW, BPF_ADD, 10, 5, 0, 15, 5, 0 },
	{ BPF_DW, BPF_OR, 0xf0, 0x0f, 0, 0xff, 0x0f, 0 },
	{ BPF_DW, BPF_AND, 0xff, 0x3c, 0, 0x3c, 0x3c, 0 },
	{ BPF_DW, BPF_XOR, 0xff, 0x0f, 0, 0xf0, 0x0f, 0 },
	{ BPF_DW, BPF_ADD | BPF_FETCH, 10, 5, 0, 15, 10, 0 },
	{ BPF_DW, BPF_OR | BPF_FETCH, 0xf0, 0x0f, 0, 0xff, 0xf0, 0 },
	{ BPF_DW, BPF_AND | BPF_FETCH, 0xff, 0x3c, 0, 0x3c, 0xff, 0 },
	{ BPF_DW, BPF_XOR | BPF_FETCH, 0xff, 0x0f, 0, 0xf0, 0xff, 0 },
	{ BPF_DW, BPF_ADD | BPF_FETCH, ~0ull, 2, 0, 1, ~0ull, 0 },
	{ BPF_DW, BPF_XCHG, 0x1111111111111111ull, 0x2222222222222222ull, 0,
	  0x2222222222222222ull, 0x1111111111111111ull, 0 },
	/* cmpxchg: success writes src; r0 gets the old value either way */
	{ BPF_DW, BPF_CMPXCHG, 0x1234567890ull, 99, 0x1234567890ull, 99, 99, 0x1234567890ull },
	{ BPF_DW, BPF_CMPXCHG, 0x1234567890ull, 99, 0x1234567891ull,
	  0x1234567890ull, 99, 0x1234567890ull },
	/* w: only 4 bytes change; fetched values are zero-extended */
	{ BPF_W, BPF_ADD, 0xffffffff, 1, 0, 0, 1, 0 },
	{ BPF_W, BPF_OR, 0xf0, 0x10000000f, 0, 0xff, 0x10000000full, 0 },
	{ BPF_W, BPF_AND, 0xff, 0x3c, 0, 0x3c, 0x3c, 0 },
	{ BPF_W, BPF_XOR, 0xff, 0x0f, 0, 0xf0, 0x0f, 0 },
	{ BPF_W, BPF_ADD | BPF_FETCH, 0xfffffffe, 0xab00000001ull, 0, 0xffffffff, 0xfffffffe, 0 },
	{ BPF_W, BPF_OR | BPF_FETCH, 0x80000000, 1, 0, 0x80000001, 0x80000000, 0 },
	{ BPF_W, BPF_AND | BPF_FETCH, 0x80000001, 1, 0, 1, 0x80000001, 0 },
	{ BPF_W, BPF_XOR | BPF_FETCH, 0x80000001, 1, 0, 0x80000000, 0x80000001, 0 },
	{ BPF_W, BPF_XCHG, 0x80000000, 0x1234500000007ull, 0, 7, 0x80000000, 0 },
	{ BPF_W, BPF_CMPXCHG, 0x80000000, 5, 0xffffffff80000000ull, 5, 5, 0x80000000 },
	{ BPF_W, BPF_CMPXCHG, 0x80000000, 5, 0x80000001, 0x80000000, 5, 0x80000000 },
};

TEST(atomics_all_ops)
{
	for (size_t i = 0; i < ARRAY_LEN(atomic_cases); i++) {
		const struct atomic_case *c = &atomic_cases[i];
		uint64_t mem[3] = { 0x5a5a5a5a5a5a5a5aull, 0, 0x5a5a5a5a5a5a5a5aull };
		uint64_t out[2] = { 0, 0 };
		struct bpf_insn prog[] = {
			MOV64_REG(BPF_R6, BPF_R2),         /* where to save regs */
			LDDW(BPF_R0, c->r0),
			LDDW(BPF_R3, c->src),
			ATOMIC(c->size, c->op, BPF_R1, BPF_R3, 8),
			STX(BPF_DW, BPF_R6, BPF_R3, 0),
			STX(BPF_DW, BPF_R6, BPF_R0, 8),
			EXIT(),
		};
		uint64_t want_mem = c->want_mem;

		if (c->size == BPF_W) {
			mem[1] = OLD32 | (uint32_t)c->mem;
			want_mem = OLD32 | (uint32_t)c->want_mem;
		} else {
			mem[1] = c->mem;
		}
		run_at(__LINE__, prog, ARRAY_LEN(prog), (uint64_t)(uintptr_t)mem,
		       (uint64_t)(uintptr_t)out);
		CHECK(mem[1] == want_mem && out[0] == c->want_src && out[1] == c->want_r0,
		      "case %zu (size %d op 0x%x): mem 0x%llx src 0x%llx r0 0x%llx", i,
		      c->size, c->op, (unsigned long long)mem[1],
		      (unsigned long long)out[0], (unsigned long long)out[1]);
		CHECK(mem[0] == 0x5a5a5a5a5a5a5a5aull && mem[2] == 0x5a5a5a5a5a5a5a5aull,
		      "case %zu wrote outside its slot", i);
	}
}

struct thread_arg {
	const struct bpfrt_prog *prog;
	uint64_t *shared;
	int err;
};

static void *atomic_worker(void *p)
{
	struct thread_arg *a = p;
	uint64_t r0;

	a->err = bpfrt_prog_run(a->prog, BPFRT_EXEC_INTERP, (uint64_t)(uintptr_t)a->shared,
				0, &r0);
	return NULL;
}

TEST(atomics_across_threads)
{
	enum { ITERS = 100000, THREADS = 2 };
	static const struct bpf_insn insns[] = {
		MOV64_IMM(BPF_R2, ITERS),
		MOV64_IMM(BPF_R3, 1),
		MOV64_IMM(BPF_R4, 3),
		ATOMIC(BPF_DW, BPF_ADD, BPF_R1, BPF_R3, 0),      /* loop */
		MOV64_IMM(BPF_R5, 1),
		ATOMIC(BPF_W, BPF_ADD | BPF_FETCH, BPF_R1, BPF_R5, 8),
		ATOMIC(BPF_DW, BPF_XOR, BPF_R1, BPF_R4, 16),
		ALU64_IMM(BPF_SUB, BPF_R2, 1),
		JMP_IMM(BPF_JNE, BPF_R2, 0, -6),
		MOV64_IMM(BPF_R0, 0),
		EXIT(),
	};
	uint64_t shared[3] = { 0, 0, 0 };
	struct thread_arg args[THREADS];
	pthread_t tids[THREADS];
	struct bpfrt_prog *prog;

	REQUIRE(bpfrt_prog_load(insns, ARRAY_LEN(insns), NULL, &prog) == 0, "%s",
		bpfrt_last_error());
	for (int i = 0; i < THREADS; i++) {
		args[i] = (struct thread_arg){ prog, shared, -1 };
		REQUIRE(pthread_create(&tids[i], NULL, atomic_worker, &args[i]) == 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(tids[i], NULL);
		CHECK_EQ(args[i].err, 0);
	}
	CHECK(shared[0] == (uint64_t)ITERS * THREADS, "dw add total %llu",
	      (unsigned long long)shared[0]);
	CHECK((uint32_t)shared[1] == (uint32_t)ITERS * THREADS && shared[1] >> 32 == 0,
	      "w fetch-add total 0x%llx", (unsigned long long)shared[1]);
	CHECK_EQ(shared[2], 0, "even number of xors cancels: %llu", (unsigned long long)shared[2]);
	bpfrt_prog_free(prog);
}

/* ---- helper calls ----------------------------------------------------- */

#define TEST_HELPER_ID 100
#define UNUSED_HELPER_ID 201

static uint64_t weigh_args(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return r1 * 10000 + r2 * 1000 + r3 * 100 + r4 * 10 + r5;
}

static void register_test_helper(void)
{
	static const struct bpfrt_helper h = {
		.name = "test_weigh_args",
		.fn = weigh_args,
		.ret = BPFRT_RET_INTEGER,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING,
			  BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};

	bpfrt_helper_unregister(UNUSED_HELPER_ID);
	if (bpfrt_helper_register(TEST_HELPER_ID, &h))
		tl_fail(__FILE__, __LINE__, "register: %s", bpfrt_last_error());
}

TEST(helper_call)
{
	register_test_helper();
	CHECK_R0(12345 + 7,
		 MOV64_IMM(BPF_R1, 1), MOV64_IMM(BPF_R2, 2), MOV64_IMM(BPF_R3, 3),
		 MOV64_IMM(BPF_R4, 4), MOV64_IMM(BPF_R5, 5), MOV64_IMM(BPF_R6, 7),
		 CALL_HELPER(TEST_HELPER_ID),
		 ALU64_REG(BPF_ADD, BPF_R0, BPF_R6), /* r6 survives helper calls */
		 EXIT());
}

TEST(callx_valid)
{
	register_test_helper();
	CHECK_R0(54321,
		 MOV64_IMM(BPF_R1, 5), MOV64_IMM(BPF_R2, 4), MOV64_IMM(BPF_R3, 3),
		 MOV64_IMM(BPF_R4, 2), MOV64_IMM(BPF_R5, 1),
		 MOV64_IMM(BPF_R8, TEST_HELPER_ID),
		 CALLX(BPF_R8),
		 EXIT());
}

/* callx to an id that is not a registered helper: the run stops with
 * -EINVAL and a message naming the instruction and the id. */
static void check_callx_rejected(int line, uint64_t id, const char *id_text)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(BPF_R0, 77),
		LDDW(BPF_R8, id),
		CALLX(BPF_R8),          /* insn 3 */
		EXIT(),
	};
	uint64_t r0 = 1;
	bool loaded;
	int err = load_and_run(prog, ARRAY_LEN(prog), 0, 0, &r0, &loaded);

	if (!loaded) {
		tl_fail(__FILE__, line, "load failed: %s", bpfrt_last_error());
		return;
	}
	if (err != -EINVAL)
		tl_fail(__FILE__, line, "run returned %d, want -EINVAL", err);
	if (!strstr(bpfrt_last_error(), "insn 3") || !strstr(bpfrt_last_error(), id_text))
		tl_fail(__FILE__, line, "message: %s", bpfrt_last_error());
}

TEST(callx_invalid)
{
	register_test_helper();
	check_callx_rejected(__LINE__, UNUSED_HELPER_ID, "201");
	{
		char text[32];

		snprintf(text, sizeof(text), "%u", BPFRT_MAX_HELPER_ID);
		check_callx_rejected(__LINE__, BPFRT_MAX_HELPER_ID, text);
	}
	/* the low bits name a valid helper: must not be truncated */
	check_callx_rejected(__LINE__, 0x100000000ull + TEST_HELPER_ID, "4294967396");
	check_callx_rejected(__LINE__, ~0ull, "18446744073709551615");
	/* a fresh run after an abort succeeds again */
	CHECK_R0(3, MOV64_IMM(BPF_R0, 3), EXIT());
}

/* ---- BPF-to-BPF calls ------------------------------------------------- */

TEST(local_call_conventions)
{
	/* conformance call_local: r1-r5 in, r0 out, r6-r9 preserved */
	CHECK_R0(1,
		 MOV64_IMM(BPF_R0, 0),
		 MOV64_IMM(BPF_R1, 1), MOV64_IMM(BPF_R2, 2), MOV64_IMM(BPF_R3, 3),
		 MOV64_IMM(BPF_R4, 4), MOV64_IMM(BPF_R5, 5),
		 MOV64_IMM(BPF_R6, 6), MOV64_IMM(BPF_R7, 7), MOV64_IMM(BPF_R8, 8),
		 MOV64_IMM(BPF_R9, 9),
		 CALL_LOCAL(9),                          /* 10 -> 20 */
		 JMP_IMM(BPF_JNE, BPF_R0, 15, 6),
		 JMP_IMM(BPF_JNE, BPF_R6, 6, 5),
		 JMP_IMM(BPF_JNE, BPF_R7, 7, 4),
		 JMP_IMM(BPF_JNE, BPF_R8, 8, 3),
		 JMP_IMM(BPF_JNE, BPF_R9, 9, 2),
		 MOV64_IMM(BPF_R0, 1),
		 EXIT(),
		 MOV64_IMM(BPF_R0, -1),                  /* 18 */
		 EXIT(),
		 MOV64_REG(BPF_R0, BPF_R1),              /* 20: func */
		 ALU64_REG(BPF_ADD, BPF_R0, BPF_R2),
		 ALU64_REG(BPF_ADD, BPF_R0, BPF_R3),
		 ALU64_REG(BPF_ADD, BPF_R0, BPF_R4),
		 ALU64_REG(BPF_ADD, BPF_R0, BPF_R5),
		 MOV64_IMM(BPF_R6, 0), MOV64_IMM(BPF_R7, 0), MOV64_IMM(BPF_R8, 0),
		 MOV64_IMM(BPF_R9, 0),
		 EXIT());
}

TEST(local_call_separate_frames)
{
	static const struct bpf_insn insns[] = {
		ST(BPF_DW, BPF_R10, -8, 0x1111),        /* 0 */
		MOV64_REG(BPF_R6, BPF_R10),             /* 1 */
		MOV64_IMM(BPF_R7, 5),                   /* 2 */
		CALL_LOCAL(9),                          /* 3 -> 13 */
		JMP_REG(BPF_JNE, BPF_R10, BPF_R6, 6),   /* 4: our r10 is back */
		LDX(BPF_DW, BPF_R1, BPF_R10, -8),       /* 5 */
		JMP_IMM(BPF_JNE, BPF_R1, 0x1111, 4),    /* 6: our slot untouched */
		JMP_IMM(BPF_JNE, BPF_R7, 5, 3),         /* 7: r7 restored */
		ALU64_REG(BPF_SUB, BPF_R6, BPF_R0),     /* 8: caller r10 - callee r10 */
		MOV64_REG(BPF_R0, BPF_R6),              /* 9 */
		EXIT(),                                 /* 10 */
		MOV64_IMM(BPF_R0, -1),                  /* 11: failed */
		EXIT(),                                 /* 12 */
		ST(BPF_DW, BPF_R10, -8, 0x2222),        /* 13: callee */
		LDX(BPF_DW, BPF_R7, BPF_R10, -8),       /* 14 */
		MOV64_IMM(BPF_R0, 0),                   /* 15 */
		JMP_IMM(BPF_JNE, BPF_R7, 0x2222, 1),    /* 16 */
		MOV64_REG(BPF_R0, BPF_R10),             /* 17: r0 = callee r10 */
		EXIT(),                                 /* 18 */
	};
	struct bpfrt_prog *p;
	uint64_t r0 = 0;
	uint32_t start, main_depth;

	REQUIRE(bpfrt_prog_load(insns, ARRAY_LEN(insns), NULL, &p) == 0, "%s",
		bpfrt_last_error());
	REQUIRE_EQ(bpfrt_prog_subprog_info(p, 0, &start, &main_depth), 0);
	CHECK(main_depth >= 8 && main_depth <= BPFRT_STACK_PER_FRAME, "main frame %u", main_depth);
	CHECK_EQ(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, 0, 0, &r0), 0, "%s", bpfrt_last_error());
	CHECK(r0 == main_depth, "callee r10 = caller r10 - 0x%llx, main frame is %u bytes",
	      (unsigned long long)r0, main_depth);
	bpfrt_prog_free(p);
}

/* A chain of `frames` functions: each stores its number in its own
 * [r10-8], calls the next, then returns r0 * 10 + its [r10-8]. The leaf
 * scribbles on its own slot and returns its number, so with separate
 * frames an 8-deep chain returns 87654321. */
static size_t build_call_chain(struct bpf_insn *insns, int frames)
{
	size_t n = 0;

	for (int k = 1; k < frames; k++) {
		insns[n++] = ST(BPF_DW, BPF_R10, -8, k);
		insns[n++] = CALL_LOCAL(4);
		insns[n++] = LDX(BPF_DW, BPF_R1, BPF_R10, -8);
		insns[n++] = ALU64_IMM(BPF_MUL, BPF_R0, 10);
		insns[n++] = ALU64_REG(BPF_ADD, BPF_R0, BPF_R1);
		insns[n++] = EXIT();
	}
	insns[n++] = ST(BPF_DW, BPF_R10, -8, 99);
	insns[n++] = MOV64_IMM(BPF_R0, frames);
	insns[n++] = EXIT();
	return n;
}

TEST(local_call_chain_8_deep)
{
	struct bpf_insn insns[64];
	size_t n = build_call_chain(insns, BPFRT_MAX_CALL_FRAMES);

	CHECK_EQ(run_at(__LINE__, insns, n, 0, 0), 87654321ull);
	n = build_call_chain(insns, 3);
	CHECK_EQ(run_at(__LINE__, insns, n, 0, 0), 321);
}

TEST(local_call_chain_too_deep_never_runs_off)
{
	struct bpf_insn insns[64];
	size_t n = build_call_chain(insns, BPFRT_MAX_CALL_FRAMES + 1);
	uint64_t r0 = 0;
	bool loaded;
	int err = load_and_run(insns, n, 0, 0, &r0, &loaded);

	/* the validator should refuse it; if not, the run must abort */
	CHECK(err < 0, "loaded %d, r0 %llu", loaded, (unsigned long long)r0);
	CHECK_NE(bpfrt_last_error()[0], '\0');
}

/* Encodings the validator is meant to reject: if one gets through, the
 * interpreter must abort cleanly rather than do something made up. */
TEST(bad_encodings_abort)
{
	static const struct bpf_insn bad[] = {
		INSN(0xff, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_NEG | BPF_X, 0, 1, 0, 0),
		INSN(BPF_ALU64 | BPF_END | BPF_X, 0, 0, 0, 16),
		INSN(BPF_ALU | BPF_END | BPF_TO_BE, 0, 0, 0, 17),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 7, 0),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 1, -8, 0x02),
		INSN(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 2, 0, 1),
		INSN(BPF_JMP | BPF_JCOND, 0, 1, 0, 0),
	};

	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		struct bpf_insn insns[] = { MOV64_IMM(BPF_R0, 1), bad[i], EXIT() };
		uint64_t r0 = 0;
		bool loaded;
		int err = load_and_run(insns, ARRAY_LEN(insns), 0, 0, &r0, &loaded);

		CHECK_EQ(err, -EINVAL, "opcode 0x%02x: loaded %d err %d", bad[i].code, loaded, err);
		if (loaded)
			CHECK(strstr(bpfrt_last_error(), "insn 1"), "%s", bpfrt_last_error());
	}
	/* lddw with a pseudo source (map fd) is not resolved yet */
	{
		struct bpf_insn insns[] = {
			INSN(BPF_LD | BPF_DW | BPF_IMM, 0, BPF_PSEUDO_MAP_FD, 0, 3),
			INSN(0, 0, 0, 0, 0),
			EXIT(),
		};
		uint64_t r0 = 0;
		bool loaded;

		CHECK(load_and_run(insns, ARRAY_LEN(insns), 0, 0, &r0, &loaded) < 0);
	}
}

TEST(counted_run)
{
	static const struct bpf_insn loop[] = {
		MOV64_IMM(BPF_R0, 0),
		MOV64_IMM(BPF_R1, 10),
		ALU64_IMM(BPF_ADD, BPF_R0, 1),
		ALU64_IMM(BPF_SUB, BPF_R1, 1),
		JMP_IMM(BPF_JNE, BPF_R1, 0, -3),
		EXIT(),
	};
	static const struct bpf_insn calls[] = {
		LDDW(BPF_R0, 5),
		CALL_LOCAL(1),
		EXIT(),
		MOV64_IMM(BPF_R0, 7),
		EXIT(),
	};
	struct bpfrt_prog *p;
	uint64_t executed = 0;

	REQUIRE(bpfrt_prog_load(loop, ARRAY_LEN(loop), NULL, &p) == 0, "%s", bpfrt_last_error());
	CHECK_EQ(bpfrt_interp_run_counted(p, 0, 0, &executed), 10);
	CHECK_EQ(executed, 2 + 10 * 3 + 1, "executed %llu", (unsigned long long)executed);
	CHECK_EQ(bpfrt_interp_run(p, 0, 0), 10);
	bpfrt_prog_free(p);

	/* lddw counts once; call and both exits count */
	REQUIRE(bpfrt_prog_load(calls, ARRAY_LEN(calls), NULL, &p) == 0, "%s", bpfrt_last_error());
	CHECK_EQ(bpfrt_interp_run_counted(p, 0, 0, &executed), 7);
	CHECK_EQ(executed, 5, "executed %llu", (unsigned long long)executed);
	bpfrt_prog_free(p);
}

/* The validator stands between programs and the interpreter, so the
 * interpreter's own guards are reached by editing a loaded program's
 * instructions behind the validator's back. */
static int run_patched(const struct bpf_insn *insns, size_t cnt, uint32_t at,
		       const struct bpf_insn *patch, uint64_t *executed)
{
	struct bpfrt_prog *p;
	uint64_t r0 = 0;
	int err;

	if (bpfrt_prog_load(insns, cnt, NULL, &p)) {
		tl_fail(__FILE__, __LINE__, "load: %s", bpfrt_last_error());
		return 0;
	}
	p->insns[at] = *patch;
	err = bpfrt_prog_run(p, BPFRT_EXEC_INTERP, 0, 0, &r0);
	if (executed) {
		bpfrt_interp_run_counted(p, 0, 0, executed);
		if (r0 != 0)
			err = 0; /* an aborted run returns 0 */
	}
	bpfrt_prog_free(p);
	return err;
}

TEST(interp_guards_bad_encodings)
{
	static const struct bpf_insn base[] = {
		MOV64_IMM(BPF_R0, 1), MOV64_IMM(BPF_R0, 2), EXIT(),
	};
	static const struct bpf_insn bad[] = {
		INSN(0xff, 0, 0, 0, 0),
		INSN(0x00, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_NEG | BPF_X, 0, 1, 0, 0),
		INSN(BPF_ALU64 | BPF_END | BPF_X, 0, 0, 0, 16),
		INSN(BPF_ALU | BPF_END | BPF_TO_BE, 0, 0, 0, 17),
		INSN(BPF_ALU | BPF_END | BPF_TO_LE, 0, 0, 0, 8),
		INSN(BPF_ALU64 | BPF_END | BPF_TO_LE, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 7, 0),
		INSN(BPF_ALU | BPF_MOV | BPF_X, 0, 1, 64, 0),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 1, -8, 0x02),
		INSN(BPF_STX | BPF_ATOMIC | BPF_W, 10, 1, -8, BPF_SUB),
		INSN(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 2, 0, 1),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, -1),
		INSN(BPF_JMP | BPF_JCOND, 0, 1, 0, 0),
		INSN(BPF_JMP32 | BPF_CALL, 0, 0, 0, 0),
		INSN(BPF_JMP32 | BPF_EXIT, 0, 0, 0, 0),
	};

	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		uint64_t executed = 0;
		int err = run_patched(base, ARRAY_LEN(base), 1, &bad[i], &executed);

		CHECK(err == -EINVAL || err == -ENOENT, "opcode 0x%02x imm %d: %d",
		      bad[i].code, bad[i].imm, err);
		CHECK(strstr(bpfrt_last_error(), "insn 1"), "%s", bpfrt_last_error());
		CHECK(executed == 2, "opcode 0x%02x: executed %llu", bad[i].code,
		      (unsigned long long)executed);
	}
}

TEST(interp_guards_frame_overflow)
{
	struct bpf_insn insns[64];
	size_t n = build_call_chain(insns, BPFRT_MAX_CALL_FRAMES);
	/* the leaf (last three insns) calls itself forever */
	struct bpf_insn recurse = CALL_LOCAL(-2);
	int err = run_patched(insns, n, (uint32_t)n - 2, &recurse, NULL);

	CHECK_EQ(err, -E2BIG, "err %d: %s", err, bpfrt_last_error());
	CHECK(strstr(bpfrt_last_error(), "insn 43"), "%s", bpfrt_last_error());
}

/* A program calls what was registered when it was loaded (its snapshot):
 * unregistering the helper afterwards changes nothing for it, and a load
 * after that refuses the call. */
TEST(helper_unregistered_after_load)
{
	static const struct bpfrt_helper h = { .name = "late", .fn = weigh_args };
	static const struct bpf_insn insns[] = {
		MOV64_IMM(BPF_R1, 1), CALL_HELPER(102), EXIT(),
	};
	struct bpfrt_prog *p, *q = NULL;
	uint64_t r0 = 0;

	REQUIRE_EQ(bpfrt_helper_register(102, &h), 0);
	REQUIRE(bpfrt_prog_load(insns, ARRAY_LEN(insns), NULL, &p) == 0, "%s",
		bpfrt_last_error());
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, 0, 0, &r0) == 0 && r0 == 10000);
	bpfrt_helper_unregister(102);
	r0 = 0;
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, 0, 0, &r0) == 0 && r0 == 10000,
	      "r0 %llu: %s", (unsigned long long)r0, bpfrt_last_error());
	CHECK(bpfrt_prog_load(insns, ARRAY_LEN(insns), NULL, &q) == -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "helper bpf_sysctl_get_current_value#102: "
		     "bpf_sysctl_get_current_value (102) "
		     "is not available"), "%s", bpfrt_last_error());
	bpfrt_prog_free(q);
	bpfrt_prog_free(p);
}

/* A subprogram address (callback for bpf_loop and friends) has no
 * interpreter meaning yet: the run must stop, not load a made-up value. */
/* A subprogram address is an interpreter callback handle: the tag bit
 * and the subprogram's first instruction (see helpers/callback.h). */
TEST(lddw_subprog_address_is_callback_handle)
{
	static const struct bpf_insn insns[] = {
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_R1, BPF_PSEUDO_FUNC, 0, 3), /* -> 4 */
		INSN(0, 0, 0, 0, 0),
		MOV64_REG(BPF_R0, BPF_R1),
		EXIT(),
		MOV64_IMM(BPF_R0, 1),
		EXIT(),
	};
	uint64_t r0 = 0;
	bool loaded;
	int err = load_and_run(insns, ARRAY_LEN(insns), 0, 0, &r0, &loaded);

	CHECK_EQ(err, 0, "loaded %d err %d: %s", loaded, err, bpfrt_last_error());
	CHECK_EQ(r0, (1ull << 63 | 4), "r0 %#llx", (unsigned long long)r0);
}

/* Reading a register nothing wrote is rejected at load now, so the entry
 * state is checked by editing the program after validation. */
TEST(entry_registers_zero)
{
	static const struct bpf_insn base[] = {
		MOV64_IMM(BPF_R0, 0), MOV64_IMM(BPF_R0, 0), MOV64_IMM(BPF_R0, 0),
		MOV64_IMM(BPF_R0, 0), MOV64_IMM(BPF_R0, 0), MOV64_IMM(BPF_R0, 0),
		MOV64_IMM(BPF_R0, 0), EXIT(),
	};
	const struct bpf_insn patched[] = {
		ALU64_REG(BPF_OR, BPF_R0, BPF_R3), ALU64_REG(BPF_OR, BPF_R0, BPF_R4),
		ALU64_REG(BPF_OR, BPF_R0, BPF_R5), ALU64_REG(BPF_OR, BPF_R0, BPF_R6),
		ALU64_REG(BPF_OR, BPF_R0, BPF_R7), ALU64_REG(BPF_OR, BPF_R0, BPF_R8),
		ALU64_REG(BPF_OR, BPF_R0, BPF_R9), EXIT(),
	};
	struct bpfrt_prog *p;
	uint64_t r0 = 1;

	REQUIRE(bpfrt_prog_load(base, ARRAY_LEN(base), NULL, &p) == 0, "%s", bpfrt_last_error());
	memcpy(p->insns, patched, sizeof(patched));
	CHECK_EQ(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, ~0ull, ~0ull, &r0), 0);
	CHECK_EQ(r0, 0, "r0 | r3..r9 = 0x%llx", (unsigned long long)r0);
	bpfrt_prog_free(p);
}
