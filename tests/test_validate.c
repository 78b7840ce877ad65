/* Structural validator: one case per rejection reason, accepted edge
 * cases, subprogram/stack numbers, a 1M-instruction program and the
 * conformance suite's unused-field negatives. */
#include "testlib.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "core/env.h"
#include "core/prog.h"
#include "helpers/helpers.h"
#include "verifier/validate.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HELPER_ID 5

static uint64_t dummy_helper(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a + b + c + d + e;
}

__attribute__((constructor)) static void register_test_helper(void)
{
	static const struct bpfrt_helper h = { .name = "test_helper", .fn = dummy_helper };

	bpfrt_helper_register(HELPER_ID, &h);
}

static int load(const struct bpf_insn *insns, size_t n, struct bpfrt_prog **p)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "t");

	return bpfrt_prog_load(insns, n, &opts, p);
}

/* Loads, expects rejection with err, an error naming "insn pc:" and word. */
static void expect_reject_at(const struct bpf_insn *insns, size_t n, int err,
			     unsigned pc, const char *word, int line)
{
	struct bpfrt_prog *p = NULL;
	char where[32];
	int rc = load(insns, n, &p);
	const char *msg = bpfrt_last_error();

	snprintf(where, sizeof(where), "insn %u:", pc);
	if (rc != err)
		tl_fail(__FILE__, line, "expected %d, got %d (%s)", err, rc, msg);
	else if (!strstr(msg, where))
		tl_fail(__FILE__, line, "message lacks \"%s\": %s", where, msg);
	else if (!strstr(msg, word))
		tl_fail(__FILE__, line, "message lacks \"%s\": %s", word, msg);
	if (p) {
		tl_fail(__FILE__, line, "program object returned on failure");
		bpfrt_prog_free(p);
	}
}

#define REJECT(arr, pc, word) expect_reject_at(arr, ARRAY_LEN(arr), -EINVAL, pc, word, __LINE__)
/* Single instruction followed by exit. */
#define REJECT1(insn, word) do {                                          \
		const struct bpf_insn a_[] = { insn, EXIT() };            \
		REJECT(a_, 0, word);                                      \
	} while (0)

static struct bpfrt_prog *expect_accept_at(const struct bpf_insn *insns, size_t n, int line)
{
	struct bpfrt_prog *p = NULL;
	int rc = load(insns, n, &p);

	if (rc != 0)
		tl_fail(__FILE__, line, "rejected (%d): %s", rc, bpfrt_last_error());
	return rc ? NULL : p;
}

#define ACCEPT(arr) bpfrt_prog_free(expect_accept_at(arr, ARRAY_LEN(arr), __LINE__))
#define ACCEPT1(insn) do {                                                \
		const struct bpf_insn a_[] = { MOV64_IMM(0, 0), insn, EXIT() }; \
		ACCEPT(a_);                                               \
	} while (0)

/* ---- opcodes -------------------------------------------------------------- */

TEST(rejects_unknown_opcodes)
{
	REJECT1(INSN(BPF_ALU | 0xe0 | BPF_K, 1, 0, 0, 0), "unknown opcode 0xe4");
	REJECT1(INSN(BPF_ALU64 | 0xf0 | BPF_X, 1, 2, 0, 0), "unknown opcode 0xff");
	REJECT1(INSN(BPF_ALU64 | BPF_END | BPF_X, 1, 0, 0, 16), "unknown opcode 0xdf");
	REJECT1(INSN(BPF_ALU64 | BPF_NEG | BPF_X, 1, 0, 0, 0), "unknown opcode 0x8f");
	REJECT1(INSN(BPF_LDX | BPF_DW | BPF_MEMSX, 1, 2, 0, 0), "unknown opcode 0x99");
	REJECT1(INSN(BPF_LDX | BPF_W | BPF_IMM, 1, 2, 0, 0), "unknown opcode");
	REJECT1(INSN(BPF_ST | BPF_DW | BPF_ATOMIC, 1, 0, 0, 0), "unknown opcode");
	REJECT1(INSN(BPF_STX | BPF_W | BPF_MEMSX, 1, 2, 0, 0), "unknown opcode");
	REJECT1(INSN(BPF_LD | BPF_W | BPF_IMM, 1, 0, 0, 0), "unknown opcode 0x00");
	REJECT1(INSN(BPF_JMP32 | BPF_CALL, 0, 0, 0, HELPER_ID), "unknown opcode 0x86");
	REJECT1(INSN(BPF_JMP32 | BPF_EXIT, 0, 0, 0, 0), "unknown opcode 0x96");
	REJECT1(INSN(BPF_JMP | BPF_JCOND, 0, 1, 0, 0), "unknown opcode 0xe5 with src_reg 1");
	REJECT1(INSN(BPF_JMP32 | BPF_JCOND, 0, 0, 0, 0), "unknown opcode 0xe6");
	REJECT1(INSN(BPF_JMP | BPF_JCOND | BPF_X, 0, 0, 0, 0), "unknown opcode 0xed");
	REJECT1(INSN(BPF_JMP | 0xf0, 1, 0, 0, 0), "unknown opcode 0xf5");
	REJECT1(INSN(BPF_JMP | BPF_JA | BPF_X, 0, 0, 0, 0), "unknown opcode 0x0d");
	REJECT1(INSN(BPF_JMP | BPF_EXIT | BPF_X, 0, 0, 0, 0), "unknown opcode 0x9d");
}

/* may_goto: src_reg BPF_MAY_GOTO, dst_reg and imm reserved, off a jump
 * offset checked as any other. */
TEST(may_goto_encodings)
{
	ACCEPT1(INSN(BPF_JMP | BPF_JCOND, 0, 0, 0, 0));
	ACCEPT1(INSN(BPF_JMP | BPF_JCOND, 0, 0, -1, 0));
	REJECT1(INSN(BPF_JMP | BPF_JCOND, 1, 0, 0, 0), "reserved field dst_reg must be 0 for may_goto");
	REJECT1(INSN(BPF_JMP | BPF_JCOND, 0, 0, 0, 7), "reserved field imm must be 0 for may_goto");
	REJECT1(INSN(BPF_JMP | BPF_JCOND, 0, 0, 5, 0), "jump out of range");
	REJECT1(INSN(BPF_JMP | BPF_JCOND, 0, 0, -3, 0), "jump out of range");
}

/* Legacy packet loads validate (their semantics are the verifier's and
 * the rewrite's: tests/test_ld_abs.c); Linux's encoding rules hold. */
TEST(legacy_packet_access_encodings)
{
	const struct bpf_insn abs[] = { MOV64_REG(6, 1), INSN(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0, 0),
					EXIT() };
	const struct bpf_insn ind[] = { MOV64_REG(6, 1), MOV64_IMM(1, 0),
					INSN(BPF_LD | BPF_B | BPF_IND, 0, 1, 0, 0), EXIT() };

	ACCEPT(abs);
	ACCEPT(ind);
	REJECT1(INSN(BPF_LD | BPF_W | BPF_ABS, 1, 0, 0, 0), "reserved fields");
	REJECT1(INSN(BPF_LD | BPF_W | BPF_ABS, 0, 0, 2, 0), "reserved fields");
	REJECT1(INSN(BPF_LD | BPF_W | BPF_ABS, 0, 3, 0, 0), "reserved fields");
	REJECT1(INSN(BPF_LD | BPF_DW | BPF_IND, 0, 1, 0, 0), "reserved fields");
}

TEST(rejects_bad_byte_swap_width)
{
	REJECT1(ENDIAN(BPF_TO_LE, 1, 8), "byte swap width 8");
	REJECT1(BSWAP(1, 0), "byte swap width 0");
}

TEST(rejects_bad_atomics)
{
	REJECT1(ATOMIC(BPF_B, BPF_ADD, 1, 2, 0), "atomic operations need size W or DW");
	REJECT1(ATOMIC(BPF_H, BPF_ADD, 1, 2, 0), "atomic operations need size W or DW");
	REJECT1(ATOMIC(BPF_DW, BPF_SUB, 1, 2, 0), "unknown atomic operation imm=0x10");
	REJECT1(ATOMIC(BPF_W, BPF_XCHG & ~BPF_FETCH, 1, 2, 0), "unknown atomic operation");
	REJECT1(ATOMIC(BPF_W, BPF_CMPXCHG & ~BPF_FETCH, 1, 2, 0), "unknown atomic operation");
	REJECT1(ATOMIC(BPF_DW, 0x100, 1, 2, 0), "unknown atomic operation"); /* load-acquire */
}

/* Every code byte against the RFC 9669 opcode table (plus callx): with
 * otherwise-valid fields, exactly the listed codes must be accepted. */
static const uint8_t valid_codes[] = {
	/* ALU: 13 ops x K/X minus neg X, plus le/be */
	0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c, 0x44, 0x4c, 0x54, 0x5c,
	0x64, 0x6c, 0x74, 0x7c, 0x84, 0x94, 0x9c, 0xa4, 0xac, 0xb4, 0xbc, 0xc4,
	0xcc, 0xd4, 0xdc,
	/* ALU64, bswap */
	0x07, 0x0f, 0x17, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x47, 0x4f, 0x57, 0x5f,
	0x67, 0x6f, 0x77, 0x7f, 0x87, 0x97, 0x9f, 0xa7, 0xaf, 0xb7, 0xbf, 0xc7,
	0xcf, 0xd7,
	/* JMP: ja, conditionals, call, callx, exit */
	0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d, 0x55, 0x5d, 0x65,
	0x6d, 0x75, 0x7d, 0x85, 0x8d, 0x95, 0xa5, 0xad, 0xb5, 0xbd, 0xc5, 0xcd,
	0xd5, 0xdd,
	/* JMP32: gotol, conditionals */
	0x06, 0x16, 0x1e, 0x26, 0x2e, 0x36, 0x3e, 0x46, 0x4e, 0x56, 0x5e, 0x66,
	0x6e, 0x76, 0x7e, 0xa6, 0xae, 0xb6, 0xbe, 0xc6, 0xce, 0xd6, 0xde,
	/* lddw, ldx, ldxs, st, stx, atomics */
	0x18, 0x61, 0x69, 0x71, 0x79, 0x81, 0x89, 0x91, 0x62, 0x6a, 0x72, 0x7a,
	0x63, 0x6b, 0x73, 0x7b, 0xc3, 0xdb,
};

static bool code_listed(uint8_t code)
{
	for (size_t i = 0; i < ARRAY_LEN(valid_codes); i++)
		if (valid_codes[i] == code)
			return true;
	return false;
}

/* Fields that make `code` valid if any encoding of it is. */
static struct bpf_insn plausible_insn(uint8_t code)
{
	struct bpf_insn i = INSN(code, 1, 0, 0, 0);
	bool x = BPF_SRC(code) == BPF_X;

	switch (BPF_CLASS(code)) {
	case BPF_ALU:
	case BPF_ALU64:
		if (BPF_OP(code) == BPF_END)
			i.imm = 16;
		else if (BPF_OP(code) != BPF_NEG && x)
			i.src_reg = 2;
		else if (BPF_OP(code) != BPF_NEG)
			i.imm = 3;
		break;
	case BPF_JMP:
	case BPF_JMP32:
		if (BPF_OP(code) == BPF_CALL && !x)
			i = (struct bpf_insn)CALL_HELPER(HELPER_ID);
		else if (BPF_OP(code) == BPF_CALL)
			i = (struct bpf_insn)CALLX(2);
		else if (BPF_OP(code) == BPF_EXIT || BPF_OP(code) == BPF_JA)
			i.dst_reg = 0;
		else if (x)
			i.src_reg = 2;
		break;
	case BPF_LDX:
		i.src_reg = 2;
		break;
	case BPF_ST:
		i.imm = 7;
		break;
	case BPF_STX:
		i.src_reg = 2;
		i.imm = BPF_MODE(code) == BPF_ATOMIC ? BPF_ADD : 0;
		break;
	default:
		break;
	}
	i.code = code;
	return i;
}

TEST(opcode_table_matches_rfc9669)
{
	for (unsigned code = 0; code < 256; code++) {
		struct bpf_insn insns[4] = { plausible_insn((uint8_t)code), MOV64_IMM(0, 0),
					     EXIT(), EXIT() };
		struct bpfrt_prog *p = NULL;
		size_t n = 3;
		int rc;

		if (code == (BPF_JMP | BPF_EXIT)) {
			insns[0] = (struct bpf_insn)MOV64_IMM(0, 0);
			insns[1] = (struct bpf_insn)EXIT();
			n = 2;
		}
		if (code == (BPF_LD | BPF_DW | BPF_IMM)) {
			insns[1] = INSN(0, 0, 0, 0, 0);
			insns[2] = (struct bpf_insn)MOV64_IMM(0, 0);
			n = 4;
		}
		rc = load(insns, n, &p);
		bpfrt_prog_free(p);
		if (code_listed((uint8_t)code))
			CHECK(rc == 0, "code 0x%02x rejected: %s", code, bpfrt_last_error());
		else
			CHECK(rc == -EINVAL && strstr(bpfrt_last_error(), "insn 0:"),
			      "code 0x%02x: rc %d", code, rc);
	}
}

/* ---- reserved fields ------------------------------------------------------ */

TEST(rejects_reserved_alu_fields)
{
	REJECT1(INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 2, 0, 1), "reserved field src_reg");
	REJECT1(INSN(BPF_ALU | BPF_MOV | BPF_K, 1, 0, 4, 1), "reserved field off");
	REJECT1(INSN(BPF_ALU64 | BPF_XOR | BPF_X, 1, 2, 0, 1), "reserved field imm");
	REJECT1(INSN(BPF_ALU64 | BPF_LSH | BPF_X, 1, 2, 1, 0), "reserved field off");
	REJECT1(INSN(BPF_ALU64 | BPF_DIV | BPF_K, 1, 0, 2, 3), "invalid offset 2 for div");
	REJECT1(INSN(BPF_ALU | BPF_MOD | BPF_X, 1, 2, -1, 0), "invalid offset -1 for mod");
	REJECT1(MOVSX64_REG(1, 2, 7), "sign-extension width 7");
	REJECT1(MOVSX32_REG(1, 2, 32), "sign-extension width 32");
	REJECT1(INSN(BPF_ALU64 | BPF_NEG, 1, 0, 0, 1), "reserved field imm");
	REJECT1(INSN(BPF_ALU | BPF_NEG, 1, 3, 0, 0), "reserved field src_reg");
	REJECT1(INSN(BPF_ALU64 | BPF_NEG, 1, 0, 1, 0), "reserved field off");
	REJECT1(INSN(BPF_ALU | BPF_END | BPF_TO_BE, 1, 1, 0, 32), "reserved field src_reg");
	REJECT1(INSN(BPF_ALU64 | BPF_END, 1, 0, 1, 32), "reserved field off");
}

TEST(rejects_reserved_mem_fields)
{
	REJECT1(INSN(BPF_LDX | BPF_DW | BPF_MEM, 1, 2, 0, 1), "reserved field imm");
	REJECT1(INSN(BPF_ST | BPF_W | BPF_MEM, 1, 2, 0, 1), "reserved field src_reg");
	REJECT1(INSN(BPF_STX | BPF_H | BPF_MEM, 1, 2, 0, 1), "reserved field imm");
}

TEST(rejects_reserved_jump_fields)
{
	REJECT1(INSN(BPF_JMP | BPF_JEQ | BPF_K, 1, 2, 0, 0), "reserved field src_reg");
	REJECT1(INSN(BPF_JMP32 | BPF_JGT | BPF_X, 1, 2, 0, 5), "reserved field imm");
	REJECT1(INSN(BPF_JMP | BPF_JA, 1, 0, 0, 0), "reserved field dst_reg");
	REJECT1(INSN(BPF_JMP | BPF_JA, 0, 1, 0, 0), "reserved field src_reg");
	REJECT1(INSN(BPF_JMP | BPF_JA, 0, 0, 0, 1), "reserved field imm");
	REJECT1(INSN(BPF_JMP32 | BPF_JA, 0, 0, 1, 0), "reserved field off");
	REJECT1(INSN(BPF_JMP32 | BPF_JA, 2, 0, 0, 0), "reserved field dst_reg");
	REJECT1(INSN(BPF_JMP | BPF_CALL, 1, 0, 0, HELPER_ID), "reserved field dst_reg");
	REJECT1(INSN(BPF_JMP | BPF_CALL, 0, 0, 2, HELPER_ID), "reserved field off");
	REJECT1(INSN(BPF_JMP | BPF_CALL | BPF_X, 2, 1, 0, 0), "reserved field src_reg");
	REJECT1(INSN(BPF_JMP | BPF_CALL | BPF_X, 2, 0, 1, 0), "reserved field off");
	REJECT1(INSN(BPF_JMP | BPF_CALL | BPF_X, 2, 0, 0, 5), "reserved field imm");
	REJECT1(INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 1), "reserved field imm");
	REJECT1(INSN(BPF_JMP | BPF_CALL, 0, 3, 0, 0), "invalid call kind");
}

TEST(rejects_local_call_with_reserved_fields)
{
	const struct bpf_insn dst[] = {
		INSN(BPF_JMP | BPF_CALL, 1, BPF_PSEUDO_CALL, 0, 1), EXIT(), EXIT(),
	};
	const struct bpf_insn off[] = {
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 1, 1), EXIT(), EXIT(),
	};

	REJECT(dst, 0, "reserved field dst_reg");
	REJECT(off, 0, "reserved field off");
}

TEST(rejects_bad_lddw)
{
	const struct bpf_insn truncated[] = { MOV64_IMM(0, 0), EXIT(),
					      INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 0, 0, 1) };
	const struct bpf_insn code2[] = { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 0, 0, 1),
					  INSN(BPF_ALU64, 0, 0, 0, 0), EXIT() };
	const struct bpf_insn regs2[] = { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 0, 0, 1),
					  INSN(0, 1, 0, 0, 0), EXIT() };
	const struct bpf_insn off2[] = { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 0, 0, 1),
					 INSN(0, 0, 0, 3, 0), EXIT() };
	const struct bpf_insn off1[] = { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 0, 3, 1),
					 INSN(0, 0, 0, 0, 0), EXIT() };
	const struct bpf_insn map[] = { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 1),
					INSN(0, 0, 0, 0, 0), EXIT() };
	const struct bpf_insn map_val[] = {
		MOV64_IMM(0, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_IDX_VALUE, 0, 1),
		INSN(0, 0, 0, 0, 0), EXIT() };
	const struct bpf_insn btf[] = { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_BTF_ID, 0, 1),
					INSN(0, 0, 0, 0, 0), EXIT() };
	const struct bpf_insn kind[] = { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 7, 0, 1),
					 INSN(0, 0, 0, 0, 0), EXIT() };

	REJECT(truncated, 2, "missing its second slot");
	REJECT(code2, 1, "second slot of lddw must have opcode 0");
	REJECT(regs2, 1, "reserved field dst_reg");
	REJECT(off2, 1, "reserved field off");
	REJECT(off1, 0, "reserved field off");
	REJECT(map, 0, "map relocations need the loader");
	REJECT(map_val, 1, "map relocations need the loader");
	REJECT(btf, 0, "need the loader");
	REJECT(kind, 0, "invalid lddw kind");
}

TEST(rejects_kfunc_calls)
{
	REJECT1(INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 1),
		"kfunc calls need the loader");
}

/* ---- registers ------------------------------------------------------------ */

TEST(rejects_bad_registers)
{
	REJECT1(INSN(BPF_ALU64 | BPF_MOV | BPF_K, 11, 0, 0, 1), "invalid register r11");
	REJECT1(MOV64_REG(1, 15), "invalid register r15");
	REJECT1(JMP_REG(BPF_JEQ, 1, 12, 0), "invalid register r12");
	REJECT1(JMP_IMM(BPF_JEQ, 13, 0, 0), "invalid register r13");
	REJECT1(LDX(BPF_W, 1, 11, 0), "invalid register r11");
	REJECT1(ST(BPF_W, 11, 0, 0), "invalid register r11");
	REJECT1(STX(BPF_W, 1, 11, 0), "invalid register r11");
	REJECT1(CALLX(11), "invalid register r11");
}

TEST(rejects_writes_to_r10)
{
	const struct bpf_insn lddw[] = { LDDW(BPF_R10, 1), EXIT() };

	REJECT1(MOV64_IMM(BPF_R10, 0), "r10 is the read-only frame pointer");
	REJECT1(ALU32_REG(BPF_ADD, BPF_R10, 1), "read-only");
	REJECT1(INSN(BPF_ALU64 | BPF_NEG, BPF_R10, 0, 0, 0), "read-only");
	REJECT1(BSWAP(BPF_R10, 64), "read-only");
	REJECT1(LDX(BPF_DW, BPF_R10, 1, 0), "read-only");
	REJECT1(ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 1, BPF_R10, 0), "read-only");
	REJECT1(ATOMIC(BPF_W, BPF_XCHG, 1, BPF_R10, 0), "read-only");
	REJECT(lddw, 0, "read-only");
}

/* ---- control flow --------------------------------------------------------- */

TEST(rejects_jumps_out_of_range)
{
	const struct bpf_insn fwd[] = { JA(5), EXIT() };
	const struct bpf_insn back[] = { MOV64_IMM(0, 0), JMP_IMM(BPF_JEQ, 0, 0, -3), EXIT() };
	const struct bpf_insn gotol[] = { MOV64_IMM(0, 0), GOTOL(-1000), EXIT() };
	const struct bpf_insn to_end[] = { JMP_IMM(BPF_JEQ, 1, 0, 1), EXIT() };

	REJECT(fwd, 0, "jump out of range");
	REJECT(back, 1, "jump out of range to -1");
	REJECT(gotol, 1, "jump out of range");
	REJECT(to_end, 0, "jump out of range to 2");
}

TEST(rejects_jump_into_lddw)
{
	const struct bpf_insn a[] = { JMP_IMM(BPF_JEQ, 1, 0, 1), LDDW(0, 1), EXIT() };
	const struct bpf_insn b[] = { LDDW(0, 1), EXIT(), JA(-3) };

	REJECT(a, 0, "second half of lddw");
	REJECT(b, 3, "second half of lddw");
}

TEST(rejects_jump_out_of_subprogram)
{
	const struct bpf_insn a[] = {
		CALL_LOCAL(1), /* -> 2 */
		EXIT(),
		JMP_IMM(BPF_JEQ, 1, 0, -3), /* -> 0, in main */
		EXIT(),
	};
	const struct bpf_insn b[] = {
		CALL_LOCAL(2), /* -> 3 */
		JA(1),         /* -> 3, into the subprogram */
		EXIT(),
		EXIT(),
	};

	REJECT(a, 2, "leaves its subprogram");
	REJECT(b, 1, "leaves its subprogram");
}

TEST(rejects_fall_through)
{
	const struct bpf_insn main_only[] = { MOV64_IMM(0, 0) };
	const struct bpf_insn cond_last[] = { MOV64_IMM(0, 0), JMP_IMM(BPF_JEQ, 0, 0, -2) };
	const struct bpf_insn lddw_last[] = { JA(0), LDDW(0, 1) };
	const struct bpf_insn call_last[] = { CALL_HELPER(HELPER_ID) };
	const struct bpf_insn into_sub[] = {
		CALL_LOCAL(1), /* -> 2 */
		MOV64_IMM(0, 0),
		EXIT(),
	};
	const struct bpf_insn sub_into_sub[] = {
		CALL_LOCAL(1), /* -> 2 */
		EXIT(),
		CALL_LOCAL(0), /* -> 3; 2 falls through into 3 */
		EXIT(),
	};

	REJECT(main_only, 0, "falls through past the end of the program");
	REJECT(cond_last, 1, "falls through past the end of the program");
	REJECT(lddw_last, 1, "falls through past the end of the program");
	REJECT(call_last, 0, "falls through");
	REJECT(into_sub, 1, "falls through past the end of the subprogram at insn 0");
	REJECT(sub_into_sub, 2, "falls through past the end of the subprogram at insn 2");
}

TEST(rejects_unreachable)
{
	const struct bpf_insn dead[] = { MOV64_IMM(0, 0), EXIT(), MOV64_IMM(0, 1), EXIT() };
	const struct bpf_insn jumped_over[] = { JA(1), MOV64_IMM(0, 1), EXIT() };
	const struct bpf_insn cond_loop[] = {
		MOV64_IMM(0, 0),
		JA(-2),          /* infinite loop, nothing after it reachable */
		EXIT(),
	};
	const struct bpf_insn dead_sub[] = {
		EXIT(),
		EXIT(),         /* subprogram at 1, called only from itself */
		CALL_LOCAL(-2), /* -> 1 */
		EXIT(),
	};
	const struct bpf_insn dead_call[] = {
		JA(1),
		CALL_LOCAL(1), /* unreachable call -> 3 */
		EXIT(),
		EXIT(),
	};

	REJECT(dead, 2, "unreachable instruction");
	REJECT(jumped_over, 1, "unreachable instruction");
	REJECT(cond_loop, 2, "unreachable instruction");
	REJECT(dead_sub, 1, "unreachable subprogram");
	REJECT(dead_call, 1, "unreachable instruction");
}

TEST(rejects_unknown_helpers)
{
	char word[32];

	/* Linux's helpers by their names, with the kernel's message first */
	REJECT1(CALL_HELPER(BPF_FUNC_get_current_task),
		"program of this type cannot use helper bpf_get_current_task#35: "
		"bpf_get_current_task (35) is not available");
	REJECT1(CALL_HELPER(69), "bpf_fib_lookup (69) is not available");
	snprintf(word, sizeof(word), "call to kfunc id %d:", BPFRT_KFUNC_ID_BASE + 77);
	REJECT1(CALL_HELPER(BPFRT_KFUNC_ID_BASE + 77), word);
	snprintf(word, sizeof(word), "invalid func unknown#%d", BPFRT_MAX_HELPER_ID);
	REJECT1(CALL_HELPER(BPFRT_MAX_HELPER_ID), word);
	REJECT1(CALL_HELPER(-1), "invalid func unknown#-1: no helper has id -1");
}

TEST(rejects_bad_local_call_targets)
{
	const struct bpf_insn past[] = { CALL_LOCAL(5), EXIT() };
	const struct bpf_insn before[] = { MOV64_IMM(0, 0), CALL_LOCAL(-3), EXIT() };
	const struct bpf_insn tail[] = { CALL_LOCAL(2), EXIT(), LDDW(0, 1), EXIT() };
	const struct bpf_insn func_past[] = {
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_FUNC, 0, 7),
		INSN(0, 0, 0, 0, 0), EXIT() };

	REJECT(past, 0, "local call target 6 out of range");
	REJECT(before, 1, "local call target -1 out of range");
	REJECT(tail, 0, "second half of lddw");
	REJECT(func_past, 0, "subprogram address target 8 out of range");
}

TEST(rejects_recursion)
{
	const struct bpf_insn self[] = {
		CALL_LOCAL(1), EXIT(),
		CALL_LOCAL(-1), /* 2 -> 2 */
		EXIT(),
	};
	const struct bpf_insn mutual[] = {
		CALL_LOCAL(1),   /* 0 -> 2 */
		EXIT(),
		CALL_LOCAL(1),   /* 2 -> 4 */
		EXIT(),
		CALL_LOCAL(-3),  /* 4 -> 2 */
		EXIT(),
	};
	const struct bpf_insn to_main[] = {
		CALL_LOCAL(1),   /* 0 -> 2 */
		EXIT(),
		CALL_LOCAL(-3),  /* 2 -> 0 */
		EXIT(),
	};
	const struct bpf_insn via_func_ptr[] = {
		CALL_LOCAL(1),   /* 0 -> 2 */
		EXIT(),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_FUNC, 0, -1), /* 2 -> 2 */
		INSN(0, 0, 0, 0, 0),
		EXIT(),
	};

	REJECT(self, 2, "recursive call");
	REJECT(mutual, 4, "recursive call: subprogram at insn 2");
	REJECT(to_main, 2, "recursive call: subprogram at insn 0");
	REJECT(via_func_ptr, 2, "recursive call");
}

/* main calls sub 1, which calls sub 2, ... frames-1 levels. */
static size_t build_call_chain(struct bpf_insn *insns, unsigned frames)
{
	size_t n = 0;

	for (unsigned f = 0; f + 1 < frames; f++) {
		insns[n++] = (struct bpf_insn)CALL_LOCAL(1);
		insns[n++] = (struct bpf_insn)EXIT();
	}
	insns[n++] = (struct bpf_insn)MOV64_IMM(0, 0);
	insns[n++] = (struct bpf_insn)EXIT();
	return n;
}

TEST(call_depth_limit)
{
	struct bpf_insn insns[2 * BPFRT_MAX_CALL_FRAMES + 3];
	struct bpfrt_prog *p = NULL;
	size_t n = build_call_chain(insns, BPFRT_MAX_CALL_FRAMES);

	REQUIRE(load(insns, n, &p) == 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_subprog_cnt(p) == BPFRT_MAX_CALL_FRAMES);
	CHECK(p->subprogs[0].call_depth == BPFRT_MAX_CALL_FRAMES);
	CHECK(p->subprogs[BPFRT_MAX_CALL_FRAMES - 1].call_depth == 1);
	bpfrt_prog_free(p);

	/* one more frame: the call in frame 8 (insn 14) is the offender */
	n = build_call_chain(insns, BPFRT_MAX_CALL_FRAMES + 1);
	expect_reject_at(insns, n, -EINVAL, 2 * (BPFRT_MAX_CALL_FRAMES - 1),
			 "call depth exceeds 8 frames", __LINE__);
}

TEST(rejects_bad_stack_access)
{
	REJECT1(ST(BPF_DW, BPF_R10, 0, 0), "invalid stack access off=0 size=8");
	REJECT1(STX(BPF_DW, BPF_R10, 1, -4), "invalid stack access off=-4 size=8");
	REJECT1(LDX(BPF_W, 1, BPF_R10, -514), "invalid stack access off=-514 size=4");
	REJECT1(LDX(BPF_B, 1, BPF_R10, -513), "invalid stack access");
	REJECT1(ATOMIC(BPF_DW, BPF_ADD, BPF_R10, 1, 8), "invalid stack access off=8");
	REJECT1(LDX(BPF_B, 1, BPF_R10, 32767), "invalid stack access");
}

TEST(rejects_empty_program)
{
	struct bpf_insn one = EXIT();
	struct bpfrt_prog prog = { .insns = &one, .insn_cnt = 0 };
	struct bpfrt_prog *p = NULL;

	CHECK(bpfrt_validate(&prog) == -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "insn 0:") && strstr(bpfrt_last_error(), "empty"));
	CHECK(prog.subprogs == NULL && prog.insn_subprog == NULL);
	CHECK(bpfrt_prog_load(&one, 0, NULL, &p) == -EINVAL && !p);
}

TEST(rejects_too_long_program)
{
	struct bpf_insn one = EXIT();
	struct bpfrt_prog prog = { .insns = &one, .insn_cnt = BPFRT_MAX_INSNS + 1 };

	/* checked before any instruction is read */
	CHECK(bpfrt_validate(&prog) == -E2BIG);
	CHECK(strstr(bpfrt_last_error(), "too long"), "%s", bpfrt_last_error());
}

TEST(register_use_sets)
{
	const struct bpf_insn cmpxchg = ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 2, 0);
	const struct bpf_insn fetch = ATOMIC(BPF_W, BPF_OR | BPF_FETCH, 3, 4, 0);
	const struct bpf_insn callx = CALLX(7);
	const struct bpf_insn mov = MOV64_REG(5, 6);
	const struct bpf_insn add = ALU32_IMM(BPF_ADD, 8, 1);
	const struct bpf_insn exit = EXIT();
	struct bpf_insn prog_insn = EXIT();
	struct bpfrt_prog prog = { .insns = &prog_insn, .insn_cnt = 1 };
	struct bpfrt_reg_use u;

	bpfrt_insn_reg_use(&prog, &cmpxchg, &u);
	CHECK(u.use == 0x7 && u.def == 0x1 && u.kill == 0);
	bpfrt_insn_reg_use(&prog, &fetch, &u);
	CHECK(u.use == 0x18 && u.def == 0x10);
	bpfrt_insn_reg_use(&prog, &callx, &u);
	CHECK(u.use == 0x80 && u.def == 0x1 && u.kill == 0x3e);
	bpfrt_insn_reg_use(&prog, &mov, &u);
	CHECK(u.use == 0x40 && u.def == 0x20);
	bpfrt_insn_reg_use(&prog, &add, &u);
	CHECK(u.use == 0x100 && u.def == 0x100);
	bpfrt_insn_reg_use(&prog, &exit, &u);
	CHECK(u.use == 0x1 && u.def == 0);
}

TEST(failure_leaves_no_subprogram_state)
{
	struct bpf_insn insns[] = { CALL_LOCAL(1), EXIT(), CALL_LOCAL(-1), EXIT() };
	struct bpfrt_prog prog = { .insns = insns, .insn_cnt = 4,
				   .helpers = NULL };

	CHECK(bpfrt_validate(&prog) == -EINVAL);
	CHECK(prog.subprogs == NULL && prog.insn_subprog == NULL && prog.subprog_cnt == 0);
}

/* ---- accepted programs ---------------------------------------------------- */

TEST(accepts_edge_cases)
{
	const struct bpf_insn exit_not_last[] = {
		MOV64_IMM(1, 0), JA(2), MOV64_IMM(2, 0), EXIT(), MOV64_IMM(0, 0), JA(-4),
	};
	const struct bpf_insn gotol_not_last[] = {
		MOV64_IMM(1, 0), GOTOL(2), MOV64_IMM(2, 0), EXIT(), MOV64_IMM(0, 0), GOTOL(-4),
	};
	const struct bpf_insn self_loop[] = { JA(-1) };
	const struct bpf_insn lddw_then_jump[] = {
		JMP_IMM(BPF_JEQ, 1, 0, 2), LDDW(0, 0x123456789ULL), EXIT(),
	};
	const struct bpf_insn branch_both_ways[] = {
		JMP_IMM(BPF_JEQ, 1, 0, 2), MOV64_IMM(0, 0), EXIT(), MOV64_IMM(0, 1), EXIT(),
	};
	const struct bpf_insn r10_as_base[] = {
		ST(BPF_DW, BPF_R10, -8, 1), STX(BPF_W, BPF_R10, 1, -512),
		LDX(BPF_B, 0, BPF_R10, -1), LDXSX(BPF_H, 0, BPF_R10, -2),
		ATOMIC(BPF_DW, BPF_CMPXCHG, BPF_R10, 1, -16), /* writes r0 */
		ATOMIC(BPF_W, BPF_ADD | BPF_FETCH, BPF_R10, 2, -24),
		EXIT(),
	};

	ACCEPT(exit_not_last);
	ACCEPT(gotol_not_last);
	ACCEPT(self_loop);
	ACCEPT(lddw_then_jump);
	ACCEPT(branch_both_ways);
	ACCEPT(r10_as_base);
	ACCEPT1(SDIV64_IMM(1, 0));
	ACCEPT1(SMOD64_IMM(1, -1));
	ACCEPT1(INSN(BPF_ALU | BPF_DIV | BPF_X, 1, 2, 1, 0));
	ACCEPT1(MOVSX64_REG(1, 2, 32));
	ACCEPT1(MOVSX32_REG(1, 2, 16));
	ACCEPT1(MOVSX32_REG(1, 2, 8));
	ACCEPT1(ALU64_IMM(BPF_LSH, 1, 64));   /* out-of-range shifts are masked */
	ACCEPT1(ALU32_IMM(BPF_DIV, 1, 0));    /* division by zero is defined */
	ACCEPT1(ENDIAN(BPF_TO_BE, 1, 64));
	ACCEPT1(BSWAP(1, 16));
	ACCEPT1(CALLX(2));
	ACCEPT1(CALL_HELPER(HELPER_ID));
	ACCEPT1(JMP_REG(BPF_JEQ, 1, BPF_R10, 0));
	ACCEPT1(ATOMIC(BPF_DW, BPF_XCHG, 1, 2, 0));
	ACCEPT1(ATOMIC(BPF_W, BPF_XOR | BPF_FETCH, 1, 2, 0));
	ACCEPT1(ATOMIC(BPF_DW, BPF_OR, 1, 2, 0));
	ACCEPT1(ATOMIC(BPF_W, BPF_AND, 1, 2, 0));
	ACCEPT1(LDX(BPF_DW, 1, 2, -32768));
	ACCEPT1(STX(BPF_B, 1, 2, 32767));
}

TEST(accepts_pseudo_func_subprogram)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_FUNC, 0, 3), /* -> 4 */
		INSN(0, 0, 0, 0, 0),
		MOV64_IMM(0, 0),
		EXIT(),
		ST(BPF_W, BPF_R10, -4, 0),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	struct bpfrt_prog *p = NULL;
	uint32_t start = 0, depth = 0;

	REQUIRE(load(insns, ARRAY_LEN(insns), &p) == 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_subprog_cnt(p) == 2);
	CHECK(bpfrt_prog_subprog_info(p, 1, &start, &depth) == 0);
	CHECK(start == 4 && depth == 8, "start %u depth %u", start, depth);
	CHECK(bpfrt_insn_callee(p, 0) == 1);
	CHECK(bpfrt_insn_callee(p, 2) == -1);
	CHECK(bpfrt_prog_stack_depth(p) == 8);
	bpfrt_prog_free(p);
}

/* ---- subprogram and stack numbers ----------------------------------------- */

TEST(stack_depth_rounding)
{
#define RET0 MOV64_IMM(0, 0), EXIT()
	const struct bpf_insn d8[] = { LDX(BPF_B, 0, BPF_R10, -1), EXIT() };
	const struct bpf_insn d16[] = { ST(BPF_W, BPF_R10, -12, 0), RET0 };
	const struct bpf_insn d512[] = { STX(BPF_DW, BPF_R10, 1, -512), RET0 };
	const struct bpf_insn d0[] = { RET0 };
	const struct bpf_insn escape[] = { MOV64_REG(1, BPF_R10), RET0 };
	const struct bpf_insn escape_alu[] = { MOV64_IMM(1, 0), ALU64_REG(BPF_ADD, 1, BPF_R10), RET0 };
	const struct bpf_insn escape_stx[] = { STX(BPF_DW, BPF_R10, BPF_R10, -8), RET0 };
	const struct bpf_insn escape_callx[] = { CALLX(BPF_R10), EXIT() };
	const struct bpf_insn escape_atomic[] = { ATOMIC(BPF_DW, BPF_ADD, 1, BPF_R10, 0), RET0 };
#undef RET0
	const struct {
		const struct bpf_insn *insns;
		size_t n;
		uint32_t depth;
	} cases[] = {
		{ d8, ARRAY_LEN(d8), 8 },
		{ d16, ARRAY_LEN(d16), 16 },
		{ d512, ARRAY_LEN(d512), 512 },
		{ d0, ARRAY_LEN(d0), 0 },
		{ escape, ARRAY_LEN(escape), 512 },
		{ escape_alu, ARRAY_LEN(escape_alu), 512 },
		{ escape_stx, ARRAY_LEN(escape_stx), 512 },
		{ escape_callx, ARRAY_LEN(escape_callx), 512 },
		{ escape_atomic, ARRAY_LEN(escape_atomic), 512 },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct bpfrt_prog *p = NULL;
		uint32_t depth = 1;

		if (load(cases[i].insns, cases[i].n, &p)) {
			CHECK(0, "case %zu rejected: %s", i, bpfrt_last_error());
			continue;
		}
		CHECK(bpfrt_prog_subprog_info(p, 0, NULL, &depth) == 0);
		CHECK(depth == cases[i].depth, "case %zu: depth %u", i, depth);
		CHECK(bpfrt_prog_stack_depth(p) == cases[i].depth);
		bpfrt_prog_free(p);
	}
}

TEST(subprogram_layout_and_chained_depth)
{
	/* main (8) -> A (24) -> B (0)
	 *                   -> C (512: r10 escapes)
	 * main -> B as well; chain = 8 + 24 + 512 */
	const struct bpf_insn insns[] = {
		/* 0 main */
		ST(BPF_DW, BPF_R10, -8, 0),
		CALL_LOCAL(4),           /* 1 -> A at 6 */
		CALL_LOCAL(8),           /* 2 -> B at 11 */
		CALL_HELPER(HELPER_ID),
		MOV64_IMM(0, 0),
		EXIT(),
		/* 6 A */
		ST(BPF_W, BPF_R10, -20, 0),
		CALL_LOCAL(3),           /* 7 -> B at 11 */
		JMP_IMM(BPF_JEQ, 0, 0, 1),
		CALL_LOCAL(3),           /* 9 -> C at 13 */
		EXIT(),
		/* 11 B */
		MOV64_IMM(0, 0),
		EXIT(),
		/* 13 C */
		MOV64_REG(1, BPF_R10),
		LDDW(0, 7),
		EXIT(),
	};
	static const uint32_t want_start[] = { 0, 6, 11, 13 };
	static const uint32_t want_depth[] = { 8, 24, 0, 512 };
	static const uint32_t want_chain[] = { 544, 536, 0, 512 };
	static const uint32_t want_calls[] = { 3, 2, 1, 1 };
	struct bpfrt_prog *p = NULL;

	REQUIRE(load(insns, ARRAY_LEN(insns), &p) == 0, "%s", bpfrt_last_error());
	REQUIRE(bpfrt_prog_subprog_cnt(p) == 4, "%u", bpfrt_prog_subprog_cnt(p));
	CHECK(bpfrt_prog_stack_depth(p) == 544, "%u", bpfrt_prog_stack_depth(p));
	for (uint32_t i = 0; i < 4; i++) {
		uint32_t start, depth;

		CHECK(bpfrt_prog_subprog_info(p, i, &start, &depth) == 0);
		CHECK(start == want_start[i], "subprog %u start %u", i, start);
		CHECK(depth == want_depth[i], "subprog %u depth %u", i, depth);
		CHECK(p->subprogs[i].end == (i < 3 ? want_start[i + 1] : ARRAY_LEN(insns)));
		CHECK(p->subprogs[i].chain_depth == want_chain[i], "subprog %u chain %u", i,
		      p->subprogs[i].chain_depth);
		CHECK(p->subprogs[i].call_depth == want_calls[i], "subprog %u calls %u", i,
		      p->subprogs[i].call_depth);
		CHECK(bpfrt_prog_subprog_at(p, want_start[i]) == (int)i);
	}
	for (uint32_t pc = 0; pc < ARRAY_LEN(insns); pc++) {
		uint32_t s = pc < 6 ? 0 : pc < 11 ? 1 : pc < 13 ? 2 : 3;

		CHECK(p->insn_subprog[pc] == s, "insn %u in %u", pc, p->insn_subprog[pc]);
	}
	CHECK(bpfrt_prog_subprog_info(p, 4, NULL, NULL) == -ENOENT);
	CHECK(bpfrt_insn_callee(p, 1) == 1 && bpfrt_insn_callee(p, 9) == 3);
	bpfrt_prog_free(p);
}

TEST(successors)
{
	const struct bpf_insn insns[] = {
		JMP_IMM(BPF_JNE, 1, 0, 2), LDDW(0, 1), JA(-4), GOTOL(-5), EXIT(),
	};
	uint32_t succ[2];

	CHECK(bpfrt_insn_successors(insns, 0, succ) == 2 && succ[0] == 3 && succ[1] == 1);
	CHECK(bpfrt_insn_successors(insns, 1, succ) == 1 && succ[0] == 3);
	CHECK(bpfrt_insn_successors(insns, 3, succ) == 1 && succ[0] == 0);
	CHECK(bpfrt_insn_successors(insns, 4, succ) == 1 && succ[0] == 0);
	CHECK(bpfrt_insn_successors(insns, 5, succ) == 0);
}

/* ---- uninitialized registers --------------------------------------------- */

/* A program that runs unverified (trusted): the validator refuses a read
 * that no path writes first, the only check it gets. */
TEST(rejects_uninitialized_reads)
{
	static const struct bpfrt_helper two_args = {
		.name = "two_args", .fn = dummy_helper,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};
	const struct bpf_insn exit_only[] = { EXIT() };
	const struct bpf_insn r3[] = { MOV64_REG(0, 3), EXIT() };
	const struct bpf_insn clobbered[] = { CALL_HELPER(HELPER_ID), MOV64_REG(0, 1), EXIT() };
	const struct bpf_insn helper_arg[] = {
		CALL_HELPER(HELPER_ID), MOV64_IMM(1, 0), CALL_HELPER(HELPER_ID + 1), EXIT(),
	};
	const struct bpf_insn cmpxchg[] = { ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 2, 0), EXIT() };
	const struct bpf_insn callee_r6[] = {
		MOV64_IMM(6, 1), CALL_LOCAL(1), EXIT(),
		MOV64_REG(0, 6), EXIT(),
	};
	const struct bpf_insn after_local_call[] = {
		CALL_LOCAL(2), MOV64_REG(0, 2), EXIT(),
		MOV64_IMM(0, 0), EXIT(),
	};
	const struct bpf_insn store_uninit[] = { STX(BPF_DW, BPF_R10, 4, -8), MOV64_IMM(0, 0), EXIT() };

	REQUIRE(bpfrt_helper_register(HELPER_ID + 1, &two_args) == 0);
	REJECT(exit_only, 0, "r0 is read but no path writes it first");
	REJECT(r3, 0, "r3 is read");
	REJECT(clobbered, 1, "r1 is read");
	REJECT(helper_arg, 2, "r2 is read");
	REJECT(cmpxchg, 0, "r0 is read");
	REJECT(callee_r6, 3, "r6 is read");
	REJECT(after_local_call, 1, "r2 is read");
	REJECT(store_uninit, 0, "r4 is read");
	bpfrt_helper_unregister(HELPER_ID + 1);
}

TEST(accepts_registers_set_on_some_path)
{
	/* r0 set on one branch only: the path-sensitive verifier's call */
	const struct bpf_insn one_branch[] = {
		JMP_IMM(BPF_JEQ, 1, 0, 1), MOV64_IMM(0, 1), EXIT(),
	};
	/* set later in a loop body, read at the loop head */
	const struct bpf_insn loop[] = {
		MOV64_IMM(3, 3),
		JMP_IMM(BPF_JEQ, 3, 0, 3),   /* 1: head */
		MOV64_REG(0, 3),
		ALU64_IMM(BPF_SUB, 3, 1),
		JA(-4),
		EXIT(),                      /* 5: r0 unset when r3 starts at 0 */
	};
	const struct bpf_insn args_in_subprog[] = {
		MOV64_IMM(3, 1), CALL_LOCAL(1), EXIT(),
		MOV64_REG(0, 5), ALU64_REG(BPF_ADD, 0, 1), EXIT(),
	};
	const struct bpf_insn main_args[] = { MOV64_REG(0, 1), ALU64_REG(BPF_ADD, 0, 2), EXIT() };
	const struct bpf_insn fetch_defines_src[] = {
		ST(BPF_DW, BPF_R10, -8, 0), MOV64_IMM(3, 1),
		ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, BPF_R10, 3, -8), MOV64_REG(0, 3), EXIT(),
	};

	ACCEPT(one_branch);
	ACCEPT(loop);
	ACCEPT(args_in_subprog);
	ACCEPT(main_args);
	ACCEPT(fetch_defines_src);
}


/* A program the verifier walks: the validator leaves them to the walk,
 * which refuses each on the path that reads it, naming the instruction and
 * register, and accepts a read on a path it proves dead. */
static void expect_verify_reject_at(const struct bpf_insn *insns, size_t n, unsigned pc,
				    const char *word, int line)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "t", .verify = true);
	struct bpfrt_prog *p = NULL;
	char where[32];
	int rc = bpfrt_prog_load(insns, n, &opts, &p);
	const char *msg = bpfrt_last_error();

	snprintf(where, sizeof(where), "insn %u:", pc);
	if (rc != -EACCES && rc != -EINVAL)
		tl_fail(__FILE__, line, "verify: expected a refusal, got %d (%s)", rc, msg);
	else if (!strstr(msg, where) || !strstr(msg, word))
		tl_fail(__FILE__, line, "message lacks \"%s\" or \"%s\": %s", where, word, msg);
	if (p)
		bpfrt_prog_free(p);
}

#undef REJECT
#define REJECT(arr, pc, word) expect_verify_reject_at(arr, ARRAY_LEN(arr), pc, word, __LINE__)

TEST(verifier_rejects_uninitialized_reads_on_their_path)
{
	static const struct bpfrt_helper two_args = {
		.name = "two_args", .fn = dummy_helper,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};
	const struct bpf_insn exit_only[] = { EXIT() };
	const struct bpf_insn r3[] = { MOV64_REG(0, 3), EXIT() };
	const struct bpf_insn clobbered[] = { CALL_HELPER(HELPER_ID), MOV64_REG(0, 1), EXIT() };
	const struct bpf_insn helper_arg[] = {
		CALL_HELPER(HELPER_ID), MOV64_IMM(1, 0), CALL_HELPER(HELPER_ID + 1), EXIT(),
	};
	const struct bpf_insn cmpxchg[] = { ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 2, 0), EXIT() };
	const struct bpf_insn callee_r6[] = {
		MOV64_IMM(6, 1), CALL_LOCAL(1), EXIT(),
		MOV64_REG(0, 6), EXIT(),
	};
	const struct bpf_insn after_local_call[] = {
		CALL_LOCAL(2), MOV64_REG(0, 2), EXIT(),
		MOV64_IMM(0, 0), EXIT(),
	};
	const struct bpf_insn store_uninit[] = { STX(BPF_DW, BPF_R10, 4, -8), MOV64_IMM(0, 0), EXIT() };

	const struct bpf_insn callee_arg_unset[] = {
		MOV64_IMM(3, 1), CALL_LOCAL(1), EXIT(),
		MOV64_REG(0, 5), ALU64_REG(BPF_ADD, 0, 1), EXIT(),
	};

	REQUIRE(bpfrt_helper_register(HELPER_ID + 1, &two_args) == 0);
	REJECT(exit_only, 0, "R0 !read_ok (uninitialized register");
	REJECT(r3, 0, "R3 !read_ok");
	REJECT(clobbered, 1, "R1 !read_ok");
	REJECT(helper_arg, 2, "R2 !read_ok");
	REJECT(cmpxchg, 0, "R0 !read_ok");
	REJECT(callee_r6, 3, "R6 !read_ok");
	REJECT(after_local_call, 1, "R2 !read_ok");
	REJECT(store_uninit, 0, "R4 !read_ok");
	/* r5 is no argument the caller set (only r3, and r1 from the entry) */
	REJECT(callee_arg_unset, 3, "R5 !read_ok");
	bpfrt_helper_unregister(HELPER_ID + 1);
}
#undef REJECT
#define REJECT(arr, pc, word) expect_reject_at(arr, ARRAY_LEN(arr), -EINVAL, pc, word, __LINE__)

/* Loads, and the verifier's walk accepts: every path reads what it set. */
static void expect_verified_at(const struct bpf_insn *insns, size_t n, int line)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "t", .verify = true);
	struct bpfrt_prog *p = NULL;

	if (bpfrt_prog_load(insns, n, &opts, &p))
		tl_fail(__FILE__, line, "verifier refused it: %s", bpfrt_last_error());
	else
		bpfrt_prog_free(p);
}
#define ACCEPT_VERIFIED(arr) expect_verified_at(arr, ARRAY_LEN(arr), __LINE__)

TEST(verifier_accepts_reads_on_dead_paths)
{
	/* r0 set on one branch only: the path-sensitive verifier's call */
	const struct bpf_insn one_branch[] = {
		JMP_IMM(BPF_JEQ, 1, 0, 1), MOV64_IMM(0, 1), EXIT(),
	};
	/* set later in a loop body, read at the loop head */
	const struct bpf_insn loop[] = {
		MOV64_IMM(3, 3),
		JMP_IMM(BPF_JEQ, 3, 0, 3),   /* 1: head */
		MOV64_REG(0, 3),
		ALU64_IMM(BPF_SUB, 3, 1),
		JA(-4),
		EXIT(),                      /* 5: r0 unset when r3 starts at 0 */
	};
	/* the only read of r3 sits on a branch the verifier proves dead */
	const struct bpf_insn dead_read[] = {
		MOV64_IMM(0, 0), JMP_IMM(BPF_JEQ, 0, 0, 1), MOV64_REG(0, 3), EXIT(),
	};
	const struct bpf_insn fetch_defines_src[] = {
		ST(BPF_DW, BPF_R10, -8, 0), MOV64_IMM(3, 1),
		ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, BPF_R10, 3, -8), MOV64_REG(0, 3), EXIT(),
	};

	ACCEPT_VERIFIED(one_branch);
	ACCEPT_VERIFIED(loop);
	ACCEPT_VERIFIED(dead_read);
	ACCEPT_VERIFIED(fetch_defines_src);
}

/* ---- scale ---------------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* BPFRT_MAX_INSNS instructions: main calls SUBS subprograms, each a run of
 * conditional jumps, ALU, stack stores, helper calls and an lddw. */
TEST(million_instructions_validate_fast)
{
	const uint32_t n = BPFRT_MAX_INSNS, subs = 10000;
	struct bpf_insn *insns = malloc(n * sizeof(*insns));
	uint32_t pc = 0, main_len = subs + 2, body = (n - main_len) / subs;
	struct bpfrt_prog *p = NULL;
	double t0, ms;
	int rc;

	REQUIRE(insns);
	for (uint32_t s = 0; s < subs; s++, pc++) /* sub s starts at main_len + s*body */
		insns[pc] = (struct bpf_insn)CALL_LOCAL((int32_t)(main_len + s * body - pc - 1));
	insns[pc++] = (struct bpf_insn)MOV64_IMM(0, 0);
	insns[pc++] = (struct bpf_insn)EXIT();
	for (uint32_t s = 0; s < subs; s++) {
		uint32_t end = main_len + (s + 1) * body;

		if (s == subs - 1)
			end = n;
		insns[pc++] = (struct bpf_insn)MOV64_IMM(0, 0);
		insns[pc++] = (struct bpf_insn)MOV64_IMM(6, 0);
		/* groups of at most 5; at least one mov pads each end */
		while (pc + 6 < end) {
			int16_t off = (int16_t)(-8 * (int)(pc % 4 + 1));
			struct bpf_insn l[] = { LDDW(2, pc) };

			insns[pc] = (struct bpf_insn)JMP_IMM(BPF_JGT, 6, (int32_t)pc, 1);
			insns[pc + 1] = (struct bpf_insn)ALU64_IMM(BPF_ADD, 0, 3);
			insns[pc + 2] = (struct bpf_insn)STX(BPF_DW, BPF_R10, 0, off);
			if (pc % 7 == 0) {
				insns[pc + 3] = (struct bpf_insn)CALL_HELPER(HELPER_ID);
				pc += 4;
			} else {
				insns[pc + 3] = l[0];
				insns[pc + 4] = l[1];
				pc += 5;
			}
		}
		while (pc + 1 < end)
			insns[pc++] = (struct bpf_insn)MOV64_IMM(0, 1);
		insns[pc++] = (struct bpf_insn)EXIT();
	}
	REQUIRE(pc == n, "built %u", pc);

	t0 = now_ms();
	rc = load(insns, n, &p);
	ms = now_ms() - t0;
	printf("# validated %u instructions, %u subprograms in %.1f ms (incl. copy)\n",
	       n, p ? bpfrt_prog_subprog_cnt(p) : 0, ms);
	CHECK(rc == 0, "%s", bpfrt_last_error());
	if (p) {
		CHECK(bpfrt_prog_subprog_cnt(p) == subs + 1);
		CHECK(bpfrt_prog_stack_depth(p) == 32, "%u", bpfrt_prog_stack_depth(p));
	}
	/* generous bound so sanitizer builds pass; the plain build is ~10x faster */
	CHECK(ms < 2000, "%.1f ms", ms);
	bpfrt_prog_free(p);

	/* the validator alone, without the copy and allocation of the load */
	{
		struct bpfrt_prog prog = { .insns = insns, .insn_cnt = n };

		REQUIRE(bpfrt_env_snapshot(bpfrt_env_default(), &prog) == 0);
		t0 = now_ms();
		rc = bpfrt_validate(&prog);
		ms = now_ms() - t0;
		printf("# bpfrt_validate alone: %.1f ms\n", ms);
		CHECK(rc == 0 && prog.subprog_cnt == subs + 1);
		free(prog.subprogs);
		free(prog.insn_subprog);
		free(prog.helpers);
	}

	/* the last instruction made unreachable is still found at the end */
	insns[n - 2] = (struct bpf_insn)EXIT();
	expect_reject_at(insns, n, -EINVAL, n - 1, "unreachable", __LINE__);
	free(insns);
}

/* A long straight call chain must be rejected without deep recursion. */
TEST(long_call_chain_rejected)
{
	const uint32_t frames = 200000;
	struct bpf_insn *insns = malloc((2 * frames + 2) * sizeof(*insns));
	size_t n;

	REQUIRE(insns);
	n = build_call_chain(insns, frames);
	expect_reject_at(insns, n, -EINVAL, 2 * (BPFRT_MAX_CALL_FRAMES - 1),
			 "call depth", __LINE__);
	free(insns);
}

/* ---- random programs ------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t bound)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % bound);
}

/* Mostly-valid instructions so that many programs get deep into the passes. */
static struct bpf_insn random_insn(uint32_t n)
{
	struct bpf_insn i;

	if (rnd(8) == 0) {
		/* one field per statement: argument evaluation order is unspecified */
		i.code = (uint8_t)rnd(256);
		i.dst_reg = (uint8_t)rnd(16);
		i.src_reg = (uint8_t)rnd(16);
		i.off = (int16_t)(rnd(64) - 32);
		i.imm = (int32_t)rnd(64) - 32;
		return i;
	}
	i = plausible_insn(valid_codes[rnd(ARRAY_LEN(valid_codes))]);
	i.dst_reg = (uint8_t)rnd(11);
	if (i.src_reg)
		i.src_reg = (uint8_t)rnd(11);
	if (rnd(40) == 0)
		i.dst_reg = (uint8_t)(11 + rnd(5));
	if (insn_is_branch(&i)) {
		int32_t rel = (int32_t)rnd(2 * n + 2) - (int32_t)n - 1;

		if (insn_is_gotol(&i))
			i.imm = rel;
		else
			i.off = (int16_t)rel;
		if (insn_op(&i) == BPF_JA)
			i.dst_reg = 0;
	} else if (insn_is_call(&i) && rnd(2)) {
		i.src_reg = BPF_PSEUDO_CALL;
		i.imm = (int32_t)rnd(2 * n + 2) - (int32_t)n - 1;
	} else if (insn_is_callx(&i) || insn_is_exit(&i)) {
		i.dst_reg = insn_is_exit(&i) ? 0 : i.dst_reg;
	} else if (insn_mode(&i) == BPF_MEM || insn_mode(&i) == BPF_MEMSX ||
		   insn_mode(&i) == BPF_ATOMIC) {
		i.off = (int16_t)-(int)rnd(520);
		if (rnd(10) == 0)
			i.off += 8;
		if (rnd(2) && insn_class(&i) != BPF_LDX)
			i.dst_reg = BPF_R10;
		else if (rnd(2) && insn_class(&i) == BPF_LDX)
			i.src_reg = BPF_R10;
	}
	return i;
}

/* Facts every accepted program must satisfy. */
static void check_invariants(const struct bpfrt_prog *p)
{
	uint32_t prev_end = 0;

	REQUIRE(p->subprog_cnt >= 1 && p->subprogs && p->insn_subprog);
	CHECK(p->stack_depth == p->subprogs[0].chain_depth);
	for (uint32_t s = 0; s < p->subprog_cnt; s++) {
		const struct bpfrt_subprog *sp = &p->subprogs[s];

		CHECK(sp->start == prev_end && sp->end > sp->start, "subprog %u", s);
		CHECK(sp->stack_depth <= 512 && sp->stack_depth % 8 == 0);
		CHECK(sp->chain_depth >= sp->stack_depth);
		CHECK(sp->call_depth >= 1 && sp->call_depth <= BPFRT_MAX_CALL_FRAMES);
		prev_end = sp->end;
	}
	CHECK(prev_end == p->insn_cnt);
	for (uint32_t pc = 0; pc < p->insn_cnt; pc++) {
		const struct bpf_insn *insn = &p->insns[pc];
		const struct bpfrt_subprog *sp = &p->subprogs[p->insn_subprog[pc]];
		uint32_t succ[2];
		unsigned k;

		CHECK(pc >= sp->start && pc < sp->end);
		CHECK(insn->dst_reg <= 10);
		k = bpfrt_insn_successors(p->insns, pc, succ);
		for (unsigned j = 0; j < k; j++)
			CHECK(succ[j] >= sp->start && succ[j] < sp->end,
			      "insn %u -> %u leaves [%u, %u)", pc, succ[j], sp->start, sp->end);
		if (insn_is_lddw(insn))
			pc++;
		if (tl_failed())
			return;
	}
}

TEST(random_programs_never_crash)
{
	struct bpf_insn insns[40];
	unsigned accepted = 0;

	for (int iter = 0; iter < 30000 && !tl_failed(); iter++) {
		uint32_t n = 1 + rnd(ARRAY_LEN(insns) - 1);
		struct bpfrt_prog *p = NULL;
		int rc;

		for (uint32_t k = 0; k < n; k++)
			insns[k] = random_insn(n);
		/* bias towards endings that can validate */
		if (rnd(2)) {
			insns[n - 1] = (struct bpf_insn)EXIT();
			if (n > 1)
				insns[n - 2] = (struct bpf_insn)MOV64_IMM(0, 0);
		}
		rc = load(insns, n, &p);
		if (rc == 0) {
			accepted++;
			check_invariants(p);
			bpfrt_prog_free(p);
		} else {
			CHECK(rc == -EINVAL && strstr(bpfrt_last_error(), "insn "),
			      "rc %d: %s", rc, bpfrt_last_error());
		}
	}
	printf("# %u of 30000 random programs accepted\n", accepted);
	CHECK(accepted > 100, "%u accepted", accepted);
}

/* ---- conformance negatives ------------------------------------------------ */

/* Bytes of the "-- raw" section: hex pairs, 8 per instruction. */
static size_t parse_raw(const char *text, uint8_t *out, size_t cap)
{
	const char *s = strstr(text, "-- raw");
	size_t n = 0;

	if (!s)
		return 0;
	s = strchr(s, '\n');
	while (s && *s) {
		s++;
		if (s[0] == '-' && s[1] == '-')
			break;
		while (*s && *s != '\n') {
			char *end;
			unsigned long b;

			if (*s == '#')
				break;
			b = strtoul(s, &end, 16);
			if (end == s) {
				s++;
				continue;
			}
			if (n < cap)
				out[n++] = (uint8_t)b;
			s = end;
		}
		s = strchr(s, '\n');
	}
	return n;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t len;

	if (!f)
		return NULL;
	buf = calloc(1, 65536);
	len = buf ? fread(buf, 1, 65535, f) : 0;
	(void)len;
	fclose(f);
	return buf;
}

static const char *negative_dir(void)
{
	static char path[4096];
	char exe[4000];
	ssize_t len;
	char *slash;

	if (access("tests/conformance/negative", R_OK) == 0)
		return "tests/conformance/negative";
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return NULL;
	exe[len] = '\0';
	for (int up = 0; up < 3 && (slash = strrchr(exe, '/')); up++)
		*slash = '\0'; /* BUILD/tests/test_validate -> repo */
	snprintf(path, sizeof(path), "%s/tests/conformance/negative", exe);
	return access(path, R_OK) == 0 ? path : NULL;
}

TEST(conformance_unused_field_negatives_rejected)
{
	const char *dir = negative_dir();
	struct dirent *de;
	unsigned seen = 0;
	DIR *d;

	REQUIRE(dir, "tests/conformance/negative not found");
	d = opendir(dir);
	REQUIRE(d);
	while ((de = readdir(d))) {
		char path[8192];
		uint8_t raw[1024];
		struct bpfrt_prog *p = NULL;
		char *text;
		size_t len;
		int rc;

		if (strncmp(de->d_name, "unused-", 7) || !strstr(de->d_name, ".data"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = read_text(path);
		if (!text) {
			CHECK(0, "cannot read %s", path);
			continue;
		}
		len = parse_raw(text, raw, sizeof(raw));
		free(text);
		CHECK(len >= 8 && len % 8 == 0, "%s: %zu raw bytes", de->d_name, len);
		if (len < 8 || len % 8)
			continue;
		seen++;
		rc = load((const struct bpf_insn *)raw, len / 8, &p);
		CHECK(rc == -EINVAL && strstr(bpfrt_last_error(), "insn 0:") &&
		      strstr(bpfrt_last_error(), "reserved field"),
		      "%s: rc %d: %s", de->d_name, rc, bpfrt_last_error());
		bpfrt_prog_free(p);
	}
	closedir(d);
	CHECK(seen >= 45, "only %u unused-*.data files", seen);
}
