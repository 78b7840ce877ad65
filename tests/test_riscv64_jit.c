/* riscv64 JIT specifics (runs on riscv64 only, natively or under qemu-user;
 * skipped elsewhere): the base-ISA and the Zba/Zbb code paths (forced with
 * BPFRT_RISCV_EXT, the latter only where the CPU executes Zbb), RFC 9669
 * division corner cases, 12-bit-overflowing offsets and immediates, jumps
 * and calls past jal's 1 MiB reach, atomics from several threads, the trap
 * fill and the listing, private stacks (frames of local calls and
 * callbacks, tail calls, aborts, far TLS slots). Arch-neutral JIT behaviour is covered by test_jit,
 * test_conformance and test_differential. */
#include "testlib.h"
#include "insns.h"
#include "jit_support.h"
#include "bpfrt/bpfrt.h"
#include "core/config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__riscv) && __riscv_xlen == 64

#include "stack/privstack.h"
#include "jit/backend.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>

static struct bpfrt_prog *load(const struct bpf_insn *insns, size_t n)
{
	return load_insns("riscv64", insns, n, true, 0);
}

/* Counts image words w with (w & mask) == match. */
static size_t count_words(const struct bpfrt_prog *p, uint32_t mask, uint32_t match)
{
	size_t len, n = 0;
	const uint8_t *img = bpfrt_prog_jited(p, &len);

	for (size_t off = 0; img && off + 4 <= len; off += 4) {
		uint32_t w;

		memcpy(&w, img + off, 4);
		n += (w & mask) == match;
	}
	return n;
}

#define REV8_MASK   0xfff0707fu
#define REV8_MATCH  0x6b805013u
#define ADDUW_MASK  0xfe00707fu
#define ADDUW_MATCH 0x0800003bu

/* ---- base ISA and Zba/Zbb paths --------------------------------------- */

static sigjmp_buf probe_env;

static void probe_sigill(int sig)
{
	siglongjmp(probe_env, 1);
}

/* Whether this CPU executes rev8 and add.uw (a kernel without hwprobe
 * cannot say; qemu-user executes them). */
static bool cpu_runs_zba_zbb(void)
{
	struct sigaction sa = { .sa_handler = probe_sigill }, old;
	volatile bool ok = false;
	unsigned long v = 0x0102030405060708ul;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, &old);
	if (!sigsetjmp(probe_env, 1)) {
		__asm__ volatile(".insn i 0x13, 5, %0, %0, 0x6b8\n\t" /* rev8 */
				 ".insn r 0x3b, 0, 4, %0, %0, zero"   /* add.uw */
				 : "+r"(v));
		ok = v == 0x04030201ul; /* zext.w(rev8(v)) */
	}
	sigaction(SIGILL, &old, NULL);
	return ok;
}

/* 32-bit ALU results (zero-extension), movsx, every byte swap. */
static void build_zext_swaps(struct pb *p)
{
	pb_lddw(p, 6, 0x8899aabbccddeeffull);
	pb_add(p, MOV64_IMM(0, 0));
	/* each step: r2 = r6 transformed, r0 = r0 * 31 + r2 */
	static const struct bpf_insn ops[] = {
		ALU32_IMM(BPF_ADD, 2, 1), ALU32_IMM(BPF_SUB, 2, 0x7fffffff),
		ALU32_REG(BPF_MUL, 2, 6), ALU32_IMM(BPF_LSH, 2, 0), ALU32_IMM(BPF_ARSH, 2, 3),
		ALU32_IMM(BPF_RSH, 2, 31), ALU32_IMM(BPF_NEG, 2, 0), MOV32_REG(2, 2),
		ALU32_IMM(BPF_XOR, 2, -1), ALU32_IMM(BPF_OR, 2, 0x12345),
		MOVSX64_REG(2, 2, 8), MOVSX64_REG(2, 2, 16), MOVSX64_REG(2, 2, 32),
		MOVSX32_REG(2, 2, 8), MOVSX32_REG(2, 2, 16),
		ENDIAN(BPF_TO_LE, 2, 16), ENDIAN(BPF_TO_LE, 2, 32), ENDIAN(BPF_TO_LE, 2, 64),
		ENDIAN(BPF_TO_BE, 2, 16), ENDIAN(BPF_TO_BE, 2, 32), ENDIAN(BPF_TO_BE, 2, 64),
		BSWAP(2, 16), BSWAP(2, 32), BSWAP(2, 64),
	};
	for (size_t k = 0; k < ARRAY_LEN(ops); k++) {
		pb_add(p, MOV64_REG(2, 6));
		pb_add(p, ops[k]);
		pb_add(p, ALU64_IMM(BPF_MUL, 0, 31));
		pb_add(p, ALU64_REG(BPF_ADD, 0, 2));
	}
	pb_add(p, EXIT());
}

static void check_ext_path(const char *ext, bool want_zb)
{
	struct pb p = { 0 };
	struct bpfrt_prog *prog;
	uint64_t r0, mem = 0;

	setenv("BPFRT_RISCV_EXT", ext, 1);
	bpfrt_config_reread();
	build_zext_swaps(&p);
	run_both_mem(p.i, p.n, &mem, sizeof(mem), &r0);
	prog = load(p.i, p.n);
	REQUIRE(prog, "%s", bpfrt_last_error());
	if (want_zb) {
		CHECK(count_words(prog, REV8_MASK, REV8_MATCH) >= 6, "no rev8 with %s", ext);
		CHECK(count_words(prog, ADDUW_MASK, ADDUW_MATCH) >= 10, "no zext.w with %s", ext);
	} else {
		CHECK(count_words(prog, REV8_MASK, REV8_MATCH) == 0, "rev8 with %s", ext);
		CHECK(count_words(prog, ADDUW_MASK, ADDUW_MATCH) == 0, "zext.w with %s", ext);
	}
	bpfrt_prog_free(prog);
	pb_free(&p);
	unsetenv("BPFRT_RISCV_EXT");
	bpfrt_config_reread();
}

TEST(base_isa_path)
{
	check_ext_path("none", false);
}

TEST(zba_zbb_path)
{
	if (!cpu_runs_zba_zbb())
		SKIP("this CPU does not execute Zba/Zbb");
	check_ext_path("zba,zbb", true);
}

/* ---- division ----------------------------------------------------------- */

/* RISC-V divides by zero into all ones and leaves the remainder; BPF wants
 * 0 and the (32-bit: zero-extended) dividend. */
TEST(division_corner_cases)
{
	static const uint64_t vals[] = {
		0, 1, 7, 0x80000000ull, 0xffffffffull, 0x8000000000000000ull, ~0ull,
		0xffffffff80000000ull, 0x123456789abcdefull,
	};
	static const uint8_t ops[] = { BPF_DIV, BPF_MOD };

	for (unsigned a = 0; a < ARRAY_LEN(vals); a++)
		for (unsigned d = 0; d < ARRAY_LEN(vals); d++)
			for (unsigned o = 0; o < 2; o++)
				for (int cls = 0; cls < 2; cls++)
					for (int16_t sign = 0; sign < 2; sign++) {
						struct pb p = { 0 };
						uint64_t r0, mem = 0;
						uint8_t c = cls ? BPF_ALU64 : BPF_ALU;

						pb_lddw(&p, 0, vals[a]);
						pb_lddw(&p, 3, vals[d]);
						pb_add(&p, INSN(c | ops[o] | BPF_X, 0, 3, sign, 0));
						pb_lddw(&p, 4, vals[a]);
						pb_add(&p, INSN(c | ops[o] | BPF_K, 4, 0, sign,
								(int32_t)vals[d]));
						pb_add(&p, ALU64_IMM(BPF_LSH, 0, 1));
						pb_add(&p, ALU64_REG(BPF_XOR, 0, 4));
						pb_add(&p, EXIT());
						if (!run_both_mem(p.i, p.n, &mem, sizeof(mem), &r0))
							printf("# %#" PRIx64 " op %u cls %d sign %d by %#" PRIx64 "\n",
							       vals[a], ops[o], cls, sign, vals[d]);
						pb_free(&p);
						if (tl_failed())
							return;
					}
}

/* ---- offsets and immediates --------------------------------------------- */

/* Offsets beyond 12 bits go through a scratch register; so do immediates.
 * Plain loads and stores may be misaligned, as in BPF. */
TEST(large_offsets_and_immediates)
{
	static uint8_t mem[65536 + 64] __attribute__((aligned(8)));
	static const int16_t offs[] = { -32768, -2049, -2048, -1, 0, 2047, 2048, 32760 };
	struct pb p = { 0 };
	uint64_t r0;

	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)(i * 13 + 1);
	pb_add(&p, MOV64_REG(6, 1));
	pb_add(&p, ALU64_IMM(BPF_ADD, 6, 32768));
	pb_add(&p, MOV64_IMM(0, 0));
	for (unsigned k = 0; k < ARRAY_LEN(offs); k++) {
		int16_t off = offs[k];

		pb_add(&p, ST(BPF_DW, 6, off, -123456789));
		pb_add(&p, LDX(BPF_W, 2, 6, off));
		pb_add(&p, ALU64_REG(BPF_ADD, 0, 2));
		pb_add(&p, LDXSX(BPF_H, 2, 6, off + 2));
		pb_add(&p, ALU64_REG(BPF_XOR, 0, 2));
		pb_add(&p, STX(BPF_B, 6, 0, off + 5));
		if (!(off & 7)) { /* atomics must be aligned */
			pb_add(&p, MOV64_IMM(3, 0x1001));
			pb_add(&p, ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 6, 3, off));
			pb_add(&p, ALU64_REG(BPF_ADD, 0, 3));
		}
		pb_add(&p, ALU64_IMM(BPF_ADD, 0, 0x7ff00801));
		pb_add(&p, ALU64_IMM(BPF_AND, 0, -4097));
		pb_add(&p, ALU64_IMM(BPF_SUB, 0, -2048));
		pb_add(&p, JMP_IMM(BPF_JGT, 0, 0x12345678, 1));
		pb_add(&p, ALU64_IMM(BPF_OR, 0, 0x800));
	}
	pb_add(&p, EXIT());
	run_both_mem(p.i, p.n, mem, sizeof(mem), &r0);
	pb_free(&p);
}

/* ---- reach ---------------------------------------------------------------- */

/* 300,000 4-byte instructions put targets past jal's +-1 MiB: auipc+jalr
 * for the backward gotol, the forward gotol and the local call. */
TEST(jumps_and_calls_beyond_1mib)
{
	const size_t fill = 300000;
	struct pb p = { 0 };
	uint64_t r0, mem = 0;
	size_t loop, call;

	pb_add(&p, MOV64_IMM(0, 7));
	pb_add(&p, MOV64_IMM(7, 0));
	loop = p.n;
	pb_add(&p, ALU64_IMM(BPF_ADD, 7, 1));
	pb_add(&p, JMP_IMM(BPF_JNE, 7, 2, 1));
	pb_add(&p, GOTOL((int32_t)fill));     /* second round: forward over the fill */
	for (size_t k = 0; k < fill; k++)
		pb_add(&p, ALU64_IMM(BPF_ADD, 0, 1));
	pb_add(&p, JMP_IMM(BPF_JGT, 7, 2, 1));
	pb_add(&p, GOTOL((int32_t)loop - (int32_t)p.n - 1));
	pb_add(&p, MOV64_REG(1, 7));
	call = p.n;
	pb_add(&p, CALL_LOCAL(0));
	pb_add(&p, EXIT());
	p.i[call].imm = (int32_t)(p.n - call - 1);
	pb_add(&p, MOV64_REG(0, 1));
	pb_add(&p, ALU64_IMM(BPF_MUL, 0, 3));
	pb_add(&p, EXIT());
	REQUIRE(run_both_mem(p.i, p.n, &mem, sizeof(mem), &r0));
	CHECK(r0 == 9, "r0 %#" PRIx64, r0);
	pb_free(&p);
}

/* ---- atomics ----------------------------------------------------------- */

#define THREADS 4
#define ROUNDS  2000

static struct bpfrt_prog *atomic_prog;

/* r1 = counters: amoadd.d, amoadd.w, an lr/sc cmpxchg increment loop */
static void *atomic_worker(void *arg)
{
	uint64_t *counters = arg, r0;

	for (int i = 0; i < ROUNDS; i++)
		if (bpfrt_prog_run(atomic_prog, BPFRT_EXEC_JIT, (uint64_t)(uintptr_t)counters, 0, &r0))
			return (void *)1;
	return NULL;
}

TEST(atomics_from_threads)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(2, 1),
		ATOMIC(BPF_DW, BPF_ADD, 1, 2, 0),
		ATOMIC(BPF_W, BPF_ADD | BPF_FETCH, 1, 2, 8),
		/* retry: r0 = *(u32 *)(r1 + 16); r3 = r0 + 1; cmpxchg32 */
		LDX(BPF_W, 0, 1, 16),
		MOV64_REG(3, 0),
		ALU64_IMM(BPF_ADD, 3, 1),
		MOV64_REG(4, 0),
		ATOMIC(BPF_W, BPF_CMPXCHG, 1, 3, 16),
		JMP_REG(BPF_JNE, 0, 4, -6),
		EXIT(),
	};
	static uint64_t counters[3] = { 0, 0x7ffffff0ull, 0xfffffff0ull - THREADS * ROUNDS };
	uint32_t w1 = (uint32_t)counters[1], w2 = (uint32_t)counters[2];
	pthread_t th[THREADS];

	atomic_prog = load(prog, ARRAY_LEN(prog));
	REQUIRE(atomic_prog, "%s", bpfrt_last_error());
	for (int t = 0; t < THREADS; t++)
		REQUIRE(pthread_create(&th[t], NULL, atomic_worker, counters) == 0);
	for (int t = 0; t < THREADS; t++) {
		void *res;

		pthread_join(th[t], &res);
		CHECK(res == NULL, "thread %d: %s", t, bpfrt_last_error());
	}
	CHECK(counters[0] == THREADS * ROUNDS, "%" PRIu64, counters[0]);
	CHECK((uint32_t)counters[1] == w1 + THREADS * ROUNDS, "%#" PRIx64, counters[1]);
	CHECK((uint32_t)counters[2] == w2 + THREADS * ROUNDS, "%#" PRIx64, counters[2]);
	bpfrt_prog_free(atomic_prog);
	atomic_prog = NULL;
}

/* ---- private stacks ----------------------------------------------------- */

#define LDDW_FUNC(DST, REL) \
	INSN(BPF_LD | BPF_DW | BPF_IMM, DST, BPF_PSEUDO_FUNC, 0, REL), INSN(0, 0, 0, 0, 0)

/* This thread's frame top of prog's private stack, 0 while in use. */
static uintptr_t slot_of(const struct bpfrt_prog *p)
{
	return (uintptr_t)bpfrt_privstack_slots[p->privstack_id];
}

/* main -> sub1 -> sub2, then bpf_loop(3, cb) where cb calls sub2 too. r1 = out: out[0] main's r10, out[1] sub1's, out[2]
 * sub2's under sub1, out[3] cb's, out[4] sub2's under cb, out[5] += 0x300
 * per callback. r0 = 0x1436 when every frame kept its values. */
static const struct bpf_insn frames_prog[] = {
	/* 0: main(out) */
	STX(BPF_DW, 10, 1, -8),
	MOV64_IMM(2, 0x1111),
	STX(BPF_DW, 10, 2, -64),
	STX(BPF_DW, 1, 10, 0),
	CALL_LOCAL(13),                         /* -> 18 */
	LDX(BPF_DW, 1, 10, -8),
	LDX(BPF_DW, 2, 10, -64),
	ALU64_REG(BPF_ADD, 0, 2),
	STX(BPF_DW, 10, 0, -16),
	MOV64_REG(3, 1),
	MOV64_IMM(1, 3),
	LDDW_FUNC(2, 21),                       /* -> 33 */
	MOV64_IMM(4, 0),
	CALL_HELPER(BPF_FUNC_loop),
	LDX(BPF_DW, 1, 10, -16),
	ALU64_REG(BPF_ADD, 0, 1),
	EXIT(),
	/* 18: sub1(out) */
	STX(BPF_DW, 10, 1, -32),
	STX(BPF_DW, 1, 10, 8),
	MOV64_IMM(3, 0x22),
	STX(BPF_DW, 10, 3, -8),
	ALU64_IMM(BPF_ADD, 1, 16),
	CALL_LOCAL(3),                          /* -> 27 */
	LDX(BPF_DW, 3, 10, -8),
	ALU64_REG(BPF_ADD, 0, 3),
	EXIT(),
	/* 27: sub2(p): *p = r10, r0 = 0x300 through its frame */
	STX(BPF_DW, 1, 10, 0),
	MOV64_IMM(0, 0x300),
	STX(BPF_DW, 10, 0, -16),
	ST(BPF_DW, 10, -8, 0),
	LDX(BPF_DW, 0, 10, -16),
	EXIT(),
	/* 33: cb(i, out) */
	STX(BPF_DW, 10, 2, -8),
	STX(BPF_DW, 2, 10, 24),
	MOV64_REG(1, 2),
	ALU64_IMM(BPF_ADD, 1, 32),
	CALL_LOCAL(-11),                        /* -> 27 */
	LDX(BPF_DW, 2, 10, -8),
	LDX(BPF_DW, 3, 2, 40),
	ALU64_REG(BPF_ADD, 3, 0),
	STX(BPF_DW, 2, 3, 40),
	MOV64_IMM(0, 0),
	EXIT(),
};

TEST(private_stack_frames_of_calls_and_callbacks)
{
	struct bpfrt_prog *p = load_insns("riscv64_priv", frames_prog, ARRAY_LEN(frames_prog), true,
					  BPFRT_F_PRIVATE_STACK);
	struct bpfrt_privstack_info info = { .sz = sizeof(info) };
	uint64_t out[8], r0 = 0;
	uintptr_t top, here = (uintptr_t)&here;

	REQUIRE(p, "%s", bpfrt_last_error());
	REQUIRE(!bpfrt_prog_privstack_info(p, &info) && info.enabled);
	for (int run = 0; run < 2; run++) { /* the slow claim, then the fast one */
		memset(out, 0, sizeof(out));
		CHECK(bpfrt_prog_run(p, BPFRT_EXEC_JIT, (uintptr_t)out, 0, &r0) == 0, "%s",
		      bpfrt_last_error());
		CHECK(r0 == 0x1436, "run %d: r0 %#" PRIx64, run, r0);
		CHECK(out[5] == 3 * 0x300, "run %d: callbacks %#" PRIx64, run, out[5]);
		/* given back: the slot holds the frame top main ran with */
		top = slot_of(p);
		CHECK(top && out[0] == top, "run %d: main r10 %#" PRIx64 " top %#zx", run,
		      out[0], (size_t)top);
		/* storing r10 gives each function a frame of 512 */
		CHECK(out[1] == top - p->subprogs[0].stack_depth &&
		      out[2] == out[1] - p->subprogs[1].stack_depth,
		      "callee frames below the caller's: %#" PRIx64 " %#" PRIx64, out[1], out[2]);
		/* the callback runs on a native frame (C called it), its callee
		 * below it */
		CHECK(out[3] - here + (1u << 20) < (2u << 20), "callback r10 %#" PRIx64
		      " far from the native stack %#zx", out[3], (size_t)here);
		CHECK(out[4] == out[3] - p->subprogs[3].stack_depth, "%#" PRIx64 " %#" PRIx64,
		      out[4], out[3]);
	}
	bpfrt_prog_free(p);

	/* the same program on native frames and in the interpreter */
	p = load_insns("riscv64_priv", frames_prog, ARRAY_LEN(frames_prog), true,
		       BPFRT_F_DISABLE_PRIVATE_STACK);
	REQUIRE(p, "%s", bpfrt_last_error());
	memset(out, 0, sizeof(out));
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_JIT, (uintptr_t)out, 0, &r0) == 0 && r0 == 0x1436);
	CHECK(out[5] == 3 * 0x300, "%#" PRIx64, out[5]);
	memset(out, 0, sizeof(out));
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, (uintptr_t)out, 0, &r0) == 0 && r0 == 0x1436);
	CHECK(out[5] == 3 * 0x300, "%#" PRIx64, out[5]);
	bpfrt_prog_free(p);
}

/* Tail calls out of private-stack programs, from main and from a
 * subprogram, into a private-stack program: every stack is given back. */
TEST(private_stack_tail_calls)
{
	struct bpfrt_map *map;
	struct bpfrt_prog *from_main, *from_sub, *target;
	uint64_t ctx = 5, r0 = 0;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 1, NULL, &map) == 0);
	const struct bpf_insn t[] = {
		STX(BPF_DW, 10, 1, -128),
		LDX(BPF_DW, 2, 10, -128),
		LDX(BPF_DW, 0, 2, 0),
		ALU64_IMM(BPF_ADD, 0, 20),
		EXIT(),
	};
	const struct bpf_insn m[] = {
		ST(BPF_DW, 10, -8, 1),
		LDDW(2, (uintptr_t)map),
		MOV64_IMM(3, 0),
		CALL_HELPER(BPF_FUNC_tail_call),
		MOV64_IMM(0, 99),
		EXIT(),
	};
	const struct bpf_insn s[] = {
		MOV64_IMM(6, 1000),
		ST(BPF_DW, 10, -8, 5),
		CALL_LOCAL(4),                  /* -> 7 */
		ALU64_REG(BPF_ADD, 0, 6),       /* r6 survives the tail call */
		LDX(BPF_DW, 1, 10, -8),
		ALU64_REG(BPF_ADD, 0, 1),       /* and main's frame */
		EXIT(),
		/* 7: subprogram */
		MOV64_IMM(6, 7),
		ST(BPF_DW, 10, -16, 77),
		LDDW(2, (uintptr_t)map),
		MOV64_IMM(3, 0),
		CALL_HELPER(BPF_FUNC_tail_call),
		MOV64_IMM(0, 99),
		EXIT(),
	};
	target = load_insns("riscv64_priv", t, ARRAY_LEN(t), true, BPFRT_F_PRIVATE_STACK);
	from_main = load_insns("riscv64_priv", m, ARRAY_LEN(m), true, BPFRT_F_PRIVATE_STACK);
	from_sub = load_insns("riscv64_priv", s, ARRAY_LEN(s), true, BPFRT_F_PRIVATE_STACK);
	REQUIRE(target && from_main && from_sub, "%s", bpfrt_last_error());
	REQUIRE(bpfrt_map_update_prog(map, 0, target) == 0);
	for (int run = 0; run < 2; run++) {
		CHECK(bpfrt_prog_run(from_main, BPFRT_EXEC_JIT, (uintptr_t)&ctx, 0, &r0) == 0 &&
		      r0 == 25, "from main: r0 %" PRIu64 " %s", r0, bpfrt_last_error());
		CHECK(bpfrt_prog_run(from_sub, BPFRT_EXEC_JIT, (uintptr_t)&ctx, 0, &r0) == 0 &&
		      r0 == 25 + 1000 + 5, "from a subprogram: r0 %" PRIu64 " %s", r0,
		      bpfrt_last_error());
		CHECK(slot_of(target) && slot_of(from_main) && slot_of(from_sub),
		      "a stack was not given back: %#zx %#zx %#zx", (size_t)slot_of(target),
		      (size_t)slot_of(from_main), (size_t)slot_of(from_sub));
	}
	bpfrt_map_delete_prog(map, 0);
	CHECK(bpfrt_prog_run(from_main, BPFRT_EXEC_JIT, (uintptr_t)&ctx, 0, &r0) == 0 && r0 == 99);
	CHECK(bpfrt_prog_run(from_sub, BPFRT_EXEC_JIT, (uintptr_t)&ctx, 0, &r0) == 0 &&
	      r0 == 99 + 1000 + 5, "r0 %" PRIu64, r0);
	CHECK(slot_of(from_main) && slot_of(from_sub));
	bpfrt_map_free(map);
	bpfrt_prog_free(from_main);
	bpfrt_prog_free(from_sub);
	bpfrt_prog_free(target);
}

/* callx to an unregistered helper two calls down: the abort stub gives
 * the stack back and restores the host's callee-saved registers, which
 * the loop below keeps its state in. */
static __attribute__((noinline)) uint64_t abort_loop(struct bpfrt_prog *p, uint64_t a,
						      uint64_t b, uint64_t c, int *errs)
{
	uint64_t r0;

	for (int i = 0; i < 20; i++) {
		*errs += bpfrt_prog_run(p, BPFRT_EXEC_JIT, i, 0, &r0) == -EINVAL;
		a = a * 3 + (uint64_t)i;
		b ^= a << 7;
		c += a ^ b;
	}
	return a + b + c;
}

TEST(private_stack_callx_abort)
{
	static const struct bpf_insn insns[] = {
		MOV64_IMM(6, 1),
		ST(BPF_DW, 10, -256, 7),
		CALL_LOCAL(1),                  /* -> 3 */
		EXIT(),
		/* 3: clobber every BPF register, then callx 499 */
		MOV64_IMM(6, -1), MOV64_IMM(7, -2), MOV64_IMM(8, -3), MOV64_IMM(9, -4),
		ST(BPF_DW, 10, -8, 1),
		MOV64_IMM(0, 499),
		CALLX(0),
		EXIT(),
	};
	struct bpfrt_prog *p;
	uint64_t expect = 0, a = 1, b = 2, c = 3;
	int errs = 0;

	for (int i = 0; i < 20; i++) {
		a = a * 3 + (uint64_t)i;
		b ^= a << 7;
		c += a ^ b;
	}
	expect = a + b + c;
	bpfrt_helper_unregister(499);
	p = load_insns("riscv64_priv", insns, ARRAY_LEN(insns), true, BPFRT_F_PRIVATE_STACK);
	REQUIRE(p, "%s", bpfrt_last_error());
	CHECK(abort_loop(p, 1, 2, 3, &errs) == expect, "callee-saved registers lost");
	CHECK(errs == 20, "%d runs aborted", errs);
	CHECK(strstr(bpfrt_last_error(), "callx"), "%s", bpfrt_last_error());
	CHECK(slot_of(p), "the stack was not given back");
	bpfrt_prog_free(p);
}

/* The slot of a program id whose offset in the slot array does not fit a 12-bit
 * displacement is reached through a register: load programs until both
 * kinds ran (ids are handed out lowest first). */
TEST(private_stack_far_slot)
{
	static const struct bpf_insn insns[] = {
		STX(BPF_DW, 10, 1, -8),
		LDX(BPF_DW, 0, 10, -8),
		ALU64_IMM(BPF_ADD, 0, 1),
		EXIT(),
	};
	struct bpfrt_prog *progs[BPFRT_PRIVSTACK_MAX_IDS] = { 0 };
	bool seen[2] = { false, false };
	size_t n = 0;

	while (n < BPFRT_PRIVSTACK_MAX_IDS && !(seen[0] && seen[1])) {
		struct bpfrt_prog *p = load_insns("riscv64_priv", insns, ARRAY_LEN(insns), true,
						  BPFRT_F_PRIVATE_STACK);
		intptr_t off;
		bool far;
		uint64_t r0 = 0;

		if (!p)
			break; /* ids used up by this process */
		progs[n++] = p;
		off = (intptr_t)(p->privstack_id * sizeof(void *));
		far = off > 2047;
		if (seen[far])
			continue;
		seen[far] = true;
		printf("# id %u: slot at slots%+ld\n", p->privstack_id, (long)off);
		for (uint64_t run = 0; run < 2; run++) {
			CHECK(bpfrt_prog_run(p, BPFRT_EXEC_JIT, 41 + run, 0, &r0) == 0 &&
			      r0 == 42 + run, "id %u: %s", p->privstack_id, bpfrt_last_error());
			CHECK(slot_of(p), "id %u: not given back", p->privstack_id);
		}
	}
	CHECK(seen[1], "no far slot after %zu programs", n);
	while (n)
		bpfrt_prog_free(progs[--n]);
}

/* ---- traps and listing ------------------------------------------------- */

TEST(trap_fill_is_ebreak)
{
	uint8_t buf[40] __attribute__((aligned(8)));
	uint32_t w;
	uint16_t h;

	memset(buf, 0xaa, sizeof(buf));
	bpfrt_jit_riscv64.fill_traps(buf + 2, 35); /* 2-aligned start, odd tail */
	memcpy(&h, buf + 2, 2);
	CHECK(h == 0x9002, "c.ebreak expected, got %#x", h);
	for (size_t off = 4; off + 4 <= 36; off += 4) {
		memcpy(&w, buf + off, 4);
		CHECK(w == 0x00100073u, "ebreak expected at %zu, got %#x", off, w);
	}
	CHECK(buf[36] == 0, "odd tail byte %#x", buf[36]);
	CHECK(buf[0] == 0xaa && buf[1] == 0xaa && buf[37] == 0xaa, "wrote outside the range");
}

/* Capstone 4 has no RISC-V: the listing comes from binutils' objdump
 * (the cross suite always has riscv64-linux-gnu-objdump, run by the host
 * kernel when qemu-user passes the exec on), and degrades to raw words
 * with a note when there is none. */
TEST(dump_jited_riscv64_listing)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(0, 1),
		ST(BPF_DW, 10, -8, 5),
		CALL_LOCAL(1),
		EXIT(),
		MOV64_IMM(0, 2),
		EXIT(),
	};
	struct bpfrt_prog *p = load(prog, ARRAY_LEN(prog));
	char *text, *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	bool objdump;

	REQUIRE(p, "%s", bpfrt_last_error());
	text = jited_listing(p);
	REQUIRE(text);
	CHECK(strstr(text, "riscv64 code"), "%s", text);
	CHECK(strstr(text, "subprog 1"), "%s", text);
	objdump = !strstr(text, "raw instruction words");
	if (getenv("BPFRT_CROSS_QEMU"))
		CHECK(objdump, "make test-riscv64 has riscv64-linux-gnu-objdump: %s", text);
	if (objdump) {
		/* r0 = 1 (a5), the store through s5, the local call, ret */
		CHECK(strstr(text, "disassembled by ") && strstr(text, "objdump"), "%s", text);
		CHECK(strstr(text, "0: mov %r0, 1\n") &&
		      strstr(strstr(text, "0: mov %r0, 1\n"), ":  li       a5,1\n"), "%s", text);
		CHECK(strstr(text, "(s5)") && strstr(text, "  jal      "), "%s", text);
		CHECK(strstr(text, ":  ret      \n"), "%s", text);
		CHECK(!strstr(text, ".word"), "undecoded words: %s", text);
	}
	free(text);

	/* no objdump in PATH: raw words, and why */
	setenv("PATH", "/nonexistent", 1);
	text = jited_listing(p);
	if (path)
		setenv("PATH", path, 1);
	else
		unsetenv("PATH");
	REQUIRE(text);
	CHECK(strstr(text, "; no riscv64 disassembler") && strstr(text, "objdump") &&
	      strstr(text, "raw instruction words"), "%s", text);
	/* ret = jalr zero, 0(ra) */
	CHECK(strstr(text, ".word    0x00008067"), "%s", text);
	CHECK(!strstr(text, ".byte"), "odd bytes in a 4-byte-word image: %s", text);
	CHECK(strstr(text, "0: mov %r0, 1"), "%s", text);
	free(text);
	free(path);
	bpfrt_prog_free(p);
}

#else /* not riscv64 */

TL_SKIP_ALL("the riscv64 JIT runs on riscv64 only (make test-riscv64 runs it under qemu-user)")

#endif
