/* Register liveness (isa/liveness.h), the analysis the verifier's pruning
 * and the x86-64 JIT's optimizer share: the fixed point through a loop's
 * back edge, how each user's flags model calls, lddw halves. */
#include "testlib.h"
#include "insns.h"
#include "core/prog.h"
#include "isa/liveness.h"

#include <string.h>

#define R(n) (1u << (n))
#define ARGS (R(1) | R(2) | R(3) | R(4) | R(5))
#define CALLEE_SAVED (R(6) | R(7) | R(8) | R(9))
#define TWO_ARGS_ID 2

static uint64_t dummy_helper(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a + b + c + d + e;
}

static const struct bpfrt_helper helpers[TWO_ARGS_ID + 1] = {
	[TWO_ARGS_ID] = { .name = "two_args", .fn = dummy_helper,
			  .args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING } },
};

static struct bpfrt_prog prog_of(const struct bpf_insn *insns, uint32_t n)
{
	return (struct bpfrt_prog){ .insns = (struct bpf_insn *)insns, .insn_cnt = n,
				    .helpers = (struct bpfrt_helper *)helpers,
				    .helper_cnt = TWO_ARGS_ID + 1 };
}

TEST(loop_reaches_the_fixed_point_through_its_back_edge)
{
	const struct bpf_insn insns[] = {
		MOV64_IMM(1, 0),
		MOV64_IMM(2, 10),
		JMP_REG(BPF_JGE, 1, 2, 2),   /* 2: head, exits to 5 */
		ALU64_IMM(BPF_ADD, 1, 1),
		JA(-3),                      /* 4: back to the head */
		MOV64_REG(0, 1),
		EXIT(),
	};
	struct bpfrt_prog prog = prog_of(insns, ARRAY_LEN(insns));
	uint16_t in[ARRAY_LEN(insns)], out[ARRAY_LEN(insns)];

	REQUIRE(bpfrt_reg_liveness(&prog, insns, ARRAY_LEN(insns), 0, in, out) == 0);
	CHECK(in[0] == 0 && out[0] == R(1));
	CHECK(in[1] == R(1) && out[1] == (R(1) | R(2)));
	CHECK(in[2] == (R(1) | R(2)));
	/* only a second pass carries the head's registers to the jump */
	CHECK(in[4] == (R(1) | R(2)) && out[4] == (R(1) | R(2)), "in %#x out %#x", in[4], out[4]);
	CHECK(in[5] == R(1) && out[5] == R(0));
	CHECK(in[6] == R(0) && out[6] == 0);
}

TEST(flags_decide_what_calls_read)
{
	const struct bpf_insn insns[] = {
		MOV64_IMM(6, 1),
		MOV64_IMM(1, 1),
		MOV64_IMM(2, 2),
		MOV64_IMM(3, 3),
		CALL_HELPER(TWO_ARGS_ID),    /* 4 */
		CALL_LOCAL(1),               /* 5: to 7 */
		EXIT(),
		MOV64_IMM(0, 0),             /* 7: the callee */
		EXIT(),
	};
	struct bpfrt_prog prog = prog_of(insns, ARRAY_LEN(insns));
	uint16_t in[ARRAY_LEN(insns)];

	/* the verifier's: a helper reads what its prototype declares */
	REQUIRE(bpfrt_reg_liveness(&prog, insns, ARRAY_LEN(insns), BPFRT_LIVE_HELPER_PROTOTYPES,
				   in, NULL) == 0);
	CHECK(in[4] == (R(1) | R(2)), "r3 is dead: %#x", in[4]);
	CHECK(in[5] == ARGS, "a local call's arguments are unknown: all of r1-r5");
	CHECK(in[0] == 0 && in[6] == R(0) && in[7] == 0 && in[8] == R(0));

	/* without prototypes every call reads r1-r5 */
	REQUIRE(bpfrt_reg_liveness(&prog, insns, ARRAY_LEN(insns), 0, in, NULL) == 0);
	CHECK(in[4] == ARGS && in[3] == (R(1) | R(2) | R(4) | R(5)) && in[0] == (R(4) | R(5)));

	/* the x86-64 JIT's: a callee works in the caller's r6-r9 */
	REQUIRE(bpfrt_reg_liveness(&prog, insns, ARRAY_LEN(insns),
				   BPFRT_LIVE_LOCAL_CALL_READS_R6_R9, in, NULL) == 0);
	CHECK(in[5] == (ARGS | CALLEE_SAVED) && in[4] == (ARGS | CALLEE_SAVED));
	CHECK(in[0] == (R(4) | R(5) | R(7) | R(8) | R(9)), "r6 is set first: %#x", in[0]);
}

TEST(lddw_second_half_is_no_instruction)
{
	const struct bpf_insn insns[] = {
		LDDW(1, 0x123456789ull),
		MOV64_REG(0, 1),
		EXIT(),
	};
	struct bpfrt_prog prog = prog_of(insns, ARRAY_LEN(insns));
	uint16_t in[ARRAY_LEN(insns)], out[ARRAY_LEN(insns)];

	memset(in, 0xff, sizeof(in));
	memset(out, 0xff, sizeof(out));
	REQUIRE(bpfrt_reg_liveness(&prog, insns, ARRAY_LEN(insns), 0, in, out) == 0);
	CHECK(in[0] == 0 && out[0] == R(1));
	CHECK(in[1] == 0 && out[1] == 0, "the second half: in %#x out %#x", in[1], out[1]);
	CHECK(in[2] == R(1) && out[2] == R(0));
	/* live_out alone (the JIT's call) gives the same answer */
	memset(out, 0xff, sizeof(out));
	REQUIRE(bpfrt_reg_liveness(&prog, insns, ARRAY_LEN(insns), 0, NULL, out) == 0);
	CHECK(out[0] == R(1) && out[1] == 0 && out[2] == R(0) && out[3] == 0);
}
