/* The arch-neutral JIT driver (src/engine/jit/passes.c) with a fake backend whose
 * code sizes the tests choose: recorded offsets, head padding, the exact
 * final pass, growth at the image address, error propagation,
 * non-convergence, the state the driver keeps for the backends (sub, pc,
 * first error, frames) and the prescan helpers. The real backends' output is
 * covered by test_jit, test_conformance and the cross suites. */
#include "testlib.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "core/error.h"
#include "jit/passes.h"

#include <errno.h>
#include <string.h>

enum fake_mode {
	FAKE_PLAIN,             /* insn pc: pc + 1 bytes */
	FAKE_GROWS_AT_ADDR,     /* 2 bytes an insn at an address until shrink */
	FAKE_FAILS_AT_1,        /* insn 1 reports -EINVAL */
	FAKE_OSCILLATES,        /* sizes flip every pass: never converges */
};

struct fake {
	uint8_t *p;
	size_t len;
	struct bpfrt_jit_passes jp;
	enum fake_mode mode;
	bool shrunk;
	int shrinks, passes;
	bool prev_pos_exact;    /* last pass: prev_pos == cur position everywhere */
	bool where_exact;       /* last pass: jp->sub and jp->pc named each call */
	int prescans;           /* arch->prescan calls */
	bool prescan_saw_shared; /* ... after the shared prescan, with frames */
	bool fail_prescan;
};

#define FAKE(jp) bpfrt_container_of(jp, struct fake, jp)

static void put(struct fake *f, uint8_t byte, size_t n)
{
	memset(f->p + f->len, byte, n);
	f->len += n;
}

static void fake_prologue(struct bpfrt_jit_passes *jp, uint32_t s)
{
	struct fake *f = FAKE(jp);

	if (s == 0) {
		f->passes++;
		f->prev_pos_exact = true;
		f->where_exact = true;
	}
	if (jp->sub != s || jp->pc != jp->prog->subprogs[s].start)
		f->where_exact = false;
	put(f, 0xa0 + (uint8_t)s, 3);
}

static int fake_insn(struct bpfrt_jit_passes *jp, uint32_t pc)
{
	struct fake *f = FAKE(jp);
	size_t n = pc + 1;

	if (bpfrt_jit_prev_pos(jp, pc) != (int64_t)f->len)
		f->prev_pos_exact = false;
	if (jp->pc != pc || jp->sub != (pc < 3 ? 0u : 1u))
		f->where_exact = false;
	switch (f->mode) {
	case FAKE_PLAIN:
		break;
	case FAKE_GROWS_AT_ADDR:
		n = jp->base && !f->shrunk ? 2 : 1;
		break;
	case FAKE_FAILS_AT_1:
		if (pc == 1) {
			/* the first error of the pass is the one reported */
			bpfrt_jit_fail(jp, -EINVAL, "first %d", 1);
			bpfrt_jit_fail(jp, -ENOSPC, "second");
		}
		break;
	case FAKE_OSCILLATES:
		n = 1 + (f->passes & 1);
		break;
	}
	put(f, (uint8_t)pc, n);
	return insn_is_lddw(&jp->prog->insns[pc]) ? 2 : 1;
}

static void fake_abort_stub(struct bpfrt_jit_passes *jp)
{
	put(FAKE(jp), 0xee, 5);
}

static void fake_shrink(struct bpfrt_jit_passes *jp)
{
	FAKE(jp)->shrunk = true;
	FAKE(jp)->shrinks++;
}

static void fake_traps(void *dst, size_t len)
{
	memset(dst, 0xcc, len);
}

static const struct bpfrt_jit_arch fake_arch = {
	.max_insn_code = 64,
	.seed_insn_code = 16,
	.fill_traps = fake_traps,
	.emit_prologue = fake_prologue,
	.emit_insn = fake_insn,
	.emit_abort_stub = fake_abort_stub,
};

/* main: r0 = 1; call sub; exit. sub: lddw r0; if r0 != 0 goto -2 (loop
 * head at the lddw); exit. */
static const struct bpf_insn two_funcs[] = {
	MOV64_IMM(BPF_R0, 1),
	CALL_LOCAL(1),
	EXIT(),
	LDDW(BPF_R0, 7),
	JMP_IMM(BPF_JNE, BPF_R0, 0, -3),
	EXIT(),
};

static struct bpfrt_prog *load(void)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "passes");
	struct bpfrt_prog *p = NULL;

	CHECK(bpfrt_prog_load(two_funcs, ARRAY_LEN(two_funcs), &o, &p) == 0, "%s",
	      bpfrt_last_error());
	return p;
}

/* Builds prog with the fake backend; returns the driver's result. */
static int build(struct bpfrt_prog *prog, struct fake *f, const struct bpfrt_jit_arch *arch)
{
	int err = bpfrt_jit_passes_init(&f->jp, prog, arch, &f->p, &f->len);

	f->jp.abort_stub = true;
	if (!err)
		err = bpfrt_jit_build(&f->jp);
	return err;
}

TEST(offsets_follow_the_emitted_code)
{
	struct bpfrt_prog *prog = load();
	struct fake f = { .mode = FAKE_PLAIN };
	const uint32_t *off;

	REQUIRE(prog);
	REQUIRE(build(prog, &f, &fake_arch) == 0, "%s", bpfrt_last_error());
	off = prog->jit_insn_off;
	REQUIRE(off && prog->jit_func);
	/* main: prologue 3, insns 1 + 2 + 3 bytes, abort stub 5; sub:
	 * prologue 3, lddw 4 (its second slot empty), jne 6, exit 7 */
	CHECK(off[BPFRT_JIT_FUNC_START(prog, 0)] == 0);
	CHECK(off[0] == 3 && off[1] == 4 && off[2] == 6);
	CHECK(off[BPFRT_JIT_BODY_END(prog, 0)] == 9);
	CHECK(off[BPFRT_JIT_FUNC_START(prog, 1)] == 14, "%u", off[BPFRT_JIT_FUNC_START(prog, 1)]);
	CHECK(off[3] == 17 && off[4] == 21 && off[5] == 21 && off[6] == 27);
	CHECK(off[BPFRT_JIT_BODY_END(prog, 1)] == 34 && off[prog->insn_cnt] == 34);
	CHECK(prog->jit_len == 34, "%zu", prog->jit_len);
	CHECK(f.jp.prev.abort_off == 9);
	CHECK(f.prev_pos_exact, "the converged pass must see its own positions");
	CHECK(f.where_exact, "the driver sets jp->sub and jp->pc before each emitter");
	CHECK(memcmp((const uint8_t *)prog->jit_func + 9, "\xee\xee\xee\xee\xee", 5) == 0);
	bpfrt_jit_passes_free(&f.jp);
	CHECK(f.p == NULL, "the driver frees the pass buffer");
	bpfrt_prog_free(prog);
}

TEST(head_padding_aligns_the_first_function)
{
	struct bpfrt_prog *prog = load();
	struct bpfrt_jit_arch arch = fake_arch;
	struct fake f = { .mode = FAKE_PLAIN };
	const uint8_t *image;

	REQUIRE(prog);
	arch.image_align = 64;
	arch.addr_dependent = true;
	REQUIRE(build(prog, &f, &arch) == 0, "%s", bpfrt_last_error());
	CHECK((uintptr_t)prog->jit_func % 64 == 0, "%p", (void *)prog->jit_func);
	CHECK(f.jp.head_pad == (uintptr_t)prog->jit_func - f.jp.base);
	image = (const uint8_t *)(uintptr_t)f.jp.base;
	for (uint32_t i = 0; i < f.jp.head_pad; i++)
		CHECK(image[i] == 0xcc, "byte %u", i);
	/* offsets stay relative to the first function */
	CHECK(prog->jit_insn_off[0] == 3 && prog->jit_len == 34);
	bpfrt_jit_passes_free(&f.jp);
	bpfrt_prog_free(prog);
}

TEST(growth_at_the_address_retries_after_shrink)
{
	struct bpfrt_prog *prog = load();
	struct bpfrt_jit_arch arch = fake_arch;
	struct fake f = { .mode = FAKE_GROWS_AT_ADDR };

	REQUIRE(prog);
	arch.addr_dependent = true;
	arch.shrink = fake_shrink;
	REQUIRE(build(prog, &f, &arch) == 0, "%s", bpfrt_last_error());
	CHECK(f.shrinks == 1, "%d", f.shrinks);
	CHECK(prog->jit_insn_off[1] == prog->jit_insn_off[0] + 1, "1-byte insns after the shrink");
	bpfrt_jit_passes_free(&f.jp);
	bpfrt_prog_free(prog);

	/* without a shrink hook growth is an error, and nothing is kept */
	prog = load();
	REQUIRE(prog);
	arch.shrink = NULL;
	f = (struct fake){ .mode = FAKE_GROWS_AT_ADDR };
	CHECK(build(prog, &f, &arch) == -EFAULT);
	CHECK(strstr(bpfrt_last_error(), "grew"), "%s", bpfrt_last_error());
	CHECK(!prog->jit_func && !prog->jit_mem && !prog->jit_insn_off);
	bpfrt_jit_passes_free(&f.jp);
	bpfrt_prog_free(prog);
}

TEST(emitter_errors_and_non_convergence_fail_the_build)
{
	struct bpfrt_prog *prog = load();
	struct fake f = { .mode = FAKE_FAILS_AT_1 };

	REQUIRE(prog);
	CHECK(build(prog, &f, &fake_arch) == -EINVAL);
	CHECK(!strcmp(bpfrt_last_error(), "jit: insn 1: first 1"), "%s", bpfrt_last_error());
	CHECK(f.passes == 1, "%d", f.passes);
	CHECK(!prog->jit_func && !prog->jit_mem);
	bpfrt_jit_passes_free(&f.jp);

	f = (struct fake){ .mode = FAKE_OSCILLATES };
	CHECK(build(prog, &f, &fake_arch) == -EFAULT);
	CHECK(strstr(bpfrt_last_error(), "did not converge"), "%s", bpfrt_last_error());
	CHECK(!prog->jit_func && !prog->jit_mem);
	bpfrt_jit_passes_free(&f.jp);
	bpfrt_prog_free(prog);
}

TEST(prescan_helpers)
{
	struct bpfrt_prog *prog = load();
	uint8_t marks[ARRAY_LEN(two_funcs)] = { 0 };
	bool callx = true, calls = false;
	uint16_t regs;

	REQUIRE(prog);
	CHECK(bpfrt_jit_scan_branches(prog, marks, &callx) == 0);
	CHECK(!callx);
	CHECK(marks[3] == (BPFRT_JIT_TARGET | BPFRT_JIT_LOOP), "%u", marks[3]);
	CHECK(marks[0] == 0 && marks[4] == 0 && marks[5] == 0);
	/* main names r0 and calls; sub names r0 only (lddw src is a kind) */
	regs = bpfrt_jit_subprog_regs(prog, &prog->subprogs[0], &calls);
	CHECK(regs == 1 && calls, "%#x", regs);
	regs = bpfrt_jit_subprog_regs(prog, &prog->subprogs[1], &calls);
	CHECK(regs == 1 && !calls, "%#x", regs);
	{
		const uint8_t map[BPF_NREGS] = { 9, 1, 2, 3, 4, 5, 6, 7, 8, 0, 10 };

		CHECK(bpfrt_jit_map_regs(1u << 0 | 1u << 9, map) == (1u << 9 | 1u << 0));
	}
	bpfrt_prog_free(prog);
}

/* main: r2 = &callback; r0 = 0; exit. callback: r0 = 0; exit. */
static const struct bpf_insn with_callback[] = {
	INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_R2, BPF_PSEUDO_FUNC, 0, 3),
	INSN(0, 0, 0, 0, 0),
	MOV64_IMM(BPF_R0, 0),
	EXIT(),
	MOV64_IMM(BPF_R0, 0),
	EXIT(),
};

/* calls bpf_map_lookup_elem (never run: the JIT only resolves it) */
static const struct bpf_insn calls_lookup[] = {
	CALL_HELPER(1),
	MOV64_IMM(BPF_R0, 0),
	EXIT(),
};

TEST(shared_prescan_and_state)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "callback");
	struct bpfrt_jit_arch arch = fake_arch;
	struct bpfrt_prog *prog = NULL, *plain = load();
	struct fake f = { .mode = FAKE_PLAIN };

	REQUIRE(plain);
	REQUIRE(bpfrt_prog_load(with_callback, ARRAY_LEN(with_callback), &o, &prog) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(prog->subprog_cnt == 2);

	arch.frame_size = 24;
	REQUIRE(bpfrt_jit_passes_init(&f.jp, prog, &arch, &f.p, &f.len) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(f.jp.frames, "frames of frame_size bytes per subprogram");
	CHECK(((const uint8_t *)f.jp.frames)[2 * 24 - 1] == 0);
	CHECK(f.jp.insns == prog->insns && f.jp.n == prog->insn_cnt);
	CHECK(f.jp.priv == prog->privstack && f.jp.priv_release);
	f.jp.pc = 0;
	CHECK(bpfrt_jit_callee(&f.jp, &prog->insns[0]) == 1 && f.jp.err == 0);
	f.jp.pc = 2;
	CHECK(bpfrt_jit_callee(&f.jp, &prog->insns[0]) == -1, "lands past the program");
	CHECK(f.jp.err == -EINVAL &&
	      !strcmp(bpfrt_last_error(), "jit: insn 2: function reference to a non-subprogram"),
	      "%s", bpfrt_last_error());
	f.jp.err = 0;
	CHECK(bpfrt_jit_prescan(&f.jp) == 0);
	CHECK(!f.jp.callback[0] && f.jp.callback[1], "lddw of a function marks a callback");
	CHECK(!f.jp.has_callx && f.jp.abort_stub == prog->privstack);
	bpfrt_jit_passes_free(&f.jp);
	CHECK(!f.jp.frames && !f.jp.callback && !f.p);

	/* a local call does not make a callback */
	f = (struct fake){ .mode = FAKE_PLAIN };
	REQUIRE(bpfrt_jit_passes_init(&f.jp, plain, &arch, &f.p, &f.len) == 0);
	CHECK(bpfrt_jit_prescan(&f.jp) == 0);
	CHECK(!f.jp.callback[0] && !f.jp.callback[1]);
	/* helpers come from the program's snapshot: an id it does not call
	 * is unknown to its JIT even where the environment has it */
	CHECK(bpfrt_jit_helper(&f.jp, &(struct bpf_insn)CALL_HELPER(1)) == NULL);
	CHECK(f.jp.err == -EINVAL && strstr(bpfrt_last_error(), "unknown helper"), "%s",
	      bpfrt_last_error());
	bpfrt_jit_passes_free(&f.jp);
	bpfrt_prog_free(plain);

	/* an id it calls gives the function it was loaded with */
	struct bpfrt_prog *caller = NULL;
	BPFRT_OPTS(bpfrt_prog_load_opts, co, .name = "lookup");
	REQUIRE(bpfrt_prog_load(calls_lookup, ARRAY_LEN(calls_lookup), &co, &caller) == 0, "%s",
		bpfrt_last_error());
	f = (struct fake){ .mode = FAKE_PLAIN };
	REQUIRE(bpfrt_jit_passes_init(&f.jp, caller, &arch, &f.p, &f.len) == 0);
	REQUIRE(bpfrt_prog_helper(caller, 1), "bpf_map_lookup_elem in the snapshot");
	CHECK(bpfrt_jit_helper(&f.jp, &(struct bpf_insn)CALL_HELPER(1)) ==
	      bpfrt_prog_helper(caller, 1)->fn);
	CHECK(f.jp.err == 0);
	CHECK(bpfrt_jit_helper(&f.jp, &(struct bpf_insn)CALL_HELPER(BPFRT_MAX_HELPER_ID - 1)) ==
	      NULL);
	CHECK(f.jp.err == -EINVAL);
	bpfrt_jit_passes_free(&f.jp);
	bpfrt_prog_free(caller);
	bpfrt_prog_free(prog);
}

static struct bpfrt_prog *load_flags(const struct bpf_insn *insns, size_t n, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "frames", .flags = flags);
	struct bpfrt_prog *p = NULL;

	CHECK(bpfrt_prog_load(insns, n, &o, &p) == 0, "%s", bpfrt_last_error());
	return p;
}

static void frame_of(struct bpfrt_prog *prog, uint32_t s, struct bpfrt_jit_frame *fr)
{
	struct fake f = { .mode = FAKE_PLAIN };

	memset(fr, 0xff, sizeof(*fr));
	REQUIRE(bpfrt_jit_passes_init(&f.jp, prog, &fake_arch, &f.p, &f.len) == 0);
	REQUIRE(bpfrt_jit_prescan(&f.jp) == 0);
	bpfrt_jit_frame(&f.jp, s, fr);
	bpfrt_jit_passes_free(&f.jp);
}

/* main: r6 = 1; [r10-8] = r6; callx r1; exit */
static const struct bpf_insn with_callx[] = {
	MOV64_IMM(BPF_R6, 1),
	STX(BPF_DW, BPF_R10, BPF_R6, -8),
	CALLX(BPF_R1),
	EXIT(),
};

#define R6_R9 (1u << BPF_R6 | 1u << BPF_R7 | 1u << BPF_R8 | 1u << BPF_R9)
#define R10 (1u << BPF_R10)

TEST(frame_decisions)
{
	struct bpfrt_prog *plain = load_flags(two_funcs, ARRAY_LEN(two_funcs), 0);
	struct bpfrt_prog *cb = load_flags(with_callback, ARRAY_LEN(with_callback), 0);
	struct bpfrt_prog *cb_priv = load_flags(with_callback, ARRAY_LEN(with_callback),
						BPFRT_F_PRIVATE_STACK);
	struct bpfrt_prog *cx = load_flags(with_callx, ARRAY_LEN(with_callx), 0);
	struct bpfrt_prog *cx_priv = load_flags(with_callx, ARRAY_LEN(with_callx),
						BPFRT_F_PRIVATE_STACK);
	struct bpfrt_jit_frame fr;

	REQUIRE(plain && cb && cb_priv && cx && cx_priv);
	REQUIRE(cb_priv->privstack && cx_priv->privstack && !cx->privstack);

	/* plain main: calls, saves nothing, no BPF stack */
	frame_of(plain, 0, &fr);
	CHECK(fr.calls && fr.saved == 0 && !fr.sets_fp && fr.stack == 0 && !fr.saves_all &&
	      !fr.keeps_entry_sp, "saved %#x", fr.saved);
	frame_of(plain, 1, &fr);
	CHECK(!fr.calls && fr.saved == 0);

	/* callx: main keeps the outer entry_sp and saves every callee-saved
	 * register, r10 included (it sets it) */
	frame_of(cx, 0, &fr);
	CHECK(fr.saves_all && fr.keeps_entry_sp && fr.sets_fp && fr.calls);
	CHECK(fr.saved == (R6_R9 | R10), "saved %#x", fr.saved);
	CHECK(fr.stack == cx->subprogs[0].stack_depth && fr.stack >= 8, "%u", fr.stack);

	/* private stack: no BPF stack on the native stack, r10 claimed (saved,
	 * not set), the claim's slow path is a call, the entry sp is not kept */
	frame_of(cx_priv, 0, &fr);
	CHECK(fr.saves_all && !fr.keeps_entry_sp && !fr.sets_fp && fr.calls && fr.stack == 0);
	CHECK(fr.saved == (R6_R9 | R10), "saved %#x", fr.saved);

	/* a callback keeps a native frame for its whole chain with a private
	 * stack, and is an ordinary function without one */
	frame_of(cb_priv, 1, &fr);
	CHECK(fr.sets_fp && fr.saved == R10 && fr.stack == cb_priv->subprogs[1].chain_depth &&
	      !fr.saves_all, "saved %#x stack %u", fr.saved, fr.stack);
	frame_of(cb_priv, 0, &fr);
	CHECK(fr.saves_all, "private main of two functions restores everything");
	CHECK(fr.saved == (R6_R9 | R10) && !fr.sets_fp && fr.calls, "saved %#x", fr.saved);
	frame_of(cb, 1, &fr);
	CHECK(!fr.sets_fp && fr.saved == 0 && fr.stack == 0, "saved %#x", fr.saved);
	frame_of(cb, 0, &fr);
	CHECK(!fr.saves_all && fr.saved == 0, "saved %#x", fr.saved);

	bpfrt_prog_free(plain);
	bpfrt_prog_free(cb);
	bpfrt_prog_free(cb_priv);
	bpfrt_prog_free(cx);
	bpfrt_prog_free(cx_priv);
}

static int fake_prescan(struct bpfrt_jit_passes *jp)
{
	struct fake *f = FAKE(jp);

	f->prescans++;
	f->prescan_saw_shared = jp->frames && jp->marks &&
				jp->marks[3] == (BPFRT_JIT_TARGET | BPFRT_JIT_LOOP) &&
				!jp->has_callx && !jp->abort_stub;
	return f->fail_prescan ? bpfrt_err(-E2BIG, "fake: frame too big") : 0;
}

TEST(compile_runs_both_prescans_then_builds)
{
	struct bpfrt_prog *prog = load();
	struct bpfrt_jit_arch arch = fake_arch;
	struct fake f = { .mode = FAKE_PLAIN };

	REQUIRE(prog);
	arch.frame_size = 8;
	arch.prescan = fake_prescan;
	REQUIRE(bpfrt_jit_compile(&f.jp, prog, &arch, &f.p, &f.len) == 0, "%s",
		bpfrt_last_error());
	CHECK(f.prescans == 1 && f.prescan_saw_shared);
	CHECK(prog->jit_func && prog->jit_len == 29, "no abort stub: %zu", prog->jit_len);
	CHECK(!f.p && !f.jp.marks && !f.jp.frames && !f.jp.callback, "compile frees its state");
	bpfrt_prog_free(prog);

	/* an arch prescan error stops the compile before any pass */
	prog = load();
	REQUIRE(prog);
	f = (struct fake){ .mode = FAKE_PLAIN, .fail_prescan = true };
	CHECK(bpfrt_jit_compile(&f.jp, prog, &arch, &f.p, &f.len) == -E2BIG);
	CHECK(f.passes == 0 && !prog->jit_func && !prog->jit_mem && !f.jp.marks);
	bpfrt_prog_free(prog);
}
