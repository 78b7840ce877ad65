/* x86-64 JIT: every opcode family against a C model of RFC 9669 and
 * against the interpreter, jump encodings around the rel8 limit, deep
 * local calls, helpers, callx aborts, big images, W^X and the listing. */
#include "testlib.h"
#include "insns.h"
#include "jit_support.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define HELPER_ID   300
#define CALLX_ID    301
#define UNREG_ID    302

static struct bpfrt_prog *load(const struct bpf_insn *insns, size_t n, bool jit)
{
	return load_insns("test_jit", insns, n, jit, 0);
}

/* ---- C model of the ALU ------------------------------------------------- */

static uint64_t model_alu(bool is64, uint8_t op, int16_t off, uint64_t a, uint64_t b)
{
	uint64_t r;

	if (!is64) {
		uint32_t x = (uint32_t)a, y = (uint32_t)b;

		switch (op) {
		case BPF_ADD: return (uint32_t)(x + y);
		case BPF_SUB: return (uint32_t)(x - y);
		case BPF_MUL: return (uint32_t)(x * y);
		case BPF_OR:  return x | y;
		case BPF_AND: return x & y;
		case BPF_XOR: return x ^ y;
		case BPF_LSH: return (uint32_t)(x << (y & 31));
		case BPF_RSH: return x >> (y & 31);
		case BPF_ARSH: return (uint32_t)((int32_t)x >> (y & 31));
		case BPF_NEG: return (uint32_t)-x;
		case BPF_MOV:
			if (off == 8) return (uint32_t)(int32_t)(int8_t)y;
			if (off == 16) return (uint32_t)(int32_t)(int16_t)y;
			return y;
		case BPF_DIV:
			if (!y) return 0;
			if (off) return y == UINT32_MAX ? (uint32_t)-x :
				(uint32_t)((int32_t)x / (int32_t)y);
			return x / y;
		case BPF_MOD:
			if (!y) return x;
			if (off) return y == UINT32_MAX ? 0 : (uint32_t)((int32_t)x % (int32_t)y);
			return x % y;
		}
		abort();
	}
	switch (op) {
	case BPF_ADD: return a + b;
	case BPF_SUB: return a - b;
	case BPF_MUL: return a * b;
	case BPF_OR:  return a | b;
	case BPF_AND: return a & b;
	case BPF_XOR: return a ^ b;
	case BPF_LSH: return a << (b & 63);
	case BPF_RSH: return a >> (b & 63);
	case BPF_ARSH: return (uint64_t)((int64_t)a >> (b & 63));
	case BPF_NEG: return -a;
	case BPF_MOV:
		if (off == 8) return (uint64_t)(int64_t)(int8_t)b;
		if (off == 16) return (uint64_t)(int64_t)(int16_t)b;
		if (off == 32) return (uint64_t)(int64_t)(int32_t)b;
		return b;
	case BPF_DIV:
		if (!b) return 0;
		if (off) return b == UINT64_MAX ? -a : (uint64_t)((int64_t)a / (int64_t)b);
		return a / b;
	case BPF_MOD:
		if (!b) return a;
		if (off) return b == UINT64_MAX ? 0 : (uint64_t)((int64_t)a % (int64_t)b);
		r = a % b;
		return r;
	}
	abort();
}

static const uint64_t vals[] = {
	0, 1, 2, 3, 7, 8, 31, 32, 63, 64, 0xff, 0x100, 0x8000, 0x7fffffff, 0x80000000,
	0xffffffff, 0x100000000ull, 0x123456789abcdef0ull, 0xfedcba9876543210ull,
	(uint64_t)-1, (uint64_t)-2, (uint64_t)-7, (uint64_t)INT64_MIN, (uint64_t)INT64_MAX,
	(uint64_t)-0x80000000ll, 0xffffffff80000000ull + 5,
};
#define NVALS ARRAY_LEN(vals)

/* dst/src register pairs that hit the x86 special cases: rax, rdx, rcx,
 * r8 (r5), rbx/r13 (r6/r7) and the same register on both sides. */
static const uint8_t pairs[][2] = {
	{ 1, 2 }, { 0, 3 }, { 3, 0 }, { 0, 0 }, { 3, 3 }, { 4, 1 }, { 1, 4 }, { 4, 4 },
	{ 5, 6 }, { 6, 7 }, { 7, 8 }, { 8, 9 }, { 9, 0 }, { 2, 2 }, { 0, 4 }, { 4, 3 },
	{ 3, 4 }, { 7, 7 }, { 0, 5 }, { 3, 1 },
};
#define NPAIRS ARRAY_LEN(pairs)

static uint64_t seed_of(int r) { return 0x0101010101010101ull * (uint64_t)(r + 1) + 0x1234; }

/* r0 = fold of r0..r9, so a clobbered bystander register shows. */
static void pb_fold(struct pb *p)
{
	for (int r = 1; r <= 9; r++) {
		pb_add(p, ALU64_IMM(BPF_MUL, 0, 31));
		pb_add(p, ALU64_REG(BPF_ADD, 0, r));
	}
	pb_add(p, EXIT());
}

static uint64_t model_fold(const uint64_t *reg)
{
	uint64_t r0 = reg[0];

	for (int r = 1; r <= 9; r++)
		r0 = r0 * 31 + reg[r];
	return r0;
}

/* One ALU instruction with all registers seeded; checks dst and that no
 * other register changed. */
static bool check_alu(struct bpf_insn op_insn, uint64_t a, uint64_t b, bool src_is_reg)
{
	struct pb p = { 0 };
	uint64_t reg[10], got;
	bool is64 = BPF_CLASS(op_insn.code) == BPF_ALU64;
	uint8_t d = op_insn.dst_reg, s = op_insn.src_reg;
	bool ok;

	for (int r = 0; r <= 9; r++) {
		reg[r] = seed_of(r);
		pb_lddw(&p, (uint8_t)r, reg[r]);
	}
	if (src_is_reg) {
		pb_lddw(&p, s, b);
		reg[s] = b;
	}
	pb_lddw(&p, d, a);
	reg[d] = a;
	if (src_is_reg)
		b = reg[s];
	else
		b = is64 ? (uint64_t)(int64_t)op_insn.imm : (uint32_t)op_insn.imm;
	pb_add(&p, op_insn);
	reg[d] = model_alu(is64, BPF_OP(op_insn.code), op_insn.off, reg[d], b);
	pb_fold(&p);
	ok = run_both(p.i, p.n, 0, 0, &got);
	if (ok && got != model_fold(reg)) {
		CHECK(0, "op 0x%02x off %d dst r%u src r%u a %#" PRIx64 " b %#" PRIx64
		      ": got %#" PRIx64 " want %#" PRIx64, op_insn.code, op_insn.off, d, s, a, b,
		      got, model_fold(reg));
		ok = false;
	}
	pb_free(&p);
	return ok;
}

static const uint8_t binops[] = {
	BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_MOD, BPF_OR, BPF_AND, BPF_XOR,
	BPF_LSH, BPF_RSH, BPF_ARSH, BPF_MOV,
};

TEST(alu_binops_reg_and_imm)
{
	unsigned k = 0;

	for (unsigned o = 0; o < sizeof(binops); o++)
		for (int signed_op = 0; signed_op < 2; signed_op++) {
			uint8_t op = binops[o];

			if (signed_op && op != BPF_DIV && op != BPF_MOD)
				continue;
			for (int w = 0; w < 2; w++)
				for (unsigned i = 0; i < NVALS; i++)
					for (unsigned j = 0; j < NVALS; j++) {
						uint8_t cls = w ? BPF_ALU64 : BPF_ALU;
						const uint8_t *pr = pairs[k++ % NPAIRS];
						struct bpf_insn x = INSN(cls | op | BPF_X, pr[0], pr[1],
									 signed_op, 0);
						struct bpf_insn kk = INSN(cls | op | BPF_K, pr[0], 0,
									  signed_op, (int32_t)vals[j]);
						uint64_t b = vals[j];

						if (pr[0] == pr[1])
							b = vals[i]; /* same register */
						if (!check_alu(x, vals[i], b, true) ||
						    !check_alu(kk, vals[i], 0, false))
							return;
					}
		}
}

TEST(alu_unary_neg_movsx)
{
	unsigned k = 0;

	for (unsigned i = 0; i < NVALS; i++)
		for (int w = 0; w < 2; w++) {
			uint8_t cls = w ? BPF_ALU64 : BPF_ALU;
			const uint8_t *pr = pairs[k++ % NPAIRS];
			struct bpf_insn neg = INSN(cls | BPF_NEG, pr[0], 0, 0, 0);

			if (!check_alu(neg, vals[i], 0, false))
				return;
			for (int bits = 8; bits <= 32; bits *= 2) {
				struct bpf_insn sx;

				if (!w && bits == 32)
					continue;
				pr = pairs[k++ % NPAIRS];
				sx = INSN(cls | BPF_MOV | BPF_X, pr[0], pr[1], bits, 0);
				if (!check_alu(sx, 0x5555, pr[0] == pr[1] ? 0x5555 : vals[i], true))
					return;
				if (pr[0] != pr[1] && !check_alu(sx, vals[i], vals[NVALS - 1 - i], true))
					return;
			}
		}
}

static uint64_t bswap_n(uint64_t v, int bits)
{
	switch (bits) {
	case 16: return __builtin_bswap16((uint16_t)v);
	case 32: return __builtin_bswap32((uint32_t)v);
	default: return __builtin_bswap64(v);
	}
}

TEST(alu_endian_and_bswap)
{
	for (unsigned i = 0; i < NVALS; i++)
		for (int bits = 16; bits <= 64; bits *= 2)
			for (int kind = 0; kind < 3; kind++) {
				/* 0: to-le (truncate), 1: to-be, 2: ALU64 bswap */
				uint8_t r = (uint8_t)(i % 10);
				struct bpf_insn prog[] = {
					LDDW(r, vals[i]),
					kind == 0 ? ENDIAN(BPF_TO_LE, r, bits) :
					kind == 1 ? ENDIAN(BPF_TO_BE, r, bits) : BSWAP(r, bits),
					MOV64_REG(0, r),
					EXIT(),
				};
				uint64_t want = kind == 0 ? (bits == 64 ? vals[i] :
						vals[i] & ((1ull << bits) - 1)) : bswap_n(vals[i], bits);
				uint64_t got;

				if (!run_both(prog, ARRAY_LEN(prog), 0, 0, &got))
					return;
				CHECK(got == want, "kind %d bits %d v %#" PRIx64 ": %#" PRIx64, kind, bits,
				      vals[i], got);
			}
}

/* ---- jumps -------------------------------------------------------------- */

static bool model_jmp(bool is64, uint8_t op, uint64_t a, uint64_t b)
{
	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	int64_t sa = is64 ? (int64_t)a : (int32_t)a, sb = is64 ? (int64_t)b : (int32_t)b;

	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSET: return (a & b) != 0;
	case BPF_JSGT: return sa > sb;
	case BPF_JSGE: return sa >= sb;
	case BPF_JSLT: return sa < sb;
	case BPF_JSLE: return sa <= sb;
	}
	abort();
}

TEST(jumps_all_conditions)
{
	static const uint8_t ops[] = { BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE,
				       BPF_JSET, BPF_JSGT, BPF_JSGE, BPF_JSLT, BPF_JSLE };

	for (unsigned o = 0; o < sizeof(ops); o++)
		for (int w = 0; w < 2; w++)
			for (unsigned i = 0; i < NVALS; i++)
				for (unsigned j = 0; j < NVALS; j += 2) {
					uint8_t cls = w ? BPF_JMP : BPF_JMP32;
					uint8_t d = (uint8_t)(1 + (i + j) % 9), s = (uint8_t)(1 + (d % 9));
					int32_t imm = (int32_t)vals[j];
					struct bpf_insn prog[] = {
						MOV64_IMM(0, 0),
						LDDW(d, vals[i]),
						LDDW(s, vals[j]),
						INSN(cls | ops[o] | BPF_X, d, s, 1, 0),
						JA(1),
						ALU64_IMM(BPF_OR, 0, 1),
						INSN(cls | ops[o] | BPF_K, d, 0, 1, imm),
						JA(1),
						ALU64_IMM(BPF_OR, 0, 2),
						EXIT(),
					};
					uint64_t bk = w ? (uint64_t)(int64_t)imm : (uint32_t)imm;
					uint64_t want = model_jmp(w, ops[o], vals[i], vals[j]) |
							(uint64_t)model_jmp(w, ops[o], vals[i], bk) << 1;
					uint64_t got;

					if (!run_both(prog, ARRAY_LEN(prog), 0, 0, &got))
						return;
					if (got != want) {
						CHECK(0, "jmp 0x%02x a %#" PRIx64 " b %#" PRIx64 ": %" PRIu64
						      " want %" PRIu64, cls | ops[o], vals[i], vals[j], got, want);
						return;
					}
				}
}

/* may_goto: the run's budget (core/run.h) is the same on every engine,
 * whole for each run, and the instruction leaves every register alone. */
#define MAY_GOTO(OFF) INSN(BPF_JMP | BPF_JCOND, 0, BPF_MAY_GOTO, OFF, 0)
TEST(may_goto_budget_and_registers)
{
	/* r0 counts fall-throughs until the budget is spent */
	static const struct bpf_insn count[] = {
		MOV64_IMM(0, 0), MAY_GOTO(2), ALU64_IMM(BPF_ADD, 0, 1), JA(-3), EXIT(),
	};
	/* then, the budget spent, a may_goto jumping back (off < 0) takes
	 * every round of a loop its count ends */
	static const struct bpf_insn back[] = {
		MOV64_IMM(0, 0), MAY_GOTO(2), ALU64_IMM(BPF_ADD, 0, 1), JA(-3),
		MOV64_IMM(1, 0), ALU64_IMM(BPF_ADD, 1, 1), INSN(BPF_JMP | BPF_JGE | BPF_K, 1, 0, 1, 5),
		MAY_GOTO(-3), ALU64_REG(BPF_ADD, 0, 1), EXIT(),
	};
	uint64_t got;

	for (int run = 0; run < 2; run++) {
		if (!run_both(count, ARRAY_LEN(count), 0, 0, &got))
			return;
		CHECK_EQ(got, (uint64_t)8 * 1024 * 1024, "run %d: fall-throughs", run);
	}
	if (run_both(back, ARRAY_LEN(back), 0, 0, &got))
		CHECK_EQ(got, (uint64_t)8 * 1024 * 1024 + 5, "backward may_goto");
	/* every register seeded, a may_goto after a zero-extending copy (no
	 * compare may be folded into it), a target past 128 bytes of code */
	{
		struct pb p = { 0 };
		uint64_t reg[10];

		for (int r = 0; r <= 9; r++) {
			reg[r] = seed_of(r);
			pb_lddw(&p, (uint8_t)r, reg[r]);
		}
		pb_add(&p, MOV32_REG(0, 1));
		reg[0] = (uint32_t)reg[1];
		pb_add(&p, MAY_GOTO(40));
		for (int k = 0; k < 40; k++)
			pb_add(&p, ALU64_IMM(BPF_ADD, 9, 0));
		pb_add(&p, MAY_GOTO(0));
		pb_fold(&p);
		if (run_both(p.i, p.n, 0, 0, &got))
			CHECK_EQ(got, model_fold(reg), "registers across may_goto");
		pb_free(&p);
	}
}

/* An ALU result tested against zero right after: the JIT may reuse the
 * ALU's flags, which is only right when the widths agree. */
TEST(jumps_on_alu_flags)
{
	static const uint8_t aops[] = { BPF_ADD, BPF_SUB, BPF_AND, BPF_OR, BPF_XOR };
	static const int32_t imms[] = { 1, -1, 0xff, 0x7fffffff, (int32_t)0x80000000 };

	for (unsigned a = 0; a < sizeof(aops); a++)
		for (int aw = 0; aw < 2; aw++)
			for (int jw = 0; jw < 2; jw++)
				for (unsigned i = 0; i < NVALS; i++)
					for (unsigned m = 0; m < ARRAY_LEN(imms); m++) {
						struct bpf_insn prog[] = {
							MOV64_IMM(0, 0),
							LDDW(3, vals[i]),
							INSN((aw ? BPF_ALU64 : BPF_ALU) | aops[a] | BPF_K, 3, 0, 0,
							     imms[m]),
							INSN((jw ? BPF_JMP : BPF_JMP32) | BPF_JEQ | BPF_K, 3, 0, 1, 0),
							MOV64_IMM(0, 1),
							EXIT(),
						};
						uint64_t v = model_alu(aw, aops[a], 0, vals[i],
								       aw ? (uint64_t)(int64_t)imms[m] :
									    (uint32_t)imms[m]);
						uint64_t want = jw ? v != 0 : (uint32_t)v != 0;
						uint64_t got;

						if (!run_both(prog, ARRAY_LEN(prog), 0, 0, &got))
							return;
						if (got != want) {
							CHECK(0, "alu 0x%02x w%d jmp w%d v %#" PRIx64 ": %" PRIu64,
							      aops[a], aw, jw, vals[i], got);
							return;
						}
					}
}

/* Forward and backward jumps over n instructions of 4 bytes each
 * (add rax, imm8), so the distance crosses the rel8 limit. */
TEST(jumps_near_rel8_boundary)
{
	for (int n = 20; n <= 45; n++) {
		struct pb p = { 0 };
		uint64_t got;

		/* forward: ja over n adds (taken unless r1 == 8), jeq over n adds */
		pb_add(&p, MOV64_IMM(0, 0));
		pb_add(&p, JMP_IMM(BPF_JEQ, 1, 8, 1));
		pb_add(&p, JA((int16_t)n));
		for (int k = 0; k < n; k++)
			pb_add(&p, ALU64_IMM(BPF_ADD, 0, 1));
		pb_add(&p, JMP_IMM(BPF_JEQ, 1, 7, (int16_t)n));
		for (int k = 0; k < n; k++)
			pb_add(&p, ALU64_IMM(BPF_ADD, 0, 100));
		/* backward: 3 iterations over n adds */
		pb_add(&p, MOV64_IMM(2, 3));
		for (int k = 0; k < n; k++)
			pb_add(&p, ALU64_IMM(BPF_ADD, 0, 1000));
		pb_add(&p, ALU64_IMM(BPF_SUB, 2, 1));
		pb_add(&p, JMP_IMM(BPF_JNE, 2, 0, (int16_t)-(n + 2)));
		/* gotol (JMP32|JA, offset in imm) */
		pb_add(&p, JMP_IMM(BPF_JEQ, 1, 9, 1));
		pb_add(&p, GOTOL(1));
		pb_add(&p, ALU64_IMM(BPF_ADD, 0, 7));
		pb_add(&p, EXIT());
		if (run_both(p.i, p.n, 9, 0, &got))
			CHECK(got == (uint64_t)3100 * n + 7, "n %d: %" PRIu64, n, got);
		if (run_both(p.i, p.n, 7, 0, &got))
			CHECK(got == (uint64_t)3000 * n, "n %d: %" PRIu64, n, got);
		if (run_both(p.i, p.n, 8, 0, &got))
			CHECK(got == (uint64_t)3101 * n, "n %d: %" PRIu64, n, got);
		pb_free(&p);
	}
}

/* ---- memory ------------------------------------------------------------- */

TEST(memory_loads_and_stores)
{
	/* r1 = memory (64 bytes); r7 (r13: needs a disp8 even for 0) and r0
	 * as bases too */
	struct bpf_insn prog[] = {
		MOV64_REG(7, 1),
		MOV64_REG(0, 1),
		ST(BPF_B, 1, 0, 0x81),
		ST(BPF_H, 1, 2, 0x8182),
		ST(BPF_W, 1, 4, (int32_t)0x81828384),
		ST(BPF_DW, 1, 8, -2),                 /* sign-extended imm */
		LDDW(2, 0x1122334455667788ull),
		STX(BPF_B, 7, 2, 16),
		STX(BPF_H, 7, 2, 18),
		STX(BPF_W, 0, 2, 20),
		STX(BPF_DW, 0, 2, 24),
		MOV64_REG(6, 2),                      /* rsi/ rbx byte registers */
		STX(BPF_B, 7, 6, 32),
		MOV64_REG(3, 10),
		STX(BPF_DW, 10, 2, -8),
		LDX(BPF_DW, 4, 3, -8),
		STX(BPF_DW, 1, 4, 40),
		LDX(BPF_B, 5, 1, 0),                  /* 0x81 */
		LDXSX(BPF_B, 8, 1, 0),                /* -127 */
		LDX(BPF_H, 9, 7, 2),
		LDXSX(BPF_H, 2, 7, 2),
		LDX(BPF_W, 3, 0, 4),
		LDXSX(BPF_W, 4, 0, 4),
		LDX(BPF_DW, 6, 1, 8),
		STX(BPF_DW, 1, 5, 48),
		STX(BPF_DW, 1, 8, 56),
		MOV64_REG(0, 9),
		ALU64_REG(BPF_XOR, 0, 2),
		ALU64_REG(BPF_XOR, 0, 3),
		ALU64_REG(BPF_XOR, 0, 4),
		ALU64_REG(BPF_XOR, 0, 6),
		EXIT(),
	};
	uint8_t mj[64] = { 0 }, mi[64] = { 0 }, want[64] = { 0 };
	struct bpfrt_prog *p = load(prog, ARRAY_LEN(prog), true);
	uint64_t rj, ri, v;

	REQUIRE(p, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_JIT, (uintptr_t)mj, 64, &rj) == 0);
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, (uintptr_t)mi, 64, &ri) == 0);
	bpfrt_prog_free(p);
	want[0] = 0x81;
	v = 0x8182; memcpy(want + 2, &v, 2);
	v = 0x81828384; memcpy(want + 4, &v, 4);
	v = (uint64_t)-2; memcpy(want + 8, &v, 8);
	v = 0x1122334455667788ull;
	memcpy(want + 16, &v, 1);
	memcpy(want + 18, &v, 2);
	memcpy(want + 20, &v, 4);
	memcpy(want + 24, &v, 8);
	memcpy(want + 32, &v, 1);
	memcpy(want + 40, &v, 8);
	v = 0x81; memcpy(want + 48, &v, 8);
	v = (uint64_t)-127; memcpy(want + 56, &v, 8);
	CHECK(!memcmp(mj, want, 64), "jit memory");
	CHECK(!memcmp(mi, want, 64), "interp memory");
	CHECK(rj == ri, "%#" PRIx64 " %#" PRIx64, rj, ri);
	CHECK(rj == (0x8182ull ^ 0xffffffffffff8182ull ^ 0x81828384ull ^
		     0xffffffff81828384ull ^ (uint64_t)-2), "%#" PRIx64, rj);
}

/* ---- atomics ------------------------------------------------------------ */

/* Register-file model of one atomic instruction and the fold after it. */
static uint64_t model_atomic_prog(int32_t op, bool is64, uint8_t s, uint8_t b, uint64_t *mem,
				  uint64_t src, uint64_t r0, uint64_t ptr)
{
	uint64_t reg[10] = { 0 };
	uint64_t mask = is64 ? UINT64_MAX : UINT32_MAX;
	uint64_t old, v, nv;

	reg[1] = ptr;
	reg[b] = ptr;
	if (b != 0)
		reg[0] = r0;
	reg[s] = src;
	reg[9] = 0x9999;
	old = *mem & mask;
	v = reg[s] & mask;
	nv = old;
	switch (op & ~BPF_FETCH) {
	case BPF_ADD: nv = old + v; break;
	case BPF_OR:  nv = old | v; break;
	case BPF_AND: nv = old & v; break;
	case BPF_XOR: nv = old ^ v; break;
	}
	if (op == BPF_XCHG) {
		nv = v;
		reg[s] = old;
	} else if (op == BPF_CMPXCHG) {
		nv = old == (reg[0] & mask) ? v : old;
		reg[0] = old;
	} else if (op & BPF_FETCH) {
		reg[s] = old;
	}
	*mem = (*mem & ~mask) | (nv & mask);
	reg[8] = reg[s] * 3;
	reg[0] ^= reg[8];
	reg[9] *= 5;
	reg[0] ^= reg[9];
	return reg[0];
}

TEST(atomics_all_ops)
{
	static const int32_t ops[] = {
		BPF_ADD, BPF_OR, BPF_AND, BPF_XOR,
		BPF_ADD | BPF_FETCH, BPF_OR | BPF_FETCH, BPF_AND | BPF_FETCH, BPF_XOR | BPF_FETCH,
		BPF_XCHG, BPF_CMPXCHG,
	};
	/* {src, base}: base r0 (rax, also the cmpxchg comparand), src r0,
	 * src rdx (r3), base rcx (r4), r13 as base */
	static const uint8_t regs[][2] = { { 2, 1 }, { 0, 1 }, { 3, 4 }, { 1, 0 }, { 6, 7 }, { 0, 3 } };
	static const uint64_t mems[] = { 0x00000000fffffff0ull, 0x8000000012345678ull, 7 };
	static const uint64_t srcs[] = { 0xffffffff0000000full, 7, 0x8000000012345678ull };

	for (unsigned o = 0; o < ARRAY_LEN(ops); o++)
		for (int w = 0; w < 2; w++)
			for (unsigned r = 0; r < ARRAY_LEN(regs); r++)
				for (unsigned m = 0; m < ARRAY_LEN(mems); m++) {
					uint8_t s = regs[r][0], b = regs[r][1];
					uint64_t src = srcs[(m + r) % 3], r0 = mems[(m + 1) % 3];
					struct pb p = { 0 };
					struct bpfrt_prog *pr;

					if (ops[o] == BPF_CMPXCHG && m == 2)
						r0 = mems[m] | 0xabc00000000ull; /* succeeds when 32-bit */
					if (b != 1)
						pb_add(&p, MOV64_REG(b, 1));
					if (b != 0)
						pb_lddw(&p, 0, r0);
					pb_lddw(&p, s, src);
					pb_lddw(&p, 9, 0x9999);
					pb_add(&p, ATOMIC(w ? BPF_DW : BPF_W, ops[o], b, s, 0));
					pb_add(&p, MOV64_REG(8, s));
					pb_add(&p, ALU64_IMM(BPF_MUL, 8, 3));
					pb_add(&p, ALU64_REG(BPF_XOR, 0, 8));
					pb_add(&p, ALU64_IMM(BPF_MUL, 9, 5));
					pb_add(&p, ALU64_REG(BPF_XOR, 0, 9));
					pb_add(&p, EXIT());
					pr = load(p.i, p.n, true);
					pb_free(&p);
					REQUIRE(pr, "%s", bpfrt_last_error());
					for (int mode = 0; mode < 2; mode++) {
						uint64_t mem[2] = { mems[m], 0x5a5a }, want_mem = mems[m];
						uint64_t got = 0, want;

						want = model_atomic_prog(ops[o], w, s, b, &want_mem, src, r0,
									 (uintptr_t)mem);
						CHECK(bpfrt_prog_run(pr, mode ? BPFRT_EXEC_INTERP : BPFRT_EXEC_JIT,
								     (uintptr_t)mem, 16, &got) == 0);
						CHECK(got == want && mem[0] == want_mem && mem[1] == 0x5a5a,
						      "%s op %#x w%d src r%u base r%u: r0 %#" PRIx64 " want %#"
						      PRIx64 ", mem %#" PRIx64 " want %#" PRIx64,
						      mode ? "interp" : "jit", ops[o], w, s, b, got, want,
						      mem[0], want_mem);
					}
					bpfrt_prog_free(pr);
					if (tl_failed())
						return;
				}
}

/* ---- calls -------------------------------------------------------------- */

static uint64_t test_helper(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return (a + b * 3 + c * 5 + d * 7 + e * 11) ^ 0x55;
}

static uint64_t callx_helper(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a * 1000 + b;
}

static void register_helpers(void)
{
	struct bpfrt_helper h = { .name = "jit_test_helper", .fn = test_helper,
				  .ret = BPFRT_RET_INTEGER };
	struct bpfrt_helper x = { .name = "jit_callx_helper", .fn = callx_helper,
				  .ret = BPFRT_RET_INTEGER };

	for (int i = 0; i < 5; i++)
		h.args[i] = x.args[i] = BPFRT_ARG_ANYTHING;
	bpfrt_helper_register(HELPER_ID, &h);
	bpfrt_helper_register(CALLX_ID, &x);
	bpfrt_helper_unregister(UNREG_ID);
}

TEST(helper_call_keeps_callee_saved)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(6, 6), MOV64_IMM(7, 7), MOV64_IMM(8, 8), MOV64_IMM(9, 9),
		MOV64_IMM(1, 1), MOV64_IMM(2, 2), MOV64_IMM(3, 3), MOV64_IMM(4, 4), MOV64_IMM(5, 5),
		CALL_HELPER(HELPER_ID),
		ALU64_IMM(BPF_MUL, 0, 10), ALU64_REG(BPF_ADD, 0, 6),
		ALU64_IMM(BPF_MUL, 0, 10), ALU64_REG(BPF_ADD, 0, 7),
		ALU64_IMM(BPF_MUL, 0, 10), ALU64_REG(BPF_ADD, 0, 8),
		ALU64_IMM(BPF_MUL, 0, 10), ALU64_REG(BPF_ADD, 0, 9),
		EXIT(),
	};
	uint64_t got;

	register_helpers();
	if (run_both(prog, ARRAY_LEN(prog), 0, 0, &got))
		CHECK(got == test_helper(1, 2, 3, 4, 5) * 10000 + 6789, "%" PRIu64, got);
}

/* main -> f1 -> ... -> f7: eight frames, each with its own stack slots
 * and r6/r7 that must survive the calls below. */
TEST(local_calls_eight_deep)
{
	struct pb p = { 0 };
	uint64_t got, want = 1;
	size_t start[8];

	for (int k = 0; k < 8; k++) {
		int16_t slot = (int16_t)(-8 * (k + 1) * 4);

		start[k] = p.n;
		pb_add(&p, MOV64_IMM(6, 100 + k));
		pb_add(&p, STX(BPF_DW, 10, 6, slot));
		pb_add(&p, ST(BPF_DW, 10, -8, 7 * k));
		pb_add(&p, MOV64_IMM(7, 1000 * k));
		if (k < 7)
			pb_add(&p, CALL_LOCAL(0)); /* patched below */
		else
			pb_add(&p, MOV64_IMM(0, 1));
		pb_add(&p, LDX(BPF_DW, 2, 10, slot));
		pb_add(&p, LDX(BPF_DW, 3, 10, -8));
		pb_add(&p, ALU64_IMM(BPF_MUL, 0, 3));
		pb_add(&p, ALU64_REG(BPF_ADD, 0, 2));
		pb_add(&p, ALU64_REG(BPF_ADD, 0, 3));
		pb_add(&p, ALU64_REG(BPF_ADD, 0, 6));
		pb_add(&p, ALU64_REG(BPF_ADD, 0, 7));
		pb_add(&p, EXIT());
	}
	for (int k = 0; k < 7; k++)
		p.i[start[k] + 4].imm = (int32_t)(start[k + 1] - (start[k] + 4) - 1);
	for (int k = 7; k >= 0; k--)
		want = want * 3 + (100 + k) + 7 * k + (100 + k) + 1000 * k;

	struct bpfrt_prog *pr = load(p.i, p.n, true);

	REQUIRE(pr, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_subprog_cnt(pr) == 8);
	bpfrt_prog_free(pr);
	if (run_both(p.i, p.n, 0, 0, &got))
		CHECK(got == want, "%" PRIu64 " want %" PRIu64, got, want);
	pb_free(&p);
}

TEST(callx_valid_and_invalid)
{
	struct bpf_insn good[] = {
		MOV64_IMM(1, 4), MOV64_IMM(2, 2), MOV64_IMM(3, CALLX_ID),
		CALLX(3),
		EXIT(),
	};
	/* the bad callx sits two calls deep, so the abort unwinds frames */
	struct bpf_insn bad[] = {
		MOV64_IMM(6, 66),
		MOV64_REG(2, 1),
		CALL_LOCAL(2),
		ALU64_REG(BPF_ADD, 0, 6),
		EXIT(),
		/* f1 */
		MOV64_IMM(6, 1), ST(BPF_DW, 10, -8, 1),
		CALL_LOCAL(1),
		EXIT(),
		/* f2 */
		MOV64_IMM(7, 2), ST(BPF_DW, 10, -16, 2),
		MOV64_IMM(1, 5),
		CALLX(2),
		EXIT(),
	};
	struct bpfrt_prog *pg, *pb;
	uint64_t r = 0;

	register_helpers();
	pg = load(good, ARRAY_LEN(good), true);
	pb = load(bad, ARRAY_LEN(bad), true);
	REQUIRE(pg && pb, "%s", bpfrt_last_error());
	for (int i = 0; i < 50; i++) {
		volatile uint64_t canary = 0x1234 + (uint64_t)i;

		CHECK(bpfrt_prog_run(pg, BPFRT_EXEC_JIT, 0, 0, &r) == 0 && r == 4002);
		CHECK(bpfrt_prog_run(pb, BPFRT_EXEC_JIT, UNREG_ID, 0, &r) == -EINVAL);
		CHECK(bpfrt_prog_run(pb, BPFRT_EXEC_JIT, 5000, 0, &r) == -EINVAL);
		CHECK(bpfrt_prog_run(pb, BPFRT_EXEC_JIT, (uint64_t)-1, 0, &r) == -EINVAL);
		CHECK(bpfrt_prog_run(pb, BPFRT_EXEC_INTERP, UNREG_ID, 0, &r) == -EINVAL);
		CHECK(strstr(bpfrt_last_error(), "callx"), "%s", bpfrt_last_error());
		/* a valid id through the same path returns normally */
		CHECK(bpfrt_prog_run(pb, BPFRT_EXEC_JIT, CALLX_ID, 0, &r) == 0 && r == 5000 + CALLX_ID + 66,
		      "%" PRIu64, r);
		CHECK(canary == 0x1234 + (uint64_t)i);
		if (tl_failed())
			break;
	}
	bpfrt_prog_free(pg);
	bpfrt_prog_free(pb);
}

/* A helper that runs another program whose callx aborts; the outer
 * program's own abort afterwards must still unwind to the outer entry. */
static struct bpfrt_prog *nested_prog;
#define NESTED_ID 303

static uint64_t nested_helper(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	uint64_t r = 0;
	int err = bpfrt_prog_run(nested_prog, BPFRT_EXEC_JIT, UNREG_ID, 0, &r);

	return (uint64_t)(int64_t)err;
}

TEST(callx_abort_in_nested_run)
{
	struct bpf_insn inner[] = {
		MOV64_IMM(6, 1),
		CALLX(1),
		EXIT(),
	};
	struct bpf_insn outer[] = {
		MOV64_REG(7, 1),
		MOV64_IMM(6, 5),
		CALL_HELPER(NESTED_ID),
		MOV64_REG(8, 0),                 /* the inner run's result */
		JMP_IMM(BPF_JEQ, 7, 0, 2),
		CALLX(7),                        /* aborts when r1 was unregistered */
		EXIT(),
		MOV64_REG(0, 8),
		EXIT(),
	};
	struct bpfrt_helper h = { .name = "jit_nested", .fn = nested_helper,
				  .ret = BPFRT_RET_INTEGER };
	struct bpfrt_prog *po;
	uint64_t r = 0;

	register_helpers();
	h.args[0] = BPFRT_ARG_ANYTHING;
	REQUIRE(bpfrt_helper_register(NESTED_ID, &h) == 0, "%s", bpfrt_last_error());
	nested_prog = load(inner, ARRAY_LEN(inner), true);
	po = load(outer, ARRAY_LEN(outer), true);
	REQUIRE(nested_prog && po, "%s", bpfrt_last_error());
	for (int i = 0; i < 20; i++) {
		CHECK(bpfrt_prog_run(po, BPFRT_EXEC_JIT, UNREG_ID, 0, &r) == -EINVAL);
		CHECK(bpfrt_prog_run(nested_prog, BPFRT_EXEC_JIT, UNREG_ID, 0, &r) == -EINVAL);
	}
	bpfrt_prog_free(po);
	bpfrt_prog_free(nested_prog);
	nested_prog = NULL;
	bpfrt_helper_unregister(NESTED_ID);
}

/* ---- image size, W^X, listing ------------------------------------------ */

TEST(image_larger_than_64k)
{
	struct pb p = { 0 };
	uint64_t want = 0, got;
	struct bpfrt_prog *pr;
	size_t len;
	const int n = 7000;

	/* if r1 == 1 skip the first half with one long forward jump */
	pb_add(&p, MOV64_IMM(0, 0));
	pb_add(&p, JMP_IMM(BPF_JEQ, 1, 1, (int16_t)(n / 2 * 3)));
	for (int k = 0; k < n; k++) {
		uint64_t v = 0x0123456789abcdefull * (uint64_t)(k + 1);

		pb_lddw(&p, 2, v);
		pb_add(&p, ALU64_REG(BPF_XOR, 0, 2));
		want ^= v;
	}
	pb_add(&p, EXIT());
	pr = load(p.i, p.n, true);
	REQUIRE(pr, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_jited(pr, &len) && len > 65536, "%zu bytes", len);
	bpfrt_prog_free(pr);
	if (run_both(p.i, p.n, 0, 0, &got))
		CHECK(got == want);
	{
		uint64_t half = 0;

		for (int k = n / 2; k < n; k++)
			half ^= 0x0123456789abcdefull * (uint64_t)(k + 1);
		if (run_both(p.i, p.n, 1, 0, &got))
			CHECK(got == half);
	}
	pb_free(&p);
}

TEST(no_writable_executable_mapping)
{
	struct bpf_insn prog[] = { MOV64_IMM(0, 42), EXIT() };
	struct bpfrt_prog *pr = load(prog, ARRAY_LEN(prog), true);
	char line[512];
	FILE *f;
	uint64_t r;

	REQUIRE(pr, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_run(pr, BPFRT_EXEC_JIT, 0, 0, &r) == 0 && r == 42);
	f = fopen("/proc/self/maps", "r");
	REQUIRE(f);
	while (fgets(line, sizeof(line), f)) {
		char perms[8] = "";

		if (sscanf(line, "%*s %7s", perms) == 1)
			CHECK(!(perms[1] == 'w' && perms[2] == 'x'), "W+X mapping: %s", line);
	}
	fclose(f);
	bpfrt_prog_free(pr);
}

TEST(dump_jited_listing)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(0, 1),
		MOV64_IMM(2, 3),
		ALU64_REG(BPF_LSH, 0, 2),
		ALU64_IMM(BPF_DIV, 0, 3),
		ST(BPF_DW, 10, -8, 5),
		ATOMIC(BPF_DW, BPF_ADD, 10, 0, -8),
		LDX(BPF_DW, 0, 10, -8),
		CALL_LOCAL(1),
		EXIT(),
		MOV64_IMM(0, 9),
		EXIT(),
	};
	struct bpfrt_prog *pr;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

#ifndef __x86_64__
	SKIP("expects x86-64 mnemonics; test_arm64_jit and test_riscv64_jit check theirs");
#endif
	pr = load(prog, ARRAY_LEN(prog), true);
	REQUIRE(pr, "%s", bpfrt_last_error());
	text = jited_listing(pr);
	REQUIRE(text);
	CHECK(strstr(text, "prologue"));
	CHECK(strstr(text, "push"));
	CHECK(strstr(text, "ret"));
	CHECK(strstr(text, "lock add"), "%s", text);
	CHECK(strstr(text, "call"));
	CHECK(strstr(text, "div") || strstr(text, "mul"), "%s", text);
	CHECK(strstr(text, "shlx") || strstr(text, "shl"), "%s", text);
	CHECK(strstr(text, "exit"));
	CHECK(strstr(text, "subprog 1"));
	free(text);
	bpfrt_prog_free(pr);

	/* an interpreter-only program has no listing */
	pr = load(prog, ARRAY_LEN(prog), false);
	REQUIRE(pr);
	f = open_memstream(&text, &len);
	CHECK(bpfrt_prog_dump_jited(pr, f) < 0);
	fclose(f);
	free(text);
	bpfrt_prog_free(pr);
}

/* ---- randomized fold patterns -------------------------------------------- */

/* The JIT fuses instruction patterns (zero/sign-extension idioms, copies
 * feeding compares or shift counts, rotates, andn, accumulator copies,
 * memory read-modify-write, lea) when liveness allows. Random programs made
 * of those patterns, with conditional skips and loops, must agree with the
 * interpreter on r0 and on memory. r1 is the memory pointer and r9 the loop
 * counter; neither is picked at random. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint8_t rreg(void)
{
	static const uint8_t regs[] = { 0, 2, 3, 4, 5, 6, 7, 8 };

	return regs[rnd() % ARRAY_LEN(regs)];
}

static uint8_t rreg_not(uint8_t r)
{
	uint8_t x;

	do
		x = rreg();
	while (x == r);
	return x;
}

static int32_t rimm(void)
{
	switch (rnd() % 4) {
	case 0: return (int32_t)(rnd() % 64);
	case 1: return -(int32_t)(rnd() % 64);
	case 2: return (int32_t)rnd();
	default: return (int32_t)(rnd() % 2 ? 0xff : 0x7fffffff);
	}
}

static void gen_snippet(struct pb *p)
{
	static const uint8_t ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND,
				       BPF_LSH, BPF_RSH, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH };
	static const uint8_t rmw_ops[] = { BPF_ADD, BPF_SUB, BPF_OR, BPF_AND, BPF_XOR };
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	uint8_t d = rreg(), s = rreg_not(d), t = rreg_not(d);
	uint8_t cls = rnd() % 2 ? BPF_ALU64 : BPF_ALU;

	switch (rnd() % 12) {
	case 0:
		pb_lddw(p, d, rnd());
		break;
	case 1: {
		uint8_t op = ops[rnd() % sizeof(ops)];
		int32_t imm = rimm();

		if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
			imm &= cls == BPF_ALU64 ? 63 : 31;
		if (rnd() % 2)
			pb_add(p, INSN(cls | op | BPF_K, d, 0, 0, imm));
		else
			pb_add(p, INSN(cls | op | BPF_X, d, s, 0, 0));
		break;
	}
	case 2: /* extension idioms */
		if (rnd() % 3)
			pb_add(p, MOV64_REG(d, s));
		pb_add(p, ALU64_IMM(BPF_LSH, d, 32));
		pb_add(p, ALU64_IMM(rnd() % 2 ? BPF_RSH : BPF_ARSH, d, 32));
		break;
	case 3: /* masked copy as a shift count */
		pb_add(p, INSN(cls | BPF_MOV | BPF_X, t, s, 0, 0));
		pb_add(p, INSN(cls | BPF_AND | BPF_K, t, 0, 0, rnd() % 2 ? 63 : rnd() % 2 ? 31 : 0xff));
		pb_add(p, INSN((rnd() % 2 ? BPF_ALU64 : BPF_ALU) |
			       (rnd() % 3 == 0 ? BPF_LSH : rnd() % 2 ? BPF_RSH : BPF_ARSH) | BPF_X,
			       d, t, 0, 0));
		break;
	case 4: { /* rotate */
		int k = 1 + (int)(rnd() % 63);

		pb_add(p, MOV64_REG(t, d));
		pb_add(p, ALU64_IMM(BPF_RSH, t, k));
		pb_add(p, ALU64_IMM(BPF_LSH, d, 64 - k));
		pb_add(p, ALU64_REG(BPF_OR, d, t));
		break;
	}
	case 5: /* andn */
		pb_add(p, MOV64_REG(d, s));
		pb_add(p, ALU64_IMM(BPF_XOR, d, -1));
		pb_add(p, ALU64_IMM(BPF_AND, d, rimm()));
		break;
	case 6: { /* accumulator copy */
		static const uint8_t cops[] = { BPF_ADD, BPF_AND, BPF_OR, BPF_XOR, BPF_MUL };
		uint8_t u = rreg_not(d);

		pb_add(p, ALU64_REG(cops[rnd() % sizeof(cops)], d, s));
		if (u != s && rnd() % 2)
			pb_add(p, ALU64_IMM(BPF_ADD, u, 3));
		pb_add(p, MOV64_REG(s, d));
		if (rnd() % 2)
			pb_lddw(p, d, rnd()); /* d dead: the copy may go */
		break;
	}
	case 7: { /* memory read-modify-write */
		uint8_t sz = sizes[rnd() % 4];
		int16_t off = (int16_t)((rnd() % 8) * 8);
		uint8_t op = rmw_ops[rnd() % sizeof(rmw_ops)];

		pb_add(p, LDX(sz, d, 1, off));
		if (rnd() % 2)
			pb_add(p, INSN((sz == BPF_DW ? BPF_ALU64 : cls) | op | BPF_X, d, s, 0, 0));
		else
			pb_add(p, INSN((sz == BPF_DW ? BPF_ALU64 : cls) | op | BPF_K, d, 0, 0, rimm()));
		pb_add(p, STX(sz, 1, d, off));
		if (rnd() % 2)
			pb_add(p, MOV64_IMM(d, 1)); /* d dead */
		break;
	}
	case 8: /* lea shapes */
		pb_add(p, INSN(cls | BPF_MOV | BPF_X, d, s, 0, 0));
		pb_add(p, INSN(cls | (rnd() % 2 ? BPF_ADD : BPF_SUB) | BPF_K, d, 0, 0, rimm()));
		if (rnd() % 2)
			pb_add(p, INSN(cls | BPF_ADD | BPF_X, d, t, 0, 0));
		break;
	case 9: /* stack round trip */
		pb_add(p, STX(BPF_DW, 10, d, -8 * (int16_t)(1 + rnd() % 8)));
		pb_add(p, LDX(sizes[rnd() % 4], s, 10, -8 * (int16_t)(1 + rnd() % 8)));
		break;
	case 10: /* zero-extended copy compared right away */
		if (rnd() % 2) {
			pb_add(p, MOV32_REG(t, s));
		} else {
			pb_add(p, MOV64_REG(t, s));
			pb_add(p, ALU64_IMM(BPF_LSH, t, 32));
			pb_add(p, ALU64_IMM(BPF_RSH, t, 32));
		}
		break;
	default:
		pb_add(p, INSN(cls | BPF_NEG, d, 0, 0, 0));
	}
}

static void gen_cond_jump(struct pb *p, int16_t off)
{
	static const uint8_t jops[] = { BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE,
					BPF_JSET, BPF_JSGT, BPF_JSGE, BPF_JSLT, BPF_JSLE };
	uint8_t cls = rnd() % 2 ? BPF_JMP : BPF_JMP32, op = jops[rnd() % sizeof(jops)];
	uint8_t d = rreg(), s = rreg();

	if (rnd() % 2) {
		/* compare zero-extended copies, the shape clang emits */
		uint8_t a = rreg(), b = rreg_not(a);

		pb_add(p, MOV32_REG(a, d));
		pb_add(p, MOV32_REG(b, s));
		d = a;
		s = b;
	}
	if (rnd() % 2)
		pb_add(p, INSN(cls | op | BPF_K, d, 0, off, rnd() % 2 ? (int32_t)(rnd() % 100) : rimm()));
	else
		pb_add(p, INSN(cls | op | BPF_X, d, s, off, 0));
}

static void gen_program(struct pb *p, int snippets)
{
	for (int r = 0; r <= 9; r++)
		if (r != 1)
			pb_lddw(p, (uint8_t)r, rnd());
	for (int16_t off = -64; off < 0; off += 8)
		pb_add(p, STX(BPF_DW, 10, 0, off));
	for (int k = 0; k < snippets; k++) {
		struct pb body = { 0 };
		int shape = (int)(rnd() % 6);

		gen_snippet(&body);
		if (shape == 0) {
			/* if (cond) skip the snippet */
			gen_cond_jump(p, (int16_t)body.n);
		} else if (shape == 1) {
			/* if (cond) run it, else jump over: jcc +1; ja +n */
			gen_cond_jump(p, 1);
			pb_add(p, JA((int16_t)body.n));
		} else if (shape == 2) {
			/* a short counted loop around it */
			size_t head;

			pb_add(p, MOV64_IMM(9, 1 + (int32_t)(rnd() % 4)));
			head = p->n;
			for (size_t i = 0; i < body.n; i++)
				pb_add(p, body.i[i]);
			pb_add(p, ALU64_IMM(BPF_SUB, 9, 1));
			pb_add(p, JMP_IMM(BPF_JNE, 9, 0, (int16_t)-(int)(p->n + 1 - head)));
			pb_free(&body);
			continue;
		}
		for (size_t i = 0; i < body.n; i++)
			pb_add(p, body.i[i]);
		pb_free(&body);
	}
	/* every register counts */
	for (int r = 2; r <= 8; r++) {
		pb_add(p, ALU64_IMM(BPF_MUL, 0, 31));
		pb_add(p, ALU64_REG(BPF_ADD, 0, r));
	}
	pb_add(p, EXIT());
}

TEST(random_fold_patterns_match_interpreter)
{
	for (int iter = 0; iter < 3000; iter++) {
		struct pb p = { 0 };
		struct bpfrt_prog *pr;
		uint8_t mj[64], mi[64];
		uint64_t rj = 0, ri = 0;
		uint64_t seed = rng_state;

		gen_program(&p, 4 + (int)(rnd() % 24));
		pr = load(p.i, p.n, true);
		if (!pr) {
			CHECK(0, "iter %d (seed %#" PRIx64 "): %s", iter, seed, bpfrt_last_error());
			pb_free(&p);
			return;
		}
		for (int k = 0; k < 64; k++)
			mj[k] = mi[k] = (uint8_t)(k * 37 + iter);
		CHECK(bpfrt_prog_run(pr, BPFRT_EXEC_JIT, (uintptr_t)mj, 64, &rj) == 0);
		CHECK(bpfrt_prog_run(pr, BPFRT_EXEC_INTERP, (uintptr_t)mi, 64, &ri) == 0);
		CHECK(rj == ri, "iter %d (seed %#" PRIx64 "): jit %#" PRIx64 " interp %#" PRIx64,
		      iter, seed, rj, ri);
		CHECK(!memcmp(mj, mi, 64), "iter %d (seed %#" PRIx64 "): memory differs", iter, seed);
		if (tl_failed()) {
			bpfrt_disasm(p.i, p.n, stdout);
			bpfrt_prog_dump_jited(pr, stdout);
		}
		bpfrt_prog_free(pr);
		pb_free(&p);
		if (tl_failed())
			return;
	}
}
