/* arm64 JIT specifics (runs on aarch64 only, natively or under qemu-user;
 * skipped elsewhere): both atomic paths (LSE and ldaxr/stlxr loops, the
 * latter forced with BPFRT_ARM64_NO_LSE=1), single- and multi-threaded;
 * RFC 9669 division corner cases; every memory offset encoding; long
 * branch forms past tbz/b.cond reach; callx aborts from a nested frame;
 * the capstone listing. Arch-neutral JIT behaviour is covered by
 * test_jit, test_conformance and test_differential. */
#include "testlib.h"
#include "insns.h"
#include "jit_support.h"
#include "bpfrt/bpfrt.h"
#include "core/config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#define CALLX_ID 310
#define UNREG_ID 311
#define ONE_ID   312

#if defined(__aarch64__)

static struct bpfrt_prog *load(const struct bpf_insn *insns, size_t n, bool jit)
{
	return load_insns("arm64", insns, n, jit, 0);
}

/* ---- atomics ------------------------------------------------------------ */

static void set_lse(bool on)
{
	if (on)
		unsetenv("BPFRT_ARM64_NO_LSE");
	else
		setenv("BPFRT_ARM64_NO_LSE", "1", 1);
	bpfrt_config_reread();
}

/* Every atomic op, both sizes, with r1 = memory and fetch results folded
 * into r0; offsets 0, small and large exercise the address computation. */
static void atomics_all_ops(bool lse)
{
	static const int32_t ops[] = {
		BPF_ADD, BPF_OR, BPF_AND, BPF_XOR,
		BPF_ADD | BPF_FETCH, BPF_OR | BPF_FETCH, BPF_AND | BPF_FETCH,
		BPF_XOR | BPF_FETCH, BPF_XCHG, BPF_CMPXCHG,
	};
	static const int16_t offs[] = { 0, 8, 4088 };
	uint8_t mem[4096 + 16];

	set_lse(lse);
	for (unsigned o = 0; o < ARRAY_LEN(ops); o++)
		for (int dw = 0; dw < 2; dw++)
			for (unsigned k = 0; k < ARRAY_LEN(offs); k++)
				for (int match = 0; match < 2; match++) {
					struct pb p = { 0 };
					uint64_t r0;

					for (size_t i = 0; i < sizeof(mem); i++)
						mem[i] = (uint8_t)(i * 7 + 3);
					pb_lddw(&p, 2, 0xf0f0f0f00ff00ff1ull);
					/* r0: cmpxchg expectation, equal or not */
					pb_add(&p, LDX(dw ? BPF_DW : BPF_W, 0, 1, offs[k]));
					if (!match)
						pb_add(&p, ALU64_IMM(BPF_ADD, 0, 1));
					pb_add(&p, ATOMIC(dw ? BPF_DW : BPF_W, ops[o], 1, 2, offs[k]));
					pb_add(&p, ALU64_IMM(BPF_MUL, 0, 31));
					pb_add(&p, ALU64_REG(BPF_ADD, 0, 2));
					pb_add(&p, EXIT());
					if (!run_both_mem(p.i, p.n, mem, sizeof(mem), &r0)) {
						printf("# op 0x%x %s off %d match %d lse %d\n", ops[o],
						       dw ? "dw" : "w", offs[k], match, lse);
						pb_free(&p);
						set_lse(true);
						return;
					}
					pb_free(&p);
				}
	set_lse(true);
}

TEST(atomics_lse)
{
	atomics_all_ops(true);
}

TEST(atomics_exclusive_loops)
{
	atomics_all_ops(false);
}

/* The listing shows which path a program was compiled with. */
TEST(atomics_path_in_listing)
{
	struct bpf_insn prog[] = {
		ST(BPF_DW, 10, -8, 1),
		MOV64_IMM(2, 5),
		ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 10, 2, -8),
		MOV64_REG(0, 2),
		EXIT(),
	};
	struct bpfrt_prog *p;
	char *text;

	set_lse(false);
	p = load(prog, ARRAY_LEN(prog), true);
	set_lse(true);
	REQUIRE(p, "%s", bpfrt_last_error());
	text = jited_listing(p);
	REQUIRE(text);
	CHECK(strstr(text, "ldaxr") && strstr(text, "stlxr") && strstr(text, "cbnz"), "%s", text);
	CHECK(!strstr(text, "ldaddal"), "%s", text);
	free(text);
	bpfrt_prog_free(p);

	p = load(prog, ARRAY_LEN(prog), true);
	REQUIRE(p, "%s", bpfrt_last_error());
	text = jited_listing(p);
	REQUIRE(text);
	/* capstone 4 prints LSE instructions as .byte: check the loop is gone */
	if (getauxval(AT_HWCAP) & (1ul << 8))
		CHECK(!strstr(text, "ldaxr") && !strstr(text, "stlxr"), "%s", text);
	else
		printf("# this CPU has no LSE atomics: the loops are its default\n");
	free(text);
	bpfrt_prog_free(p);
}

struct worker {
	struct bpfrt_prog *prog;
	uint64_t *shared;
	int err;
};

static void *atomic_worker(void *arg)
{
	struct worker *w = arg;
	uint64_t r0;

	w->err = bpfrt_prog_run(w->prog, BPFRT_EXEC_JIT, (uint64_t)(uintptr_t)w->shared, 0, &r0);
	return NULL;
}

/* Two threads hammer the same words: totals are exact only if every
 * read-modify-write is atomic, on both paths. */
static void atomics_threads(bool lse)
{
	enum { ITERS = 20000, THREADS = 2 };
	static const struct bpf_insn insns[] = {
		MOV64_IMM(2, ITERS),
		MOV64_IMM(3, 1),
		MOV64_IMM(4, 3),
		ATOMIC(BPF_DW, BPF_ADD, 1, 3, 0),               /* loop */
		MOV64_IMM(5, 1),
		ATOMIC(BPF_W, BPF_ADD | BPF_FETCH, 1, 5, 8),
		ATOMIC(BPF_DW, BPF_XOR, 1, 4, 16),
		MOV64_IMM(5, 2),
		ATOMIC(BPF_DW, BPF_XCHG, 1, 5, 24),
		LDX(BPF_DW, 0, 1, 32),                          /* cmpxchg increment */
		MOV64_REG(5, 0),
		ALU64_IMM(BPF_ADD, 5, 1),
		ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 5, 32),
		JMP_REG(BPF_JNE, 0, 5, 1),
		JA(0),
		ALU64_IMM(BPF_SUB, 2, 1),
		JMP_IMM(BPF_JNE, 2, 0, -14),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	uint64_t shared[5] = { 0 };
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	struct bpfrt_prog *prog;

	set_lse(lse);
	prog = load(insns, ARRAY_LEN(insns), true);
	set_lse(true);
	REQUIRE(prog, "%s", bpfrt_last_error());
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ prog, shared, -1 };
		REQUIRE(pthread_create(&tid[i], NULL, atomic_worker, &w[i]) == 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		CHECK(w[i].err == 0);
	}
	CHECK(shared[0] == (uint64_t)ITERS * THREADS, "add total %" PRIu64, shared[0]);
	CHECK(shared[1] == (uint64_t)ITERS * THREADS, "fetch-add total %#" PRIx64, shared[1]);
	CHECK(shared[2] == 0, "xor %" PRIu64, shared[2]);
	CHECK(shared[3] == 2);
	bpfrt_prog_free(prog);
}

TEST(atomics_threads_lse)
{
	atomics_threads(true);
}

TEST(atomics_threads_exclusive_loops)
{
	atomics_threads(false);
}

/* ---- ALU corner cases ----------------------------------------------------- */

struct div_case {
	uint8_t code;   /* class | op | src */
	int16_t off;    /* 1 = signed */
	uint64_t a, b;
	uint64_t want;
};

TEST(division_corner_cases)
{
	const uint64_t imin64 = (uint64_t)INT64_MIN, m1 = (uint64_t)-1;
	const struct div_case cases[] = {
		{ BPF_ALU64 | BPF_DIV, 0, 7, 0, 0 },
		{ BPF_ALU64 | BPF_MOD, 0, 7, 0, 7 },
		{ BPF_ALU | BPF_DIV, 0, 0x1000000007ull, 0, 0 },
		{ BPF_ALU | BPF_MOD, 0, 0x1000000007ull, 0x100000000ull, 7 },
		{ BPF_ALU64 | BPF_DIV, 1, imin64, m1, imin64 },
		{ BPF_ALU64 | BPF_MOD, 1, imin64, m1, 0 },
		{ BPF_ALU64 | BPF_MOD, 1, (uint64_t)-7, m1, 0 },
		{ BPF_ALU64 | BPF_MOD, 1, (uint64_t)-7, 0, (uint64_t)-7 },
		{ BPF_ALU64 | BPF_DIV, 1, (uint64_t)-7, 2, (uint64_t)-3 },
		{ BPF_ALU64 | BPF_MOD, 1, (uint64_t)-7, 2, (uint64_t)-1 },
		{ BPF_ALU | BPF_DIV, 1, 0x80000000u, 0xffffffffu, 0x80000000u },
		{ BPF_ALU | BPF_MOD, 1, 0x80000000u, 0xffffffffu, 0 },
		{ BPF_ALU | BPF_MOD, 1, 0xfffffff9u, 0, 0xfffffff9u },
		{ BPF_ALU | BPF_MOD, 1, 0xfffffff9u, 2, 0xffffffffu },
	};

	for (unsigned i = 0; i < ARRAY_LEN(cases); i++)
		for (int k = 0; k < 2; k++) {
			const struct div_case *c = &cases[i];
			struct pb p = { 0 };
			uint64_t r0;
			uint8_t none[1] = { 0 };

			/* the K form takes the low 32 bits, sign-extended for ALU64 */
			if (k && (int64_t)c->b != (int32_t)c->b && (c->code & 0x07) == BPF_ALU64)
				continue;
			if (k && (c->code & 0x07) == BPF_ALU && c->b > 0xffffffffu)
				continue;
			pb_lddw(&p, 0, c->a);
			pb_lddw(&p, 3, c->b);
			pb_add(&p, k ? INSN(c->code | BPF_K, 0, 0, c->off, (int32_t)c->b)
				     : INSN(c->code | BPF_X, 0, 3, c->off, 0));
			pb_add(&p, EXIT());
			if (run_both_mem(p.i, p.n, none, sizeof(none), &r0))
				CHECK(r0 == c->want, "case %u %s: %#" PRIx64 " want %#" PRIx64, i,
				      k ? "imm" : "reg", r0, c->want);
			pb_free(&p);
		}
}

/* ---- memory offsets --------------------------------------------------------- */

/* Loads and stores at offsets that need each encoding: scaled imm12,
 * unscaled imm9 (negative, unaligned), and a register offset. */
TEST(memory_offset_encodings)
{
	static const int16_t offs[] = { 0, 1, 7, 8, 255, 256, 4095, 4096, 8191, 16384, 32000,
					32767, -1, -8, -255, -256, -257, -4096, -32768 };
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	enum { BIAS = 32768 };
	uint8_t *mem = malloc(2 * BIAS + 16);

	REQUIRE(mem);
	for (unsigned o = 0; o < ARRAY_LEN(offs); o++)
		for (unsigned s = 0; s < ARRAY_LEN(sizes); s++) {
			struct pb p = { 0 };
			uint64_t r0;

			for (size_t i = 0; i < 2 * BIAS + 16; i++)
				mem[i] = (uint8_t)(i * 13 + 1);
			/* r1 = mem + BIAS */
			pb_add(&p, ALU64_IMM(BPF_ADD, 1, BIAS - 1));
			pb_add(&p, ALU64_IMM(BPF_ADD, 1, 1));
			pb_add(&p, LDX(sizes[s], 0, 1, offs[o]));
			if (sizes[s] != BPF_DW)
				pb_add(&p, LDXSX(sizes[s], 4, 1, offs[o]));
			else
				pb_add(&p, MOV64_IMM(4, 0));
			pb_add(&p, ALU64_REG(BPF_XOR, 0, 4));
			pb_add(&p, ST(sizes[s], 1, offs[o], -3));
			pb_add(&p, LDX(sizes[s], 5, 1, offs[o]));
			pb_add(&p, ALU64_REG(BPF_ADD, 0, 5));
			pb_lddw(&p, 6, 0x8877665544332211ull);
			pb_add(&p, STX(sizes[s], 1, 6, offs[o]));
			pb_add(&p, EXIT());
			if (!run_both_mem(p.i, p.n, mem, 2 * BIAS + 16, &r0)) {
				printf("# offset %d size 0x%x\n", offs[o], sizes[s]);
				pb_free(&p);
				free(mem);
				return;
			}
			pb_free(&p);
		}
	free(mem);
}

/* A 512-byte frame in every subprogram of an 8-deep chain: the deepest
 * offsets use the register form, and frames must not overlap. */
TEST(stack_frames_deep_chain)
{
	struct pb p = { 0 };
	uint64_t r0;
	uint8_t none[1] = { 0 };

	for (int f = 0; f < 8; f++) {
		pb_add(&p, ST(BPF_DW, 10, -512, f + 1));
		pb_add(&p, ST(BPF_DW, 10, -8, 100 + f));
		pb_add(&p, MOV64_IMM(0, 0));
		if (f < 7)
			pb_add(&p, CALL_LOCAL(5));
		else
			pb_add(&p, INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
		pb_add(&p, LDX(BPF_DW, 3, 10, -512));
		pb_add(&p, ALU64_REG(BPF_ADD, 0, 3));
		pb_add(&p, LDX(BPF_DW, 3, 10, -8));
		pb_add(&p, ALU64_REG(BPF_ADD, 0, 3));
		pb_add(&p, EXIT());
	}
	if (run_both_mem(p.i, p.n, none, sizeof(none), &r0))
		CHECK(r0 == 36 + 800 + 28, "r0 %" PRIu64, r0);
	pb_free(&p);
}

/* ---- long branches ------------------------------------------------------------ */

static uint64_t one(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return 1;
}

/* tbnz reaches 32 KiB, cbz and b.cond 1 MiB: jumps across 14,000 callx
 * (about 1.3 MiB of code) take the inverted-branch-over-b form, forward
 * and backward, taken and not. */
TEST(branches_beyond_short_reach)
{
	enum { UNITS = 14000 };
	static const struct bpfrt_helper h = {
		.name = "arm64_one", .fn = one, .ret = BPFRT_RET_INTEGER,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING,
			  BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};
	const int32_t l1 = 6 + 2 * UNITS;
	struct pb p = { 0 };
	uint64_t r0;
	uint8_t none[1] = { 0 };
	struct bpfrt_prog *pr;
	size_t len = 0;

	REQUIRE(bpfrt_helper_register(ONE_ID, &h) == 0, "%s", bpfrt_last_error());
	pb_add(&p, MOV64_IMM(7, 0));
	pb_add(&p, MOV64_IMM(3, 4));
	pb_add(&p, MOV64_IMM(6, ONE_ID));
	pb_add(&p, JMP_IMM(BPF_JNE, 7, 0, (int16_t)(l1 + 2 - 4)));     /* cbnz, not taken */
	pb_add(&p, JMP_IMM(BPF_JSET, 3, 4, (int16_t)(l1 - 5)));        /* tbnz, taken */
	pb_add(&p, MOV64_IMM(0, 0));                                    /* never runs */
	for (int i = 0; i < UNITS; i++) {
		pb_add(&p, CALLX(6));
		pb_add(&p, ALU64_REG(BPF_ADD, 7, 0));
	}
	pb_add(&p, ALU64_IMM(BPF_ADD, 3, 1));                           /* l1 */
	pb_add(&p, JMP_IMM(BPF_JEQ, 3, 5, (int16_t)(6 - (l1 + 2))));   /* b.eq back, once */
	pb_add(&p, MOV64_REG(0, 7));
	pb_add(&p, EXIT());
	pr = load(p.i, p.n, true);
	REQUIRE(pr, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_jited(pr, &len) && len > (1u << 20), "image %zu bytes", len);
	bpfrt_prog_free(pr);
	if (run_both_mem(p.i, p.n, none, sizeof(none), &r0))
		CHECK(r0 == UNITS, "r0 %" PRIu64, r0);
	pb_free(&p);
	bpfrt_helper_unregister(ONE_ID);
}

/* ---- calls ------------------------------------------------------------------ */

static uint64_t add5(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e;
}

/* callx with a bad id two frames deep: the run aborts, main's callee-saved
 * registers come back (the caller's x19-x28 survive), and the next run
 * works. */
TEST(callx_abort_from_nested_frame)
{
	static const struct bpfrt_helper h = {
		.name = "arm64_add5", .fn = add5, .ret = BPFRT_RET_INTEGER,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING,
			  BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};
	struct bpf_insn prog[] = {
		MOV64_REG(6, 1),                /* r6 = id to call */
		MOV64_IMM(7, 77), MOV64_IMM(8, 88), MOV64_IMM(9, 99),
		ST(BPF_DW, 10, -8, 5),
		MOV64_REG(1, 6),
		CALL_LOCAL(3),
		LDX(BPF_DW, 3, 10, -8),
		ALU64_REG(BPF_ADD, 0, 3),
		EXIT(),
		/* subprog: own frame, calls id r1 with r1..r5 = 1..5 */
		MOV64_REG(6, 1),
		ST(BPF_DW, 10, -16, 1),
		MOV64_IMM(1, 1), MOV64_IMM(2, 2), MOV64_IMM(3, 3), MOV64_IMM(4, 4),
		MOV64_IMM(5, 5),
		MOV64_IMM(9, 1234),
		CALLX(6),
		ALU64_REG(BPF_ADD, 0, 9),
		EXIT(),
	};
	struct bpfrt_prog *p;
	uint64_t r0 = 0;
	int err;

	bpfrt_helper_unregister(UNREG_ID);
	REQUIRE(bpfrt_helper_register(CALLX_ID, &h) == 0, "%s", bpfrt_last_error());
	p = load(prog, ARRAY_LEN(prog), true);
	REQUIRE(p, "%s", bpfrt_last_error());
	err = bpfrt_prog_run(p, BPFRT_EXEC_JIT, CALLX_ID, 0, &r0);
	CHECK(err == 0 && r0 == 55 + 1234 + 5, "err %d r0 %" PRIu64, err, r0);
	for (int i = 0; i < 3; i++) {
		err = bpfrt_prog_run(p, BPFRT_EXEC_JIT, UNREG_ID, 0, &r0);
		CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "insn 18: callx"), "err %d: %s",
		      err, bpfrt_last_error());
		err = bpfrt_prog_run(p, BPFRT_EXEC_JIT, 5000, 0, &r0);
		CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "helper 5000"), "err %d: %s",
		      err, bpfrt_last_error());
	}
	err = bpfrt_prog_run(p, BPFRT_EXEC_JIT, CALLX_ID, 0, &r0);
	CHECK(err == 0 && r0 == 55 + 1234 + 5, "after aborts: err %d r0 %" PRIu64, err, r0);
	bpfrt_prog_free(p);
	bpfrt_helper_unregister(CALLX_ID);
}

/* ---- listing ---------------------------------------------------------------- */

TEST(dump_jited_arm64_listing)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(0, 1),
		MOV64_IMM(2, 3),
		ALU64_REG(BPF_LSH, 0, 2),
		ALU64_IMM(BPF_DIV, 0, 3),
		ALU64_IMM(BPF_MOD, 0, 3),
		ST(BPF_DW, 10, -8, 5),
		LDX(BPF_DW, 0, 10, -8),
		JMP_IMM(BPF_JSET, 0, 8, 0),
		JMP_IMM(BPF_JEQ, 0, 0, 0),
		CALL_LOCAL(1),
		EXIT(),
		BSWAP(1, 64),
		MOV64_IMM(0, 9),
		EXIT(),
	};
	struct bpfrt_prog *p = load(prog, ARRAY_LEN(prog), true);
	char *text;

	REQUIRE(p, "%s", bpfrt_last_error());
	text = jited_listing(p);
	REQUIRE(text, "%s", bpfrt_last_error());
	CHECK(strstr(text, "arm64 code"), "%s", text);
	CHECK(strstr(text, "stp") && strstr(text, "x29, x30"), "%s", text);
	CHECK(strstr(text, "udiv") && strstr(text, "msub"), "%s", text);
	CHECK(strstr(text, "lsl"), "%s", text);
	CHECK(strstr(text, "bl "), "%s", text);
	CHECK(strstr(text, "ret"), "%s", text);
	CHECK(strstr(text, "rev"), "%s", text);
	CHECK(strstr(text, "subprog 1"), "%s", text);
	CHECK(!strstr(text, ".byte"), "undecodable bytes: %s", text);
	free(text);
	bpfrt_prog_free(p);
}

#else /* !__aarch64__ */

TL_SKIP_ALL("the arm64 JIT runs on aarch64 only (make test-arm64 runs it under qemu-user)")

#endif
