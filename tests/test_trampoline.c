/* fentry, fexit, fmod_ret on host functions (tests/host/tramp_funcs_*.c,
 * built with mk/bpfrt-host.mk's flags): arguments, return values, fmod_ret
 * overriding, several programs per function, float registers kept, the
 * tracing helpers, the recursion guard, text_poke's batch and trap paths,
 * and attach/detach churn while two threads call the function (no lost or
 * phantom events). Checks run with the interpreter and the JIT. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"
#include "prog_support.h"
#include "attach_support.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/attach.h"
#include "attach/text_poke.h"
#include "attach/trampoline.h"
#include "attach/trap.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__)
TL_SKIP_ALL("fentry trampolines are x86-64 only")
#else

long tramp_add(long a, long b);
long tramp_six(long a, long b, long c, long d, long e, long f);
int tramp_may_fail(int x);
double tramp_scale(double x, long k, double y);
long tramp_outer(long a);
long tramp_stress(long a);
void tramp_void(void);
long tramp_nodebug(long a, long b);
long tramp_btf3(long a, long b, long c);
extern volatile long tramp_sink;

static struct bpfrt_link *attach(struct bpfrt_prog *p, enum bpfrt_prog_kind kind,
				 const char *target, uint32_t nr_args, uint64_t cookie)
{
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = kind, .target = target,
		   .nr_args = nr_args, .cookie = cookie);
	struct bpfrt_link *l = NULL;
	int err;

	if (!p)
		return NULL;
	err = bpfrt_prog_attach(p, &o, &l);
	CHECK(!err && l, "attach %s: %d %s", target, err, bpfrt_last_error());
	return l;
}

/* Copies ctx[0..n-1] to dst[0..n-1], dst[n] += 1, returns ret. */
static struct bpfrt_prog *copy_args_prog(uint64_t *dst, int n, int32_t ret, bool jit)
{
	struct pb b = { .n = 0 };

	pb_ldptr(&b, 2, dst);
	for (int k = 0; k < n; k++) {
		pb_add(&b, LDX(BPF_DW, 3, 1, (int16_t)(8 * k)));
		pb_add(&b, STX(BPF_DW, 2, 3, (int16_t)(8 * k)));
	}
	pb_add(&b, MOV64_IMM(3, 1));
	pb_add(&b, ATOMIC(BPF_DW, BPF_ADD, 2, 3, (int16_t)(8 * n)));
	pb_add(&b, MOV64_IMM(0, ret));
	pb_add(&b, EXIT());
	return pb_load(&b, "tramp_test", jit);
}

TEST(patchable_functions_found)
{
	const struct bpfrt_patchable_func *f = bpfrt_patchable_lookup("tramp_add");

	REQUIRE(f, "%s", bpfrt_last_error());
	CHECK(f->entry == (uintptr_t)tramp_add);
	CHECK(f->pad == 0 && !f->nops1);
	CHECK(!bpfrt_patchable_lookup("no_such_function_here"));
	CHECK(!bpfrt_patchable_lookup("main"), "main is not built with the flags");
	CHECK(bpfrt_patchable_lookup("test_trampoline:tramp_add") == f, "%s", bpfrt_last_error());
	CHECK(!bpfrt_patchable_lookup("libc:tramp_add"));
	CHECK(strstr(bpfrt_last_error(), "tramp_add"), "%s", bpfrt_last_error());
}

static void check_fentry_args(bool jit)
{
	uint64_t seen[8] = { 0 };
	struct bpfrt_prog *p = copy_args_prog(seen, 6, 0, jit);
	struct bpfrt_link *l = attach(p, BPFRT_PROG_FENTRY, "tramp_six", 6, 0);

	REQUIRE(l);
	CHECK(!is_nop5(tramp_six));
	CHECK(tramp_six(1, 2, 3, 4, 5, 6) == 1 + 4 + 9 + 16 + 25 + 36);
	for (int i = 0; i < 6; i++)
		CHECK(seen[i] == (uint64_t)(i + 1), "arg %d: %lu", i, (unsigned long)seen[i]);
	CHECK(seen[6] == 1);
	CHECK(tramp_six(-1, 0, 0, 0, 0, 0x10000000000l) == -1 + 6 * 0x10000000000l);
	CHECK(seen[0] == (uint64_t)-1 && seen[5] == 0x10000000000ull);
	CHECK(seen[6] == 2);
	bpfrt_link_destroy(l);
	CHECK(is_nop5(tramp_six), "detach restores the nop5");
	tramp_six(1, 1, 1, 1, 1, 1);
	CHECK(seen[6] == 2, "no run after detach");
	bpfrt_prog_free(p);
}

TEST(fentry_args_interp) { check_fentry_args(false); }
TEST(fentry_args_jit) { check_fentry_args(true); }

static void check_fexit(bool jit)
{
	uint64_t seen[8] = { 0 };
	struct bpfrt_prog *p = copy_args_prog(seen, 3, 0, jit);
	struct bpfrt_link *l = attach(p, BPFRT_PROG_FEXIT, "tramp_add", 2, 0);

	REQUIRE(l);
	tramp_sink = 0;
	CHECK(tramp_add(40, 2) == 42);
	CHECK(tramp_sink == 40, "the original ran");
	CHECK(seen[0] == 40 && seen[1] == 2 && seen[2] == 42, "%lu %lu %lu",
	      (unsigned long)seen[0], (unsigned long)seen[1], (unsigned long)seen[2]);
	CHECK(seen[3] == 1);
	/* Nested: tramp_outer calls tramp_add. */
	CHECK(tramp_outer(5) == 60);
	CHECK(seen[2] == 6 && seen[3] == 2);
	bpfrt_link_destroy(l);
	CHECK(is_nop5(tramp_add));
	bpfrt_prog_free(p);
}

TEST(fexit_return_value_interp) { check_fexit(false); }
TEST(fexit_return_value_jit) { check_fexit(true); }

/* Without nr_args the count comes from the function's DWARF: fexit finds
 * the return value right after the real arguments. */
TEST(fexit_without_nr_args_reads_the_return_value)
{
	uint64_t seen[8] = { 0 }, one[8] = { 0 }, fl[8] = { 0 };
	struct bpfrt_prog *p = copy_args_prog(seen, 3, 0, true);
	struct bpfrt_prog *q = copy_args_prog(one, 2, 0, false);
	struct bpfrt_prog *r = copy_args_prog(fl, 2, 0, true);
	struct bpfrt_link *l = attach(p, BPFRT_PROG_FEXIT, "tramp_add", 0, 0);
	struct bpfrt_link *lq = attach(q, BPFRT_PROG_FEXIT, "tramp_may_fail", 0, 0);
	struct bpfrt_link *lr = attach(r, BPFRT_PROG_FEXIT, "tramp_stress", 0, 0);

	REQUIRE(l && lq && lr);
	CHECK(tramp_add(40, 2) == 42);
	CHECK_EQ(seen[0], 40);
	CHECK_EQ(seen[1], 2);
	CHECK_EQ(seen[2], 42);          /* ctx[2]: tramp_add takes two */
	CHECK(tramp_may_fail(21) == 42);
	CHECK_EQ(one[0], 21);
	CHECK_EQ(one[1], 42);           /* ctx[1]: tramp_may_fail takes one */
	CHECK(tramp_stress(9) == 10);
	CHECK_EQ(fl[1], 10);
	bpfrt_link_destroy(l);
	bpfrt_link_destroy(lq);
	bpfrt_link_destroy(lr);
	bpfrt_prog_free(p);
	bpfrt_prog_free(q);
	bpfrt_prog_free(r);
}

/* Where BTF is all there is (tramp_btf3: DWARF stripped after pahole
 * encoded it), the count comes from the BTF. */
TEST(fexit_argument_count_from_btf)
{
	uint64_t seen[8] = { 0 };
	struct bpfrt_prog *p = copy_args_prog(seen, 4, 0, true);
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = BPFRT_PROG_FEXIT, .target = "tramp_btf3");
	struct bpfrt_link *l = NULL;

#ifndef TRAMP_BTF_ENCODED
	bpfrt_prog_free(p);
	SKIP("no pahole when the test was built: tramp_btf3 has no BTF");
#endif
	REQUIRE(p);
	CHECK_EQ(bpfrt_prog_attach(p, &o, &l), 0, "%s", bpfrt_last_error());
	REQUIRE(l);
	CHECK(tramp_btf3(4, 5, 6) == 456);
	CHECK_EQ(seen[0], 4);
	CHECK_EQ(seen[2], 6);
	CHECK_EQ(seen[3], 456);         /* ctx[3]: the BTF says three arguments */
	bpfrt_link_destroy(l);
	o.nr_args = 2;                  /* and a count that disagrees is refused */
	CHECK_EQ(bpfrt_prog_attach(p, &o, &l), -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "tramp_btf3") && strstr(bpfrt_last_error(), "BTF"),
	      "%s", bpfrt_last_error());
	bpfrt_prog_free(p);
}

/* A count that disagrees with the DWARF, or no count where there is no
 * debug info, is an error naming the function: never a default. */
TEST(wrong_or_unknown_argument_count_refused)
{
	uint64_t seen[8] = { 0 };
	struct bpfrt_prog *p = copy_args_prog(seen, 3, 0, true);
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = BPFRT_PROG_FEXIT, .target = "tramp_add",
		   .nr_args = 3);
	struct bpfrt_link *l = NULL;
	const char *msg;

	CHECK_EQ(bpfrt_prog_attach(p, &o, &l), -EINVAL);
	CHECK(!l);
	msg = bpfrt_last_error();
	CHECK(strstr(msg, "fexit") && strstr(msg, "tramp_add") && strstr(msg, "takes 2") &&
	      strstr(msg, "DWARF") && strstr(msg, "nr_args 3"), "%s", msg);
	CHECK(tramp_add(1, 2) == 3);
	CHECK_EQ(seen[3], 0);           /* nothing attached: no run */

	o.target = "tramp_nodebug";
	o.nr_args = 0;
	CHECK_EQ(bpfrt_prog_attach(p, &o, &l), -ENODATA);
	CHECK(!l);
	msg = bpfrt_last_error();
	CHECK(strstr(msg, "fexit") && strstr(msg, "tramp_nodebug") && strstr(msg, "nr_args"),
	      "%s", msg);
	CHECK(tramp_nodebug(2, 3) == 6);
	CHECK_EQ(seen[3], 0);
	/* the user's count is what there is to go by */
	o.nr_args = 2;
	CHECK_EQ(bpfrt_prog_attach(p, &o, &l), 0);
	REQUIRE(l, "%s", bpfrt_last_error());
	CHECK(tramp_nodebug(6, 7) == 42);
	CHECK_EQ(seen[0], 6);
	CHECK_EQ(seen[2], 42);
	bpfrt_link_destroy(l);
	bpfrt_prog_free(p);
}

/* fmod_ret: returns 99 when ctx[0] == 7, else 0 (the original runs). */
static struct bpfrt_prog *fmod_prog(uint64_t *last_ret_slot, bool jit)
{
	struct pb b = { .n = 0 };

	pb_ldptr(&b, 2, last_ret_slot);
	pb_add(&b, LDX(BPF_DW, 3, 1, 8));            /* ctx[nr_args=1]: return so far */
	pb_add(&b, STX(BPF_DW, 2, 3, 0));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, LDX(BPF_W, 3, 1, 0));
	pb_add(&b, JMP_IMM(BPF_JNE, 3, 7, 1));
	pb_add(&b, MOV64_IMM(0, 99));
	pb_add(&b, EXIT());
	return pb_load(&b, "tramp_test", jit);
}

static void check_fmod_ret(bool jit)
{
	uint64_t ret_so_far = 1234, fexit_seen[4] = { 0 }, fentry_seen[4] = { 0 };
	struct bpfrt_prog *fm = fmod_prog(&ret_so_far, jit);
	struct bpfrt_prog *fx = copy_args_prog(fexit_seen, 2, 0, jit);
	struct bpfrt_prog *fe = copy_args_prog(fentry_seen, 1, 0, jit);
	struct bpfrt_link *lm = attach(fm, BPFRT_PROG_FMOD_RET, "tramp_may_fail", 1, 0);
	struct bpfrt_link *lx = attach(fx, BPFRT_PROG_FEXIT, "tramp_may_fail", 1, 0);
	struct bpfrt_link *le = attach(fe, BPFRT_PROG_FENTRY, "tramp_may_fail", 1, 0);

	REQUIRE(lm && lx && le);
	tramp_sink = 0;
	CHECK(tramp_may_fail(3) == 6, "not overridden");
	CHECK(tramp_sink == 3);
	CHECK(ret_so_far == 0, "fmod_ret sees 0 before any override");
	CHECK(fexit_seen[0] == 3 && fexit_seen[1] == 6 && fexit_seen[2] == 1);
	CHECK(fentry_seen[0] == 3 && fentry_seen[1] == 1);
	tramp_sink = 0;
	CHECK(tramp_may_fail(7) == 99, "fmod_ret overrides");
	CHECK(tramp_sink == 0, "the original was skipped");
	CHECK(fexit_seen[0] == 7 && fexit_seen[1] == 99 && fexit_seen[2] == 2,
	      "fexit sees the override");
	CHECK(fentry_seen[1] == 2);
	bpfrt_link_destroy(lm);
	CHECK(tramp_may_fail(7) == 14, "override gone with the link");
	bpfrt_link_destroy(lx);
	bpfrt_link_destroy(le);
	CHECK(is_nop5(tramp_may_fail));
	bpfrt_prog_free(fm);
	bpfrt_prog_free(fx);
	bpfrt_prog_free(fe);
}

TEST(fmod_ret_override_interp) { check_fmod_ret(false); }
TEST(fmod_ret_override_jit) { check_fmod_ret(true); }

TEST(several_programs_per_function_and_kind)
{
	uint64_t a[4] = { 0 }, b[4] = { 0 }, c[4] = { 0 }, d[4] = { 0 };
	struct bpfrt_prog *pa = copy_args_prog(a, 1, 0, true);
	struct bpfrt_prog *pb_ = copy_args_prog(b, 1, 0, false);
	struct bpfrt_prog *pc = copy_args_prog(c, 3, 0, true);
	struct bpfrt_prog *pd = copy_args_prog(d, 3, 0, false);
	struct bpfrt_link *la = attach(pa, BPFRT_PROG_FENTRY, "tramp_add", 2, 0);
	struct bpfrt_link *lb = attach(pb_, BPFRT_PROG_FENTRY, "tramp_add", 2, 0);
	struct bpfrt_link *lc = attach(pc, BPFRT_PROG_FEXIT, "tramp_add", 2, 0);
	struct bpfrt_link *ld = attach(pd, BPFRT_PROG_FEXIT, "tramp_add", 2, 0);

	REQUIRE(la && lb && lc && ld);
	CHECK(tramp_add(10, 20) == 30);
	CHECK(a[0] == 10 && a[1] == 1 && b[0] == 10 && b[1] == 1);
	CHECK(c[2] == 30 && c[3] == 1 && d[2] == 30 && d[3] == 1);
	bpfrt_link_destroy(lb);
	bpfrt_link_destroy(lc);
	CHECK(tramp_add(1, 2) == 3);
	CHECK(a[1] == 2 && b[1] == 1 && c[3] == 1 && d[3] == 2 && d[2] == 3);
	bpfrt_link_destroy(la);
	CHECK(!is_nop5(tramp_add), "fexit still attached");
	bpfrt_link_destroy(ld);
	CHECK(is_nop5(tramp_add));
	/* nr_args is fixed by the first attach of a function. */
	struct bpfrt_link *l1 = attach(pa, BPFRT_PROG_FENTRY, "tramp_add", 2, 0);
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = BPFRT_PROG_FENTRY,
		   .target = "tramp_add", .nr_args = 3);
	struct bpfrt_link *l2 = NULL;

	CHECK(bpfrt_prog_attach(pb_, &o, &l2) == -EINVAL && !l2);
	bpfrt_link_destroy(l1);
	bpfrt_prog_free(pa);
	bpfrt_prog_free(pb_);
	bpfrt_prog_free(pc);
	bpfrt_prog_free(pd);
}

/* fentry on a function taking doubles: ctx holds the integer argument, the
 * xmm registers reach the function unchanged. fexit and fmod_ret on it are
 * refused: its double return is in xmm0, which they cannot read or set. */
TEST(float_registers_survive)
{
	uint64_t seen[8] = { 0 };
	struct bpfrt_prog *pe = copy_args_prog(seen, 1, 0, true);
	struct bpfrt_prog *px = copy_args_prog(seen + 2, 1, 0, false);
	struct bpfrt_link *le = attach(pe, BPFRT_PROG_FENTRY, "tramp_scale", 1, 0);
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = BPFRT_PROG_FEXIT, .target = "tramp_scale");
	struct bpfrt_link *lx = NULL;

	REQUIRE(le && px);
	CHECK_EQ(bpfrt_prog_attach(px, &o, &lx), -EOPNOTSUPP);
	CHECK(!lx && strstr(bpfrt_last_error(), "tramp_scale") &&
	      strstr(bpfrt_last_error(), "floating-point"), "%s", bpfrt_last_error());
	o.kind = BPFRT_PROG_FMOD_RET;
	CHECK_EQ(bpfrt_prog_attach(px, &o, &lx), -EOPNOTSUPP);
	CHECK(!lx && strstr(bpfrt_last_error(), "floating-point"), "%s", bpfrt_last_error());
	volatile double x = 1.5, y = 0.25;

	CHECK(tramp_scale(x, 4, y) == 6.25);
	CHECK(seen[0] == 4, "the integer argument is ctx[0]");
	CHECK(seen[1] == 1);
	bpfrt_link_destroy(le);
	bpfrt_prog_free(pe);
	bpfrt_prog_free(px);
}

/* The tracing helpers: out[0] = func_ip, out[1] = arg_cnt, out[2] =
 * get_func_arg(1), out[3] = its result, out[4] = get_func_ret value,
 * out[5] = its result, out[6] = cookie, out[7] = get_func_arg(5) result. */
static struct bpfrt_prog *helpers_prog(uint64_t *out, bool jit)
{
	struct pb b = { .n = 0 };

	pb_add(&b, MOV64_REG(6, 1));
	pb_ldptr(&b, 7, out);
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_ip));
	pb_add(&b, STX(BPF_DW, 7, 0, 0));
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_arg_cnt));
	pb_add(&b, STX(BPF_DW, 7, 0, 8));
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, MOV64_IMM(2, 1));
	pb_add(&b, MOV64_REG(3, 7));
	pb_add(&b, ALU64_IMM(BPF_ADD, 3, 16));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_arg));
	pb_add(&b, STX(BPF_DW, 7, 0, 24));
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, MOV64_REG(2, 7));
	pb_add(&b, ALU64_IMM(BPF_ADD, 2, 32));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_ret));
	pb_add(&b, STX(BPF_DW, 7, 0, 40));
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_attach_cookie));
	pb_add(&b, STX(BPF_DW, 7, 0, 48));
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, MOV64_IMM(2, 5));
	pb_add(&b, MOV64_REG(3, 10));
	pb_add(&b, ALU64_IMM(BPF_ADD, 3, -8));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_arg));
	pb_add(&b, STX(BPF_DW, 7, 0, 56));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, EXIT());
	return pb_load(&b, "tramp_test", jit);
}

static void check_helpers(bool jit)
{
	uint64_t fe[8], fx[8];
	struct bpfrt_prog *pe = helpers_prog(fe, jit), *px = helpers_prog(fx, jit);
	struct bpfrt_link *le = attach(pe, BPFRT_PROG_FENTRY, "tramp_add", 2, 0xc0ffee);
	struct bpfrt_link *lx = attach(px, BPFRT_PROG_FEXIT, "tramp_add", 2, 77);

	REQUIRE(le && lx);
	memset(fe, 0xaa, sizeof(fe));
	memset(fx, 0xaa, sizeof(fx));
	CHECK(tramp_add(100, 23) == 123);
	CHECK(fe[0] == (uintptr_t)tramp_add, "func_ip %#lx", (unsigned long)fe[0]);
	CHECK(fe[1] == 2 && fe[2] == 23 && fe[3] == 0);
	CHECK(fe[5] == (uint64_t)-EOPNOTSUPP, "no return value in fentry");
	CHECK(fe[6] == 0xc0ffee, "cookie %#lx", (unsigned long)fe[6]);
	CHECK(fe[7] == (uint64_t)-EINVAL, "arg 5 of 2");
	CHECK(fx[0] == (uintptr_t)tramp_add && fx[1] == 2 && fx[2] == 23);
	CHECK(fx[4] == 123 && fx[5] == 0, "get_func_ret %lu", (unsigned long)fx[4]);
	CHECK(fx[6] == 77);
	bpfrt_link_destroy(le);
	bpfrt_link_destroy(lx);
	bpfrt_prog_free(pe);
	bpfrt_prog_free(px);
}

TEST(tracing_helpers_interp) { check_helpers(false); }
TEST(tracing_helpers_jit) { check_helpers(true); }

/* The program calls a kfunc that calls the function it is attached to:
 * the inner run is skipped and counted as a miss. */
static uint64_t call_traced(uint64_t a, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return (uint64_t)tramp_add((long)a, 1);
}

static void check_recursion(bool jit)
{
	static const struct bpfrt_helper k = { .fn = call_traced, .args = { BPFRT_ARG_ANYTHING } };
	uint64_t runs = 0;
	int id = bpfrt_kfunc_id("tramp_test_call_traced");
	struct pb b = { .n = 0 };

	if (id < 0)
		id = bpfrt_kfunc_register("tramp_test_call_traced", &k);
	REQUIRE(id >= BPFRT_KFUNC_ID_BASE, "%s", bpfrt_last_error());
	pb_ldptr(&b, 2, &runs);
	pb_add(&b, MOV64_IMM(3, 1));
	pb_add(&b, ATOMIC(BPF_DW, BPF_ADD, 2, 3, 0));
	pb_add(&b, LDX(BPF_DW, 1, 1, 0));
	pb_add(&b, CALL_HELPER(id));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, EXIT());

	struct bpfrt_prog *p = pb_load(&b, "tramp_test", jit);
	struct bpfrt_link *l = attach(p, BPFRT_PROG_FENTRY, "tramp_add", 2, 0);

	REQUIRE(l);
	uint64_t misses = bpfrt_prog_misses(p);

	CHECK(tramp_add(1, 2) == 3);
	CHECK(tramp_add(3, 4) == 7);
	CHECK(runs == 2, "runs %lu", (unsigned long)runs);
	CHECK(bpfrt_prog_misses(p) == misses + 2, "misses %lu",
	      (unsigned long)(bpfrt_prog_misses(p) - misses));
	bpfrt_link_destroy(l);
	bpfrt_prog_free(p);
}

TEST(recursion_guard_counts_misses_interp) { check_recursion(false); }
TEST(recursion_guard_counts_misses_jit) { check_recursion(true); }

TEST(bad_targets_refused)
{
	uint64_t seen[4];
	struct bpfrt_prog *p = copy_args_prog(seen, 1, 0, true);
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = BPFRT_PROG_FENTRY,
		   .target = "no_such_function");
	struct bpfrt_link *l = NULL;

	CHECK(bpfrt_prog_attach(p, &o, &l) == -ENOENT && !l);
	CHECK(strstr(bpfrt_last_error(), "no_such_function"), "%s", bpfrt_last_error());
	o.target = "tramp_add";
	o.nr_args = 7;
	CHECK(bpfrt_prog_attach(p, &o, &l) == -EINVAL && !l);
	bpfrt_prog_free(p);
}

/* ---- text_poke directly ------------------------------------------------- */

static _Atomic long stub_hits;

static void poke_stub_fn(void)
{
	atomic_fetch_add(&stub_hits, 1);
}

static volatile int poke_stop;
static _Atomic long poke_calls;

static void *poke_caller(void *arg)
{
	while (!poke_stop) {
		tramp_void();
		atomic_fetch_add(&poke_calls, 1);
	}
	return NULL;
}

/* Spins (yielding) until *v > 0, for at most a minute. */
static void wait_until_positive(_Atomic long *v)
{
	for (int i = 0; i < 600000 && atomic_load(v) <= 0; i++)
		usleep(100);
}

/* tramp_void's entry flips between its nop5 and a call to a C function
 * (a normal call: the function returns into tramp_void's body) while two
 * threads call it; threads that meet the int3 are redirected. */
TEST(text_poke_under_load)
{
	uint8_t call[5];
	pthread_t t[2];
	uint64_t w0, s0, w1, s1, traps0 = bpfrt_trap_hits();

	if (bpfrt_encode_call(call, (uintptr_t)tramp_void, (uintptr_t)poke_stub_fn))
		SKIP("libbpfrt and the test functions are more than 2 GiB apart");
	bpfrt_text_poke_stats(&w0, &s0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, poke_caller, NULL);
	/* A loaded machine may not run the callers at all while the pokes go
	 * by: wait for them to call, and end with the call in place until one
	 * went through it (counts, not time, decide the checks below). */
	wait_until_positive(&poke_calls);
	for (int i = 0; i < 3000 && !tl_failed(); i++) {
		CHECK(!bpfrt_text_poke((void *)tramp_void, call, 5), "%s", bpfrt_last_error());
		if (i == 2999)
			wait_until_positive(&stub_hits);
		CHECK(!bpfrt_text_poke((void *)tramp_void, nop5, 5), "%s", bpfrt_last_error());
	}
	poke_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	bpfrt_text_poke_stats(&w1, &s1);
	CHECK(is_nop5(tramp_void));
	CHECK(s1 - s0 == 6000 * 3, "three syncs per poke: %lu", (unsigned long)(s1 - s0));
	CHECK(atomic_load(&stub_hits) > 0 && atomic_load(&poke_calls) > 0);
	printf("# %ld calls, %ld through the patched call, %lu traps emulated\n",
	       (long)atomic_load(&poke_calls), (long)atomic_load(&stub_hits),
	       (unsigned long)(bpfrt_trap_hits() - traps0));
	CHECK(bpfrt_text_poke((void *)tramp_void, "\x01\x02\x03\x04\x05", 5) == -EINVAL,
	      "bytes that are not one emulable instruction are refused");
}

static bool trap_fn(void *ctx, ucontext_t *uc, uintptr_t addr)
{
	/* Emulate the nop5 that the int3 replaced. */
	(*(long *)ctx)++;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(addr + 5);
	return true;
}

TEST(trap_register_routes_int3)
{
	long hits = 0;

	REQUIRE(!bpfrt_trap_register((uintptr_t)tramp_void, trap_fn, &hits), "%s",
		bpfrt_last_error());
	CHECK(bpfrt_trap_register((uintptr_t)tramp_void, trap_fn, &hits) == -EEXIST);
	REQUIRE(!bpfrt_text_poke((void *)tramp_void, "\xcc", 1), "%s", bpfrt_last_error());
	long sink = tramp_sink;

	tramp_void();
	tramp_void();
	CHECK(hits == 2, "hits %ld", hits);
	CHECK(tramp_sink == sink + 2, "the body ran after the emulated nop");
	REQUIRE(!bpfrt_text_poke((void *)tramp_void, nop5, 1));
	CHECK(!bpfrt_trap_unregister((uintptr_t)tramp_void));
	CHECK(bpfrt_trap_unregister((uintptr_t)tramp_void) == -ENOENT);
	tramp_void();
	CHECK(hits == 2 && is_nop5(tramp_void));
}

/* ---- attach/detach churn ---------------------------------------------------- */

/* Each call passes id = (seq << 1) | thread; the fentry program stores it
 * in fe_slot[thread], the fexit program in fx_slot[thread] (attach_support.h:
 * the phases; a call in one "on" phase must be seen by both programs). */
static uint64_t fe_slot[2], fx_slot[2];
/* 2: fentry and fexit come and go together, both must see a call; 1: only
 * the fentry program is judged (the fexit one is not always attached). */
static int churn_want;

static struct bpfrt_prog *slot_prog(uint64_t *slots, int ctx_word, bool jit)
{
	struct pb b = { .n = 0 };

	pb_add(&b, LDX(BPF_DW, 2, 1, 0));                   /* id */
	pb_add(&b, LDX(BPF_DW, 4, 1, (int16_t)(8 * ctx_word)));
	pb_add(&b, MOV64_REG(3, 2));
	pb_add(&b, ALU64_IMM(BPF_AND, 3, 1));
	pb_add(&b, ALU64_IMM(BPF_LSH, 3, 3));
	pb_ldptr(&b, 5, slots);
	pb_add(&b, ALU64_REG(BPF_ADD, 5, 3));
	pb_add(&b, STX(BPF_DW, 5, ctx_word ? 4 : 2, 0));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, EXIT());
	return pb_load(&b, "tramp_test", jit);
}

static void *churn_caller(void *arg)
{
	struct churn_stats *st = arg;
	uint64_t seq = 0;

	while (!churn_stop) {
		uint64_t id = (++seq << 1) | (uint64_t)st->thread;
		unsigned long p1 = atomic_load(&churn_phase);
		long r = tramp_stress((long)id);
		unsigned long p2 = atomic_load(&churn_phase);
		bool fe = fe_slot[st->thread] == id;
		bool fx = churn_want == 2 && fx_slot[st->thread] == id + 1;

		st->wrong += r != (long)id + 1;
		churn_note(st, p1, p2, fe + fx, churn_want);
	}
	return NULL;
}

static void check_churn(bool jit)
{
	struct bpfrt_prog *pe = slot_prog(fe_slot, 0, jit);
	struct bpfrt_prog *px = slot_prog(fx_slot, 1, jit); /* ctx[1] = ret (nr_args 1) */
	struct churn_stats st[2] = { { .thread = 0 }, { .thread = 1 } };
	pthread_t t[2];
	struct timespec start;
	long cycles = 0;

	REQUIRE(pe && px);
	memset(fe_slot, 0, sizeof(fe_slot));
	memset(fx_slot, 0, sizeof(fx_slot));
	churn_want = 2;
	churn_start(t, churn_caller, st);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		atomic_fetch_add(&churn_phase, 1);           /* attaching */
		struct bpfrt_link *le = attach(pe, BPFRT_PROG_FENTRY, "tramp_stress", 1, 0);
		struct bpfrt_link *lx = attach(px, BPFRT_PROG_FEXIT, "tramp_stress", 1, 0);

		atomic_fetch_add(&churn_phase, 1);           /* on */
		churn_spin(20000);
		atomic_fetch_add(&churn_phase, 1);           /* detaching */
		bpfrt_link_destroy(lx);
		bpfrt_link_destroy(le);
		atomic_fetch_add(&churn_phase, 1);           /* off */
		churn_spin(20000);
		cycles++;
	} while (!tl_failed() && churn_more(&start, st));
	churn_finish(t);
	printf("# %s: %ld attach/detach cycles, calls %ld+%ld, checked on %ld off %ld\n",
	       jit ? "jit" : "interp", cycles, st[0].calls, st[1].calls,
	       st[0].must_see + st[1].must_see, st[0].must_not + st[1].must_not);
	for (int i = 0; i < 2; i++) {
		CHECK(st[i].wrong == 0, "thread %d: %ld wrong results", i, st[i].wrong);
		CHECK(st[i].missed == 0, "thread %d: %ld lost events", i, st[i].missed);
		CHECK(st[i].phantom == 0, "thread %d: %ld phantom events", i, st[i].phantom);
		CHECK(st[i].calls > 0);
	}
	CHECK(st[0].must_see + st[1].must_see > 0, "some calls fell in attached phases");
	CHECK(is_nop5(tramp_stress));
	bpfrt_prog_free(pe);
	bpfrt_prog_free(px);
}

TEST(attach_detach_churn_interp) { check_churn(false); }
TEST(attach_detach_churn_jit) { check_churn(true); }

/* ---- fentry fast path (stub + compiled image) ----------------------------- */

static struct bpfrt_tramp_func *tramp_func_of(const void *fn)
{
	return bpfrt_multi_lookup_hash((uintptr_t)fn);
}

/* counts[ctx[0] & 1] += 1: a program that calls nothing (inline run). */
static struct bpfrt_prog *counter_by_arg_prog(uint64_t *counts, bool jit)
{
	struct pb b = { .n = 0 };

	pb_add(&b, LDX(BPF_DW, 2, 1, 0));
	pb_add(&b, ALU64_IMM(BPF_AND, 2, 1));
	pb_add(&b, ALU64_IMM(BPF_LSH, 2, 3));
	pb_ldptr(&b, 3, counts);
	pb_add(&b, ALU64_REG(BPF_ADD, 3, 2));
	pb_add(&b, LDX(BPF_DW, 4, 3, 0));
	pb_add(&b, ALU64_IMM(BPF_ADD, 4, 1));
	pb_add(&b, STX(BPF_DW, 3, 4, 0));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, EXIT());
	return pb_load(&b, "tramp_test", jit);
}

/* out[0] = get_func_ip(), out[1] += 1: calls a helper, so not inline. */
static struct bpfrt_prog *func_ip_prog(uint64_t *out, bool jit)
{
	struct pb b = { .n = 0 };

	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_ip));
	pb_ldptr(&b, 2, out);
	pb_add(&b, STX(BPF_DW, 2, 0, 0));
	pb_add(&b, MOV64_IMM(3, 1));
	pb_add(&b, ATOMIC(BPF_DW, BPF_ADD, 2, 3, 8));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, EXIT());
	return pb_load(&b, "tramp_test", jit);
}

/* Inline, helper-calling and interpreted programs in one image, in attach
 * order; the image follows every attach and detach. */
TEST(fast_path_mixed_programs)
{
	uint64_t a[2] = { 0 }, h[2] = { 0 }, in[8] = { 0 };
	struct bpfrt_prog *pa = counter_by_arg_prog(a, true);
	struct bpfrt_prog *ph = func_ip_prog(h, true);
	struct bpfrt_prog *pi = copy_args_prog(in, 6, 0, false);

	REQUIRE(pa && ph && pi);
	CHECK(bpfrt_tramp_prog_inlinable(pa));
	CHECK(!bpfrt_tramp_prog_inlinable(ph), "calls a helper");
	CHECK(!bpfrt_tramp_prog_inlinable(pi), "interpreted");

	struct bpfrt_link *la = attach(pa, BPFRT_PROG_FENTRY, "tramp_six", 6, 0);
	struct bpfrt_link *lh = attach(ph, BPFRT_PROG_FENTRY, "tramp_six", 6, 0);
	struct bpfrt_link *li = attach(pi, BPFRT_PROG_FENTRY, "tramp_six", 6, 0);
	struct bpfrt_tramp_func *tf = tramp_func_of(tramp_six);

	REQUIRE(la && lh && li && tf);
	CHECK(tf->stub && atomic_load(&tf->fast_image), "fentry runs a compiled image");
	CHECK(tramp_six(1, 2, 3, 4, 5, 6) == 91);
	CHECK(tramp_six(2, 0, 0, 0, 0, 7) == 44);
	CHECK(a[1] == 1 && a[0] == 1, "inline run: %lu %lu", (unsigned long)a[0],
	      (unsigned long)a[1]);
	CHECK(h[0] == (uintptr_t)tramp_six && h[1] == 2, "helper run sees the frame");
	CHECK(in[0] == 2 && in[5] == 7 && in[6] == 2, "interpreted run");
	uintptr_t img = atomic_load(&tf->fast_image);

	bpfrt_link_destroy(lh);
	CHECK(atomic_load(&tf->fast_image) != img, "detach compiles a new image");
	CHECK(tramp_six(3, 0, 0, 0, 0, 0) == 3);
	CHECK(a[1] == 2 && h[1] == 2 && in[6] == 3 && in[0] == 3);
	bpfrt_link_destroy(la);
	CHECK(tramp_six(4, 0, 0, 0, 0, 0) == 4);
	CHECK(a[0] + a[1] == 3 && in[6] == 4, "only the interpreted one is left");
	bpfrt_link_destroy(li);
	CHECK(is_nop5(tramp_six));
	CHECK(!atomic_load(&tf->fast_image), "no image without programs");
	tramp_six(5, 0, 0, 0, 0, 0);
	CHECK(a[0] + a[1] == 3 && in[6] == 4 && h[1] == 2, "nothing runs after detach");
	bpfrt_prog_free(pa);
	bpfrt_prog_free(ph);
	bpfrt_prog_free(pi);
}

/* Float arguments survive inline runs and C runs of the compiled image. */
TEST(fast_path_float_registers)
{
	uint64_t a[2] = { 0 }, in[4] = { 0 };
	struct bpfrt_prog *pa = counter_by_arg_prog(a, true);
	struct bpfrt_prog *pi = copy_args_prog(in, 1, 0, false);
	struct bpfrt_link *la = attach(pa, BPFRT_PROG_FENTRY, "tramp_scale", 1, 0);
	volatile double x = 1.5, y = 0.25;

	REQUIRE(la);
	CHECK(tramp_scale(x, 4, y) == 6.25);
	CHECK(a[0] == 1);
	struct bpfrt_link *li = attach(pi, BPFRT_PROG_FENTRY, "tramp_scale", 1, 0);

	REQUIRE(li);
	CHECK(tramp_scale(x, 3, y) == 4.75);
	CHECK(a[1] == 1 && in[0] == 3 && in[1] == 1);
	bpfrt_link_destroy(la);
	bpfrt_link_destroy(li);
	bpfrt_prog_free(pa);
	bpfrt_prog_free(pi);
}

/* The inline guard: a program already on this thread's stack of attached
 * runs is skipped and counted; another program on the stack sends the
 * inline run through the full check in C, which runs it. */
TEST(fast_path_recursion_guard)
{
	uint64_t a[2] = { 0 }, o[2] = { 0 };
	struct bpfrt_prog *pa = counter_by_arg_prog(a, true);
	struct bpfrt_prog *other = counter_by_arg_prog(o, true);
	struct bpfrt_link *la = attach(pa, BPFRT_PROG_FENTRY, "tramp_add", 2, 0);
	struct bpfrt_attach_tls saved = bpfrt_attach_tls;
	uint64_t misses = bpfrt_prog_misses(pa);

	REQUIRE(la && other);
	bpfrt_attach_tls.active[0] = NULL;
	CHECK(tramp_add(2, 1) == 3 && a[0] == 1, "empty stack: inline run");
	/* the generated guard leaves the stack as bpfrt_attach_run() does */
	CHECK(bpfrt_attach_tls.depth == 0 && bpfrt_attach_tls.active[0] == pa,
	      "inline guard state drifted from attach/run.h");
	/* As if pa's run had reached tramp_add again. */
	bpfrt_attach_tls.active[0] = pa;
	bpfrt_attach_tls.depth = 1;
	CHECK(tramp_add(2, 1) == 3);
	CHECK(a[0] == 1, "a program running on this thread is not re-entered");
	CHECK(bpfrt_prog_misses(pa) == misses + 1, "and the miss is counted");
	CHECK(bpfrt_attach_tls.depth == 1 && bpfrt_attach_tls.active[0] == pa);
	/* Another program is running: pa runs (nested), the stack comes back. */
	bpfrt_attach_tls.active[0] = other;
	CHECK(tramp_add(2, 1) == 3);
	CHECK(a[0] == 2 && bpfrt_prog_misses(pa) == misses + 1);
	CHECK(bpfrt_attach_tls.depth == 1 && bpfrt_attach_tls.active[0] == other);
	/* A full stack skips everything. */
	bpfrt_attach_tls.depth = BPFRT_ATTACH_MAX_NEST;
	CHECK(tramp_add(2, 1) == 3);
	CHECK(a[0] == 2 && bpfrt_prog_misses(pa) == misses + 2);
	bpfrt_attach_tls = saved;
	CHECK(tramp_add(2, 1) == 3 && a[0] == 3);
	bpfrt_link_destroy(la);
	bpfrt_prog_free(pa);
	bpfrt_prog_free(other);
}

/* Program A stays attached while B (fentry) and X (fexit) come and go and
 * two threads call the function: every image switch, and every switch of
 * the entry between the stub and the fexit trampoline, must keep A's runs
 * exact (A counts each thread's calls); B is checked as in check_churn. */
TEST(fast_path_churn_keeps_other_programs_exact)
{
	uint64_t counts[2] = { 0 }, fx[4];
	struct bpfrt_prog *pa = counter_by_arg_prog(counts, true);
	struct bpfrt_prog *pb_ = slot_prog(fe_slot, 0, true);
	struct bpfrt_prog *px = copy_args_prog(fx, 1, 0, false);
	struct churn_stats st[2] = { { .thread = 0 }, { .thread = 1 } };
	struct timespec start;
	pthread_t t[2];
	long cycles = 0;

	REQUIRE(pa && pb_ && px);
	struct bpfrt_link *la = attach(pa, BPFRT_PROG_FENTRY, "tramp_stress", 1, 0);

	REQUIRE(la);
	memset(fe_slot, 0, sizeof(fe_slot));
	churn_want = 1;
	churn_start(t, churn_caller, st);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		atomic_fetch_add(&churn_phase, 1);
		struct bpfrt_link *lb = attach(pb_, BPFRT_PROG_FENTRY, "tramp_stress", 1, 0);
		struct bpfrt_link *lx = cycles & 1 ?
			attach(px, BPFRT_PROG_FEXIT, "tramp_stress", 1, 0) : NULL;

		atomic_fetch_add(&churn_phase, 1);
		churn_spin(20000);
		atomic_fetch_add(&churn_phase, 1);
		if (lx)
			bpfrt_link_destroy(lx);
		bpfrt_link_destroy(lb);
		atomic_fetch_add(&churn_phase, 1);
		churn_spin(20000);
		cycles++;
	} while (!tl_failed() && churn_more(&start, st));
	churn_finish(t);
	bpfrt_link_destroy(la);
	printf("# %ld cycles, calls %ld+%ld, B checked on %ld off %ld\n", cycles,
	       st[0].calls, st[1].calls, st[0].must_see + st[1].must_see,
	       st[0].must_not + st[1].must_not);
	for (int i = 0; i < 2; i++) {
		CHECK((long)counts[i] == st[i].calls, "thread %d: A ran %lu times for %ld calls",
		      i, (unsigned long)counts[i], st[i].calls);
		CHECK(st[i].wrong == 0 && st[i].missed == 0 && st[i].phantom == 0,
		      "thread %d: wrong %ld lost %ld phantom %ld", i, st[i].wrong,
		      st[i].missed, st[i].phantom);
	}
	CHECK(st[0].must_see + st[1].must_see > 0);
	CHECK(is_nop5(tramp_stress));
	bpfrt_prog_free(pa);
	bpfrt_prog_free(pb_);
	bpfrt_prog_free(px);
}

/* ---- the inline RCU read side matches core/rcu.h -------------------------- */

typedef void (*void_fn)(void);

static void_fn rcu_fn(enum bpfrt_tramp_type type)
{
	struct bpfrt_tramp_desc d = { .type = type };
	uintptr_t f;

	pthread_mutex_lock(&bpfrt_tramp_lock);
	f = bpfrt_tramp_build(&d, (uintptr_t)tramp_add);
	pthread_mutex_unlock(&bpfrt_tramp_lock);
	CHECK(f, "%s", bpfrt_last_error());
	return (void_fn)f;
}

static void c_lock(void) { bpfrt_rcu_read_lock(); }
static void c_unlock(void) { bpfrt_rcu_read_unlock(); }

#define RCU_STEPS 6

/* The reader state after each step, with the counter reduced to "inside"
 * and the registry links cleared: every other field the C side keeps must
 * come out the same from the generated code. */
struct rcu_trace {
	struct bpfrt_rcu_reader snap[RCU_STEPS];
	bool ctr_current[RCU_STEPS]; /* ctr == the grace-period counter */
	void_fn lock, unlock;
};

static void *rcu_trace_thread(void *arg)
{
	struct rcu_trace *tr = arg;
	void_fn steps[RCU_STEPS] = { tr->lock, tr->lock, tr->unlock, tr->unlock,
				     tr->lock, tr->unlock };
	uint64_t prev_ctr = 0;

	for (int i = 0; i < RCU_STEPS; i++) {
		uint64_t before = atomic_load(&bpfrt_rcu_gp_ctr), after, ctr;
		bool outer = steps[i] == tr->lock && bpfrt_rcu_self.nesting == 0;

		steps[i]();
		after = atomic_load(&bpfrt_rcu_gp_ctr);
		memcpy(&tr->snap[i], &bpfrt_rcu_self, sizeof(bpfrt_rcu_self));
		ctr = atomic_load(&tr->snap[i].ctr);
		/* outermost lock: the counter as read then; nested: unchanged;
		 * outside: 0 */
		tr->ctr_current[i] = !tr->snap[i].nesting ? ctr == 0 :
				     outer ? ctr >= before && ctr <= after : ctr == prev_ctr;
		prev_ctr = ctr;
		atomic_store(&tr->snap[i].ctr, ctr != 0);
		tr->snap[i].next = tr->snap[i].prev = NULL;
	}
	return NULL;
}

static void run_trace(struct rcu_trace *tr)
{
	pthread_t t;

	pthread_create(&t, NULL, rcu_trace_thread, tr);
	pthread_join(t, NULL);
}

struct gp_waiter {
	void_fn lock, unlock;
	_Atomic int state; /* 1: inside, 2: about to leave */
};

static void *gp_reader(void *arg)
{
	struct gp_waiter *w = arg;
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	w->lock();
	atomic_store(&w->state, 1);
	nanosleep(&ts, NULL);
	atomic_store(&w->state, 2);
	w->unlock();
	return NULL;
}

static void check_rcu_inline(bool membarrier)
{
	bool was = bpfrt_rcu_uses_membarrier();

	if (!bpfrt_rcu_set_membarrier(membarrier)) {
		printf("# no membarrier here: fenced mode only\n");
		return;
	}
	void_fn gl = rcu_fn(BPFRT_TRAMP_RCU_LOCK_FN), gu = rcu_fn(BPFRT_TRAMP_RCU_UNLOCK_FN);
	struct rcu_trace c = { .lock = c_lock, .unlock = c_unlock };
	struct rcu_trace g = { .lock = gl, .unlock = gu };
	struct rcu_trace mixed1 = { .lock = gl, .unlock = c_unlock };
	struct rcu_trace mixed2 = { .lock = c_lock, .unlock = gu };

	REQUIRE(gl && gu);
	/* Fresh threads: the first lock registers the thread. */
	run_trace(&c);
	run_trace(&g);
	run_trace(&mixed1);
	run_trace(&mixed2);
	for (int i = 0; i < RCU_STEPS; i++) {
		CHECK(!memcmp(&c.snap[i], &g.snap[i], sizeof(c.snap[i])),
		      "step %d: generated state differs from rcu.h's (nesting %u/%u)", i,
		      c.snap[i].nesting, g.snap[i].nesting);
		CHECK(!memcmp(&c.snap[i], &mixed1.snap[i], sizeof(c.snap[i])), "step %d", i);
		CHECK(!memcmp(&c.snap[i], &mixed2.snap[i], sizeof(c.snap[i])), "step %d", i);
		CHECK(c.ctr_current[i] && g.ctr_current[i] && mixed1.ctr_current[i] &&
		      mixed2.ctr_current[i], "step %d: counter published", i);
	}
	CHECK(c.snap[0].nesting == 1 && c.snap[0].ctr && c.snap[0].registered);
	CHECK(c.snap[3].nesting == 0 && !c.snap[3].ctr);
	/* A grace period waits for a generated read section. */
	struct gp_waiter w = { .lock = gl, .unlock = gu };
	pthread_t t;

	pthread_create(&t, NULL, gp_reader, &w);
	while (!atomic_load(&w.state))
		sched_yield();
	bpfrt_rcu_synchronize();
	CHECK(atomic_load(&w.state) == 2, "synchronize returned inside a generated section");
	pthread_join(t, NULL);
	bpfrt_rcu_set_membarrier(was);
}

TEST(rcu_inline_matches_c_membarrier) { check_rcu_inline(true); }
TEST(rcu_inline_matches_c_fenced) { check_rcu_inline(false); }
/* ---- a trap delivered after its poke ended ---------------------------------- */

/* A thread can be preempted between its int3 and its SIGTRAP handler, and
 * in the handler. The handler once looked for a live poke, found none (the
 * poke whose int3 the thread hit was over, the next not yet published),
 * then looked at the byte and found the next poke's int3: it took it for
 * the host's and passed the trap to SIG_DFL, killing the process (about 1
 * run in 4 of this file under ASan). Here the timing is forced, in a
 * child so that a death is reported: a host handler in front of bpfrt's
 * (chaining to it, as trap.h asks) holds the trapped thread until its poke
 * has ended; the main thread waits to start the next poke until that
 * thread is in bpfrt's handler, past the poke lookup, inside a handler
 * registered at the same address, which declines once the new int3 is
 * there. bpfrt must then see that a poke started and look again. */
static _Atomic unsigned long late_pokes_done;
static _Atomic int late_trapped, late_in_handler, late_armed;
static _Atomic long late_races;
static volatile int late_stop;
static struct sigaction late_bpfrt_sa;

static void late_trap_wrapper(int sig, siginfo_t *info, void *ucv)
{
	ucontext_t *uc = ucv;

	if (info->si_code == SI_KERNEL &&
	    (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1 == (uintptr_t)tramp_void) {
		unsigned long seen = atomic_load(&late_pokes_done);

		atomic_store(&late_trapped, 1);
		while (atomic_load(&late_pokes_done) == seen && !late_stop)
			;
	}
	late_bpfrt_sa.sa_sigaction(sig, info, ucv);
}

static uint64_t late_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Declines every trap; the first one after arming waits (1 s at most) for
 * the next poke's int3. */
static bool late_declining_trap_fn(void *ctx, ucontext_t *uc, uintptr_t addr)
{
	uint64_t t0 = late_now_ns();

	if (!atomic_exchange(&late_armed, 0))
		return false;
	atomic_store(&late_in_handler, 1);
	while (*(volatile uint8_t *)addr != 0xcc && late_now_ns() - t0 < 1000000000u)
		;
	if (*(volatile uint8_t *)addr == 0xcc)
		atomic_fetch_add(&late_races, 1);
	return false;
}

static void *late_caller(void *arg)
{
	while (!late_stop)
		tramp_void();
	return NULL;
}

/* Waits (1 s at most) for flag; false on timeout. */
static bool late_wait(_Atomic int *flag)
{
	uint64_t t0 = late_now_ns();

	while (!atomic_load(flag))
		if (late_now_ns() - t0 > 1000000000u)
			return false;
	return true;
}

/* One poke; then, if the caller trapped during it, the next poke starts
 * only once the caller is in the declining handler. */
static int late_poke(const uint8_t bytes[5])
{
	atomic_store(&late_trapped, 0);
	atomic_store(&late_in_handler, 0);
	atomic_store(&late_armed, 1);
	if (bpfrt_text_poke((void *)tramp_void, bytes, 5))
		return -1;
	atomic_fetch_add(&late_pokes_done, 1);
	if (atomic_load(&late_trapped))
		late_wait(&late_in_handler);
	return 0;
}

/* Exit codes: 0 fine, 2 setup failed, 3 the race was never set up, 4 wrong
 * bytes left; killed by SIGTRAP: a bpfrt int3 went to SIG_DFL. */
static int late_trap_child(void)
{
	struct sigaction sa = { .sa_sigaction = late_trap_wrapper,
				.sa_flags = SA_SIGINFO | SA_NODEFER };
	uint64_t t0 = late_now_ns();
	uint8_t call[5];
	pthread_t t;
	int i;

	if (bpfrt_encode_call(call, (uintptr_t)tramp_void, (uintptr_t)poke_stub_fn) ||
	    bpfrt_trap_register((uintptr_t)tramp_void, late_declining_trap_fn, NULL))
		return 2;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &late_bpfrt_sa) || !(late_bpfrt_sa.sa_flags & SA_SIGINFO))
		return 2;
	pthread_create(&t, NULL, late_caller, NULL);
	for (i = 0; i < 20000 && atomic_load(&late_races) < 200 &&
		    late_now_ns() - t0 < 3000000000u; i++)
		if (late_poke(i & 1 ? nop5 : call))
			return 2;
	if (i & 1 && late_poke(nop5))
		return 2;
	late_stop = 1;
	pthread_join(t, NULL);
	sigaction(SIGTRAP, &late_bpfrt_sa, NULL);
	bpfrt_trap_unregister((uintptr_t)tramp_void);
	printf("# %d pokes, %ld traps handled after their poke ended while the next began\n",
	       i, (long)atomic_load(&late_races));
	fflush(stdout);
	if (!atomic_load(&late_races))
		return 3;
	return is_nop5(tramp_void) ? 0 : 4;
}

TEST(trap_delivered_after_its_poke_ended)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0);
	if (!pid)
		_exit(late_trap_child());
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(!WIFSIGNALED(status), "child killed by signal %d (%s)", WTERMSIG(status),
	      WTERMSIG(status) == SIGTRAP ? "a bpfrt int3 went to SIG_DFL" : "?");
	CHECK(!WIFEXITED(status) || !WEXITSTATUS(status), "child exit code %d (%s)",
	      WEXITSTATUS(status), WEXITSTATUS(status) == 3 ? "no late trap happened" : "setup");
}

#endif /* __x86_64__ */
