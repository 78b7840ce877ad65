/* The run glue (bpfrt_prog_run): argument checks, and runs that nest
 * through helpers keep the outer run's state whatever the inner one did. */
#include "testlib.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <string.h>

#define NEST_HELPER 200

TEST(load_rejects_empty)
{
	struct bpfrt_prog *p = (void *)1;

	CHECK(bpfrt_prog_load(NULL, 0, NULL, &p) == -EINVAL);
	CHECK(p == NULL);
	CHECK(bpfrt_last_error()[0] != '\0');
}

static struct bpfrt_prog *inner;
static enum bpfrt_exec_mode inner_mode;
static int inner_err;

static uint64_t run_inner(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	uint64_t r0 = 0;

	inner_err = bpfrt_prog_run(inner, inner_mode, 0, 0, &r0);
	return 7;
}

static void nested(enum bpfrt_exec_mode outer_mode, enum bpfrt_exec_mode im)
{
	/* inner: callx through r1 = 999, an unregistered id: the run aborts */
	const struct bpf_insn inner_insns[] = {
		MOV64_IMM(BPF_R1, 999),
		MOV64_IMM(BPF_R0, 0),
		CALLX(BPF_R1),
		EXIT(),
	};
	const struct bpf_insn outer_insns[] = {
		MOV64_IMM(BPF_R6, 1),
		CALL_HELPER(NEST_HELPER),
		ALU64_REG(BPF_ADD, BPF_R0, BPF_R6),
		EXIT(),
	};
	static const struct bpfrt_helper h = { .name = "run_inner", .fn = run_inner };
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .jit = true);
	struct bpfrt_prog *outer;
	uint64_t r0 = 0;

	REQUIRE(bpfrt_helper_register(NEST_HELPER, &h) == 0);
	REQUIRE(bpfrt_prog_load(inner_insns, ARRAY_LEN(inner_insns), &opts, &inner) == 0,
		"%s", bpfrt_last_error());
	REQUIRE(bpfrt_prog_load(outer_insns, ARRAY_LEN(outer_insns), &opts, &outer) == 0,
		"%s", bpfrt_last_error());
	inner_mode = im;
	inner_err = 0;
	CHECK(bpfrt_prog_run(outer, outer_mode, 0, 0, &r0) == 0, "%s", bpfrt_last_error());
	CHECK(r0 == 8, "r0 %llu", (unsigned long long)r0);
	CHECK(inner_err == -EINVAL, "inner run: %d", inner_err);
	/* and the outer program still runs cleanly afterwards */
	CHECK(bpfrt_prog_run(outer, outer_mode, 0, 0, &r0) == 0 && r0 == 8);
	bpfrt_prog_free(outer);
	bpfrt_prog_free(inner);
	bpfrt_helper_unregister(NEST_HELPER);
}

TEST(nested_abort_leaves_outer_run_intact_jit_jit)
{
	nested(BPFRT_EXEC_JIT, BPFRT_EXEC_JIT);
}

TEST(nested_abort_leaves_outer_run_intact_interp_interp)
{
	nested(BPFRT_EXEC_INTERP, BPFRT_EXEC_INTERP);
}

TEST(nested_abort_leaves_outer_run_intact_mixed)
{
	nested(BPFRT_EXEC_JIT, BPFRT_EXEC_INTERP);
	nested(BPFRT_EXEC_INTERP, BPFRT_EXEC_JIT);
}

TEST(run_checks_arguments)
{
	const struct bpf_insn insns[] = { MOV64_IMM(BPF_R0, 3), EXIT() };
	struct bpfrt_prog *p;
	uint64_t r0;

	REQUIRE(bpfrt_prog_load(insns, ARRAY_LEN(insns), NULL, &p) == 0);
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_JIT, 0, 0, &r0) == -ENOTSUP);
	CHECK(strstr(bpfrt_last_error(), "not JIT-compiled"));
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_DEFAULT, 0, 0, NULL) == -EINVAL);
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_DEFAULT, 0, 0, &r0) == 0 && r0 == 3);
	bpfrt_prog_free(p);
}
