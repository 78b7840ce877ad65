/* Differential test: random valid programs must give the same r0 and the
 * same data buffer in the interpreter and the JIT, and the validator must
 * accept every one of them.
 *
 * Programs are built so they are valid by construction:
 *  - every register is initialised at function entry (r9 is the data base
 *    in main, a copy of r5 in a subprogram) and r1-r5 are re-initialised
 *    after every call, so nothing reads a clobbered register;
 *  - r9 is never written after the prologue; memory goes through r9 at
 *    in-bounds offsets or through r10 into the stack bytes each function
 *    fills with known values on entry (a temporary pointer copy in another
 *    register is overwritten right after its one access);
 *  - jumps go forward to item boundaries (never into an lddw, a loop body
 *    or another function), unconditional jumps sit behind a conditional
 *    skip so nothing is unreachable, and loops count a register that their
 *    body does not write down to 0;
 *  - function i only calls functions j > i (and always calls i + 1 at
 *    least once, so none is unreachable): no recursion, at most four
 *    frames.
 *
 * BPFRT_DIFF_SEED=N changes the master seed, BPFRT_DIFF_COUNT=N the number
 * of programs, BPFRT_DIFF_ONE=SEED runs (and prints) a single program.
 * BPFRT_JIT_IMAGES=FILE appends each program's JIT image digest to FILE
 * (tests/jit_images.h). */
#include "testlib.h"
#include "insns.h"
#include "jit_images.h"
#include "bpfrt/bpfrt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_DEFAULT_COUNT  25000
#define DIFF_MASTER_SEED    0x6469666674657374ull
#define DIFF_HELPER_ID      100
#define DATA_LEN            128
#define MAX_FRAME_MAIN      512  /* stack bytes main may use (the frame limit) */
#define MAX_FRAME_SUB       128  /* and each subprogram */
#define MAX_FUNCS           4
#define MAX_ITEMS           256
#define MAX_FAILS_SHOWN     5

/* ---- deterministic randomness ------------------------------------------ */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct gen {
	uint64_t rng;
	struct bpf_insn *insns;
	size_t cnt, cap;
	bool oom;
	bool use_callx;
	int nfuncs;
	int frame;      /* stack bytes of the function being generated */
	size_t func_start[MAX_FUNCS];
	/* local calls to patch once every function is placed */
	struct { size_t pc; int func; } calls[256];
	int ncalls;
};

static uint64_t rnd(struct gen *g) { return splitmix64(&g->rng); }
static uint32_t below(struct gen *g, uint32_t n) { return (uint32_t)(rnd(g) % n); }
static bool chance(struct gen *g, unsigned pct) { return below(g, 100) < pct; }

/* Values that find the corner cases (0, -1, sign bits, widths). */
static int32_t rnd_imm(struct gen *g)
{
	static const int32_t pool[] = {
		0, 1, -1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255,
		-2, -32, -64, 0x7fff, 0x8000, 0xffff, 0x10000, INT32_MAX, INT32_MIN,
		INT32_MIN + 1, 0x55555555, -0x55555556,
	};

	switch (below(g, 3)) {
	case 0:  return pool[below(g, sizeof(pool) / sizeof(pool[0]))];
	case 1:  return (int32_t)below(g, 256) - 128;
	default: return (int32_t)rnd(g);
	}
}

static uint64_t rnd_imm64(struct gen *g)
{
	static const uint64_t pool[] = {
		0, 1, ~0ull, 0x8000000000000000ull, 0x7fffffffffffffffull,
		0x80000000ull, 0xffffffffull, 0x7fffffffull, 0x100000000ull,
		0xffffffff80000000ull, 0x00000000ffff0000ull, 0x0123456789abcdefull,
	};

	if (chance(g, 40))
		return pool[below(g, sizeof(pool) / sizeof(pool[0]))];
	if (chance(g, 30))
		return (uint64_t)(int64_t)rnd_imm(g);
	return rnd(g);
}

/* ---- emission ------------------------------------------------------------ */

static void emit(struct gen *g, struct bpf_insn insn)
{
	if (g->cnt == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 512;
		struct bpf_insn *n = realloc(g->insns, cap * sizeof(*n));

		if (!n) {
			g->oom = true;
			return;
		}
		g->insns = n;
		g->cap = cap;
	}
	g->insns[g->cnt++] = insn;
}

static void emit_lddw(struct gen *g, uint8_t dst, uint64_t v)
{
	struct bpf_insn two[] = { LDDW(dst, v) };

	emit(g, two[0]);
	emit(g, two[1]);
}

static void init_reg(struct gen *g, uint8_t reg)
{
	if (chance(g, 50))
		emit_lddw(g, reg, rnd_imm64(g));
	else
		emit(g, MOV64_IMM(reg, rnd_imm(g)));
}

/* General registers the body may write: r0-r8 (r9 is the base). */
static uint8_t rnd_reg(struct gen *g) { return (uint8_t)below(g, 9); }

static uint8_t rnd_reg_except(struct gen *g, int avoid)
{
	uint8_t r;

	do
		r = rnd_reg(g);
	while (r == avoid);
	return r;
}

static const uint8_t alu_ops[] = {
	BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH, BPF_RSH,
	BPF_NEG, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH,
};

/* One ALU/ALU64 instruction writing dst (never `avoid`). */
static void gen_alu(struct gen *g, int avoid)
{
	uint8_t cls = chance(g, 50) ? BPF_ALU64 : BPF_ALU;
	uint8_t op = alu_ops[below(g, sizeof(alu_ops))];
	uint8_t dst = rnd_reg_except(g, avoid);
	int16_t off = 0;

	if (op == BPF_NEG) {
		emit(g, INSN(cls | BPF_NEG | BPF_K, dst, 0, 0, 0));
		return;
	}
	if ((op == BPF_DIV || op == BPF_MOD) && chance(g, 50))
		off = 1; /* sdiv / smod */
	if (chance(g, 50)) {
		emit(g, INSN(cls | op | BPF_K, dst, 0, off, rnd_imm(g)));
		return;
	}
	if (op == BPF_MOV && chance(g, 40)) {
		/* movsx: 8/16 for both, 32 only for the 64-bit form */
		static const int16_t widths[] = { 8, 16, 32 };

		off = widths[below(g, cls == BPF_ALU64 ? 3 : 2)];
	}
	emit(g, INSN(cls | op | BPF_X, dst, rnd_reg(g), off, 0));
}

/* Division and modulo at their edges: divisor 0, -1 or 1 (as 64- and
 * 32-bit values), dividend INT_MIN of either width. */
static void gen_div_edge(struct gen *g, int avoid)
{
	static const int32_t divisors[] = { 0, -1, 1 };
	uint8_t dst = rnd_reg_except(g, avoid), src;
	uint8_t cls = chance(g, 50) ? BPF_ALU64 : BPF_ALU;
	uint8_t op = chance(g, 50) ? BPF_DIV : BPF_MOD;
	int16_t off = chance(g, 60) ? 1 : 0;

	do
		src = rnd_reg_except(g, avoid);
	while (src == dst);
	switch (below(g, 3)) {
	case 0:  emit_lddw(g, dst, 0x8000000000000000ull); break;
	case 1:  emit(g, MOV32_IMM(dst, INT32_MIN)); break;
	default: break; /* whatever dst holds */
	}
	if (chance(g, 30)) {
		emit(g, INSN(cls | op | BPF_K, dst, 0, off, divisors[below(g, 3)]));
		return;
	}
	if (chance(g, 50))
		emit(g, MOV64_IMM(src, divisors[below(g, 3)]));
	else
		emit(g, MOV32_IMM(src, divisors[below(g, 3)]));
	emit(g, INSN(cls | op | BPF_X, dst, src, off, 0));
}

static void gen_endian(struct gen *g, int avoid)
{
	static const int32_t widths[] = { 16, 32, 64 };
	uint8_t dst = rnd_reg_except(g, avoid);
	int32_t w = widths[below(g, 3)];

	switch (below(g, 3)) {
	case 0:  emit(g, ENDIAN(BPF_TO_LE, dst, w)); break;
	case 1:  emit(g, ENDIAN(BPF_TO_BE, dst, w)); break;
	default: emit(g, BSWAP(dst, w)); break;
	}
}

static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };

/* An in-bounds (base, off) for an access of `bytes`; aligned if asked. */
static void rnd_addr(struct gen *g, unsigned bytes, bool aligned, uint8_t *base, int16_t *off)
{
	unsigned span;
	int o;

	if (chance(g, 50)) {
		*base = BPF_R9;
		span = DATA_LEN - bytes + 1;
		o = (int)below(g, span);
		if (aligned)
			o &= ~(int)(bytes - 1);
	} else {
		*base = BPF_R10;
		span = (unsigned)g->frame - bytes + 1;
		o = (int)below(g, span);
		if (aligned)
			o &= ~(int)(bytes - 1);
		o -= g->frame;
	}
	*off = (int16_t)o;
}

static void gen_load(struct gen *g, int avoid)
{
	uint8_t size = sizes[below(g, 4)], base;
	uint8_t dst = rnd_reg_except(g, avoid);
	int16_t off;

	rnd_addr(g, bpf_size_bytes(size), false, &base, &off);
	if (size != BPF_DW && chance(g, 40))
		emit(g, LDXSX(size, dst, base, off));
	else
		emit(g, LDX(size, dst, base, off));
}

static void gen_store(struct gen *g)
{
	uint8_t size = sizes[below(g, 4)], base;
	int16_t off;

	rnd_addr(g, bpf_size_bytes(size), false, &base, &off);
	if (chance(g, 50))
		emit(g, STX(size, base, rnd_reg(g), off));
	else
		emit(g, ST(size, base, off, rnd_imm(g)));
}

static void gen_atomic(struct gen *g, int avoid)
{
	static const int32_t ops[] = {
		BPF_ADD, BPF_OR, BPF_AND, BPF_XOR,
		BPF_ADD | BPF_FETCH, BPF_OR | BPF_FETCH, BPF_AND | BPF_FETCH,
		BPF_XOR | BPF_FETCH, BPF_XCHG, BPF_CMPXCHG,
	};
	uint8_t size = chance(g, 50) ? BPF_W : BPF_DW, base;
	int32_t op = ops[below(g, sizeof(ops) / sizeof(ops[0]))];
	uint8_t src;
	int16_t off;

	/* fetch forms write src, cmpxchg writes r0 */
	if (op == BPF_CMPXCHG && avoid == BPF_R0)
		op = BPF_ADD;
	src = (op & BPF_FETCH) && op != BPF_CMPXCHG ? rnd_reg_except(g, avoid) : rnd_reg(g);
	rnd_addr(g, bpf_size_bytes(size), true, &base, &off);
	emit(g, ATOMIC(size, op, base, src, off));
}

/* A pointer copied into a general register (whose x86 encoding may need a
 * SIB byte or a displacement), used once and overwritten at once, so no
 * address reaches r0 or memory. */
static void gen_ptr_access(struct gen *g, int avoid)
{
	static const int32_t ops[] = { BPF_ADD, BPF_XOR | BPF_FETCH, BPF_XCHG, BPF_OR };
	uint8_t size = sizes[below(g, 4)], base, ptr = rnd_reg_except(g, avoid), val;
	unsigned bytes = bpf_size_bytes(size);
	int kind = (int)below(g, 4);
	int16_t off;
	int32_t bias;

	if (kind == 3 && size != BPF_W && size != BPF_DW) {
		size = BPF_W; /* atomics are 32 or 64 bits */
		bytes = 4;
	}
	rnd_addr(g, bytes, kind == 3, &base, &off);
	/* split the offset between the add and the instruction */
	bias = (int32_t)below(g, 96) - 48;
	if (kind == 3)
		bias &= ~(int32_t)(bytes - 1);
	emit(g, MOV64_REG(ptr, base));
	emit(g, ALU64_IMM(BPF_ADD, ptr, bias));
	off = (int16_t)(off - bias);
	do
		val = rnd_reg_except(g, avoid);
	while (val == ptr);
	switch (kind) {
	case 0:
		emit(g, chance(g, 30) && size != BPF_DW ? LDXSX(size, val, ptr, off)
							: LDX(size, val, ptr, off));
		break;
	case 1:
		emit(g, STX(size, ptr, val, off));
		break;
	case 2:
		emit(g, ST(size, ptr, off, rnd_imm(g)));
		break;
	default:
		emit(g, ATOMIC(size, ops[below(g, ARRAY_LEN(ops))], ptr, val, off));
		break;
	}
	emit(g, MOV64_IMM(ptr, rnd_imm(g)));
}

/* Calls clobber r1-r5: give them fresh values. */
static void reinit_args(struct gen *g)
{
	for (uint8_t r = BPF_R1; r <= BPF_R5; r++)
		init_reg(g, r);
}

static void gen_helper_call(struct gen *g)
{
	if (g->use_callx && chance(g, 30)) {
		uint8_t reg = rnd_reg(g);

		emit(g, MOV64_IMM(reg, DIFF_HELPER_ID));
		emit(g, CALLX(reg));
	} else {
		emit(g, CALL_HELPER(DIFF_HELPER_ID));
	}
	reinit_args(g);
}

static void gen_local_call(struct gen *g, int callee)
{
	/* the callee's memory base travels in r5 */
	emit(g, MOV64_REG(BPF_R5, BPF_R9));
	if ((size_t)g->ncalls < sizeof(g->calls) / sizeof(g->calls[0])) {
		g->calls[g->ncalls].pc = g->cnt;
		g->calls[g->ncalls].func = callee;
		g->ncalls++;
		emit(g, CALL_LOCAL(0));
	} else {
		emit(g, CALL_HELPER(DIFF_HELPER_ID));
	}
	reinit_args(g);
}

/* Straight-line work that leaves `avoid` alone (loop bodies use it). */
static void gen_simple(struct gen *g, int avoid)
{
	switch (below(g, 12)) {
	case 0: case 1: case 2: case 3:
		gen_alu(g, avoid);
		break;
	case 11:
		gen_div_edge(g, avoid);
		break;
	case 10:
		gen_ptr_access(g, avoid);
		break;
	case 4:
		gen_endian(g, avoid);
		break;
	case 5: case 6:
		gen_load(g, avoid);
		break;
	case 7: case 8:
		gen_store(g);
		break;
	default:
		gen_atomic(g, avoid);
		break;
	}
}

static void gen_loop(struct gen *g)
{
	uint8_t ctr = (uint8_t)(BPF_R6 + below(g, 3));
	int body = 1 + (int)below(g, 4);
	size_t top;

	emit(g, MOV64_IMM(ctr, 1 + (int32_t)below(g, 8)));
	top = g->cnt;
	for (int i = 0; i < body; i++)
		gen_simple(g, ctr);
	emit(g, ALU64_IMM(BPF_SUB, ctr, 1));
	/* back to the top while the counter is positive */
	int16_t back = (int16_t)((int64_t)top - (int64_t)(g->cnt + 1));

	if (chance(g, 50))
		emit(g, JMP_IMM(BPF_JSGT, ctr, 0, back));
	else if (chance(g, 50))
		emit(g, JMP_IMM(BPF_JNE, ctr, 0, back));
	else
		emit(g, JMP32_IMM(BPF_JNE, ctr, 0, back));
}

static const uint8_t jmp_ops[] = {
	BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT, BPF_JSGE,
	BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE,
};

/* A forward jump whose target item is patched later. */
struct fwd_jump {
	size_t pc;
	int target_item;
};

static void emit_cond_jump(struct gen *g, int16_t off)
{
	uint8_t cls = chance(g, 50) ? BPF_JMP : BPF_JMP32;
	uint8_t op = jmp_ops[below(g, sizeof(jmp_ops))];

	if (chance(g, 50))
		emit(g, INSN(cls | op | BPF_K, rnd_reg(g), 0, off, rnd_imm(g)));
	else
		emit(g, INSN(cls | op | BPF_X, rnd_reg(g), rnd_reg(g), off, 0));
}

/* Fills the function's 64 stack bytes, so every stack read is defined. */
static void init_frame(struct gen *g)
{
	for (int o = 8; o <= g->frame; o += 8)
		emit(g, ST(BPF_DW, BPF_R10, -o, rnd_imm(g)));
}

/* Folds every register and the frame into r0 so differences show. */
static void fold_and_exit(struct gen *g)
{
	for (uint8_t r = BPF_R1; r <= BPF_R8; r++)
		emit(g, ALU64_REG(chance(g, 50) ? BPF_XOR : BPF_ADD, BPF_R0, r));
	for (int o = 8; o <= g->frame; o += 8) {
		emit(g, LDX(BPF_DW, BPF_R1, BPF_R10, -o));
		emit(g, ALU64_REG(BPF_XOR, BPF_R0, BPF_R1));
		emit(g, ALU64_IMM(BPF_MUL, BPF_R0, 3));
	}
	emit(g, EXIT());
}

static void gen_function(struct gen *g, int func)
{
	int nitems = func == 0 ? 16 + (int)below(g, 48) : 4 + (int)below(g, 16);

	/* now and then a long function, for jumps beyond 8-bit displacements */
	if (chance(g, 5))
		nitems = MAX_ITEMS / 2 + (int)below(g, MAX_ITEMS / 2);
	g->frame = 8 * (1 + (int)below(g, (func == 0 ? MAX_FRAME_MAIN : MAX_FRAME_SUB) / 8));
	if (chance(g, 50) && g->frame > 64)
		g->frame = 64;
	size_t item_pc[MAX_ITEMS + 1];
	struct fwd_jump jumps[MAX_ITEMS];
	int njumps = 0;

	g->func_start[func] = g->cnt;
	if (func == 0) {
		emit(g, MOV64_REG(BPF_R9, BPF_R1));
		for (uint8_t r = BPF_R0; r <= BPF_R8; r++)
			init_reg(g, r);
	} else {
		/* r1-r4 are the caller's arguments; r5 brought the base */
		emit(g, MOV64_REG(BPF_R9, BPF_R5));
		init_reg(g, BPF_R0);
		for (uint8_t r = BPF_R5; r <= BPF_R8; r++)
			init_reg(g, r);
	}
	init_frame(g);

	int call_next_at = func + 1 < g->nfuncs ? (int)below(g, (uint32_t)nitems) : -1;

	for (int it = 0; it < nitems; it++) {
		int target = it + 1 + (int)below(g, (uint32_t)(nitems - it));

		item_pc[it] = g->cnt;
		if (it == call_next_at) {
			gen_local_call(g, func + 1);
			continue;
		}
		switch (below(g, 20)) {
		case 0: case 1: case 2:
			emit_cond_jump(g, 0);
			jumps[njumps++] = (struct fwd_jump){ g->cnt - 1, target };
			break;
		case 3:
			/* a conditional skip keeps the code after the ja reachable */
			emit_cond_jump(g, 1);
			if (chance(g, 50))
				emit(g, JA(0));
			else
				emit(g, GOTOL(0));
			jumps[njumps++] = (struct fwd_jump){ g->cnt - 1, target };
			break;
		case 4:
			init_reg(g, rnd_reg(g));
			break;
		case 5:
			gen_helper_call(g);
			break;
		case 6:
			if (func + 1 < g->nfuncs)
				gen_local_call(g, func + 1 +
					       (int)below(g, (uint32_t)(g->nfuncs - func - 1)));
			else
				gen_simple(g, -1);
			break;
		case 7:
			gen_loop(g);
			break;
		default:
			gen_simple(g, -1);
			break;
		}
	}
	item_pc[nitems] = g->cnt;
	fold_and_exit(g);

	for (int j = 0; j < njumps && !g->oom; j++) {
		struct bpf_insn *insn = &g->insns[jumps[j].pc];
		int64_t rel = (int64_t)item_pc[jumps[j].target_item] - (int64_t)(jumps[j].pc + 1);

		if (insn_is_gotol(insn))
			insn->imm = (int32_t)rel;
		else
			insn->off = (int16_t)rel;
	}
}

/* Builds program `seed` into g->insns/cnt. */
static void gen_program(struct gen *g, uint64_t seed)
{
	bool callx = g->use_callx;

	free(g->insns);
	memset(g, 0, sizeof(*g));
	g->use_callx = callx;
	g->rng = seed;
	g->nfuncs = 1 + (int)below(g, MAX_FUNCS);
	for (int f = 0; f < g->nfuncs; f++)
		gen_function(g, f);
	for (int c = 0; c < g->ncalls && !g->oom; c++) {
		size_t pc = g->calls[c].pc;

		g->insns[pc].imm = (int32_t)((int64_t)g->func_start[g->calls[c].func] -
					     (int64_t)(pc + 1));
	}
}

/* ---- running ------------------------------------------------------------- */

static uint64_t diff_helper(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	uint64_t h = r1 * 0x9e3779b97f4a7c15ull;

	h ^= (r2 + 3) ^ (r3 << 7 | r3 >> 57) ^ (r4 << 1) ^ ~r5;
	return h ^ (h >> 29);
}

static int register_helper(void)
{
	static const struct bpfrt_helper helper = {
		.name = "diff_mix",
		.fn = diff_helper,
		.ret = BPFRT_RET_INTEGER,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING,
			  BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};

	return bpfrt_helper_register(DIFF_HELPER_ID, &helper);
}

static void fill_data(uint8_t *data, uint64_t seed)
{
	uint64_t s = seed ^ 0xda7a;

	for (size_t i = 0; i < DATA_LEN; i += 8) {
		uint64_t v = splitmix64(&s);

		memcpy(data + i, &v, 8);
	}
}

/* Disassembly as TAP comments. */
static void print_program(uint64_t seed, const struct bpf_insn *insns, size_t cnt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	printf("# program of seed 0x%016" PRIx64 " (%zu insns; rerun with "
	       "BPFRT_DIFF_ONE=0x%" PRIx64 "):\n", seed, cnt, seed);
	if (!f)
		return;
	bpfrt_disasm(insns, cnt, f);
	fclose(f);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		printf("#   %s\n", line);
	free(text);
}

enum diff_outcome { DIFF_SAME, DIFF_REJECTED, DIFF_RUN_FAILED, DIFF_MISMATCH };

/* Loads once (with the JIT) and runs both engines on equal data. */
static enum diff_outcome run_one(uint64_t seed, const struct bpf_insn *insns, size_t cnt,
				 char *why, size_t why_len)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "diff", .jit = true);
	uint8_t data_i[DATA_LEN], data_j[DATA_LEN];
	struct bpfrt_prog *prog;
	uint64_t r0_i = 0, r0_j = 0;
	int err;

	if (bpfrt_prog_load(insns, cnt, &opts, &prog)) {
		snprintf(why, why_len, "load: %s", bpfrt_last_error());
		return DIFF_REJECTED;
	}
	if (!bpfrt_prog_jited(prog, NULL)) {
		bpfrt_prog_free(prog);
		snprintf(why, why_len, "load with jit=true gave no native image");
		return DIFF_REJECTED;
	}
	if (jit_images_enabled()) {
		char label[32];
		size_t len;
		const void *code = bpfrt_prog_jited(prog, &len);

		snprintf(label, sizeof(label), "diff:%016" PRIx64, seed);
		jit_images_note(label, code, len, (uintptr_t)code);
	}
	fill_data(data_i, seed);
	memcpy(data_j, data_i, DATA_LEN);
	err = bpfrt_prog_run(prog, BPFRT_EXEC_INTERP, (uintptr_t)data_i, DATA_LEN, &r0_i);
	if (!err)
		err = bpfrt_prog_run(prog, BPFRT_EXEC_JIT, (uintptr_t)data_j, DATA_LEN, &r0_j);
	bpfrt_prog_free(prog);
	if (err) {
		snprintf(why, why_len, "run: %s", bpfrt_last_error());
		return DIFF_RUN_FAILED;
	}
	if (r0_i != r0_j) {
		snprintf(why, why_len, "r0: interpreter 0x%" PRIx64 ", jit 0x%" PRIx64, r0_i, r0_j);
		return DIFF_MISMATCH;
	}
	for (size_t i = 0; i < DATA_LEN; i++) {
		if (data_i[i] != data_j[i]) {
			snprintf(why, why_len, "data[%zu]: interpreter 0x%02x, jit 0x%02x", i,
				 data_i[i], data_j[i]);
			return DIFF_MISMATCH;
		}
	}
	return DIFF_SAME;
}

static uint64_t env_u64(const char *name, uint64_t def, bool *set)
{
	const char *v = getenv(name);

	if (set)
		*set = v && *v;
	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* Whether the JIT takes callx (so the generator may use it). */
static bool jit_supports_callx(void)
{
	struct bpf_insn prog[] = {
		MOV64_IMM(BPF_R1, 1), MOV64_IMM(BPF_R2, 2), MOV64_IMM(BPF_R3, 3),
		MOV64_IMM(BPF_R4, 4), MOV64_IMM(BPF_R5, 5),
		MOV64_IMM(BPF_R6, DIFF_HELPER_ID), CALLX(BPF_R6), EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .jit = true);
	struct bpfrt_prog *p;
	uint64_t r0;
	bool ok;

	if (bpfrt_prog_load(prog, ARRAY_LEN(prog), &opts, &p))
		return false;
	ok = !bpfrt_prog_run(p, BPFRT_EXEC_JIT, 0, 0, &r0) &&
	     r0 == diff_helper(1, 2, 3, 4, 5);
	bpfrt_prog_free(p);
	return ok;
}

TEST(differential_interpreter_vs_jit)
{
	bool one_set;
	uint64_t one = env_u64("BPFRT_DIFF_ONE", 0, &one_set);
	uint64_t master = env_u64("BPFRT_DIFF_SEED", DIFF_MASTER_SEED, NULL);
	uint64_t count = one_set ? 1 : env_u64("BPFRT_DIFF_COUNT", DIFF_DEFAULT_COUNT, NULL);
	struct gen g = { 0 };
	uint64_t fails = 0, insns_total = 0, s = master;
	char why[256];

	REQUIRE(register_helper() == 0, "%s", bpfrt_last_error());
	g.use_callx = jit_supports_callx();
	if (!g.use_callx)
		printf("# callx not supported by the JIT: generated programs do not use it\n");
	printf("# master seed 0x%016" PRIx64 ", %" PRIu64 " programs\n", master, count);
	for (uint64_t i = 0; i < count; i++) {
		uint64_t seed = one_set ? one : splitmix64(&s);
		enum diff_outcome out;

		gen_program(&g, seed);
		REQUIRE(!g.oom, "out of memory");
		insns_total += g.cnt;
		out = run_one(seed, g.insns, g.cnt, why, sizeof(why));
		if (one_set)
			print_program(seed, g.insns, g.cnt);
		if (out == DIFF_SAME)
			continue;
		fails++;
		if (fails <= MAX_FAILS_SHOWN) {
			tl_fail(__FILE__, __LINE__, "seed 0x%016" PRIx64 ": %s", seed, why);
			if (fails == 1 && !one_set)
				print_program(seed, g.insns, g.cnt);
		}
	}
	free(g.insns);
	printf("# %" PRIu64 " programs, %" PRIu64 " instructions, %" PRIu64 " failed\n", count,
	       insns_total, fails);
	CHECK(fails == 0, "%" PRIu64 " of %" PRIu64 " programs differ or were rejected", fails,
	      count);
}

/* The generator must produce what it claims: every class of instruction. */
TEST(differential_generator_covers_isa)
{
	struct gen g = { .use_callx = true };
	bool seen[256] = { false };
	bool seen_atomic32[256] = { false }, seen_atomic64[256] = { false };
	bool seen_sdiv = false, seen_movsx = false, seen_local = false, seen_back = false;
	uint64_t s = DIFF_MASTER_SEED;

	for (int i = 0; i < 300; i++) {
		gen_program(&g, splitmix64(&s));
		REQUIRE(!g.oom);
		for (size_t pc = 0; pc < g.cnt; pc++) {
			const struct bpf_insn *in = &g.insns[pc];

			seen[in->code] = true;
			if (insn_class(in) == BPF_STX && insn_mode(in) == BPF_ATOMIC)
				(insn_size(in) == BPF_DW ? seen_atomic64
							  : seen_atomic32)[(uint8_t)in->imm] = true;
			if ((insn_op(in) == BPF_DIV || insn_op(in) == BPF_MOD) && in->off == 1)
				seen_sdiv = true;
			if (insn_op(in) == BPF_MOV && insn_src(in) == BPF_X && in->off &&
			    (insn_class(in) == BPF_ALU || insn_class(in) == BPF_ALU64))
				seen_movsx = true;
			seen_local |= insn_is_local_call(in);
			seen_back |= insn_is_branch(in) && in->off < 0;
			if (insn_is_lddw(in))
				pc++;
		}
	}
	free(g.insns);
	for (size_t i = 0; i < sizeof(alu_ops); i++) {
		for (int cls = 0; cls < 2; cls++) {
			uint8_t c = (cls ? BPF_ALU64 : BPF_ALU) | alu_ops[i];

			CHECK(seen[c | BPF_K], "opcode 0x%02x never generated", c | BPF_K);
			if (alu_ops[i] != BPF_NEG)
				CHECK(seen[c | BPF_X], "opcode 0x%02x never generated", c | BPF_X);
		}
	}
	for (size_t i = 0; i < sizeof(jmp_ops); i++)
		for (int cls = 0; cls < 2; cls++)
			for (int x = 0; x < 2; x++) {
				uint8_t c = (cls ? BPF_JMP32 : BPF_JMP) | jmp_ops[i] |
					    (x ? BPF_X : BPF_K);

				CHECK(seen[c], "opcode 0x%02x never generated", c);
			}
	for (size_t i = 0; i < 4; i++) {
		CHECK(seen[BPF_LDX | BPF_MEM | sizes[i]]);
		CHECK(seen[BPF_STX | BPF_MEM | sizes[i]]);
		CHECK(seen[BPF_ST | BPF_MEM | sizes[i]]);
		if (sizes[i] != BPF_DW)
			CHECK(seen[BPF_LDX | BPF_MEMSX | sizes[i]]);
	}
	static const int32_t atomics[] = {
		BPF_ADD, BPF_OR, BPF_AND, BPF_XOR, BPF_ADD | BPF_FETCH, BPF_OR | BPF_FETCH,
		BPF_AND | BPF_FETCH, BPF_XOR | BPF_FETCH, BPF_XCHG, BPF_CMPXCHG,
	};
	for (size_t i = 0; i < ARRAY_LEN(atomics); i++) {
		CHECK(seen_atomic32[(uint8_t)atomics[i]], "32-bit atomic 0x%x", atomics[i]);
		CHECK(seen_atomic64[(uint8_t)atomics[i]], "64-bit atomic 0x%x", atomics[i]);
	}
	CHECK(seen[BPF_LD | BPF_DW | BPF_IMM]);
	CHECK(seen[BPF_ALU | BPF_END | BPF_TO_LE] && seen[BPF_ALU | BPF_END | BPF_TO_BE]);
	CHECK(seen[BPF_ALU64 | BPF_END]);
	CHECK(seen[BPF_JMP | BPF_JA] && seen[BPF_JMP32 | BPF_JA]);
	CHECK(seen[BPF_JMP | BPF_CALL] && seen[BPF_JMP | BPF_CALL | BPF_X]);
	CHECK(seen_sdiv && seen_movsx && seen_local && seen_back);
}
