/* bpf_override_return (58) in kprobes: a program at a host function's
 * entry (tests/host/override_targets.c, built with no special flags) makes
 * it return 42 to its caller without running its body, in the interpreter
 * and the JIT; after detach the function runs again. Refused: a program
 * calling it at an offset into a function or in a kretprobe; the helper
 * answers -EINVAL outside an entry kprobe (a test run). */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/attach.h"
#include "bpfrt/kprobe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
extern volatile long ov_body_runs;
long ov_target(long x);
long ov_caller(long x);

/* r0 = bpf_override_return(ctx, 42) (0 or -EINVAL); r0 is what the
 * program returns (a kprobe's return value is ignored) */
static const char override_42[] = "mov %r2, 42\ncall 58\nexit\n";

static struct bpfrt_prog *load(bool jit)
{
	struct bpf_insn *insns = NULL;
	size_t cnt = 0;
	struct bpfrt_prog *p = NULL;
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .kind = BPFRT_PROG_KPROBE, .jit = jit,
		   .name = "override_42");

	if (bpfrt_asm(override_42, &insns, &cnt) || bpfrt_prog_load(insns, cnt, &o, &p))
		tl_fail(__FILE__, __LINE__, "load: %s", bpfrt_last_error());
	free(insns);
	return p;
}

BOTH_ENGINES(override_skips_the_function)
{
	struct bpfrt_prog *p = load(jit);
	struct bpfrt_link *link = NULL;
	long before;

	REQUIRE(p);
	before = ov_body_runs;
	CHECK_EQ(ov_caller(5), 1010);
	CHECK_EQ(ov_body_runs, before + 1);
	REQUIRE(!bpfrt_kprobe_attach(p, "ov_target", 0, NULL, &link), "%s", bpfrt_last_error());
	before = ov_body_runs;
	CHECK_EQ(ov_target(5), 42);
	CHECK_EQ(ov_caller(7), 1042);
	CHECK_EQ(ov_body_runs, before); /* the body never ran */
	CHECK(!bpfrt_kprobe_optimized(link)); /* override needs the int3 path */
	bpfrt_link_destroy(link);
	CHECK_EQ(ov_caller(5), 1010);
	CHECK_EQ(ov_body_runs, before + 1);
	bpfrt_prog_free(p);
}

TEST(override_is_refused_away_from_a_function_entry)
{
	struct bpfrt_prog *p = load(false);
	struct bpfrt_link *link = NULL;
	BPFRT_OPTS(bpfrt_kprobe_opts, off, .offset = 4);
	BPFRT_OPTS(bpfrt_kprobe_opts, ret, .retprobe = true);
	struct bpfrt_prog *rp = NULL;
	struct bpf_insn *insns = NULL;
	size_t cnt = 0;
	BPFRT_OPTS(bpfrt_prog_load_opts, ro, .kind = BPFRT_PROG_KRETPROBE);

	REQUIRE(p);
	CHECK_EQ(bpfrt_kprobe_attach(p, "ov_target", 0, &off, &link), -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "function's entry"), "%s", bpfrt_last_error());
	CHECK(!link);
	REQUIRE(!bpfrt_asm(override_42, &insns, &cnt));
	REQUIRE(!bpfrt_prog_load(insns, cnt, &ro, &rp), "%s", bpfrt_last_error());
	free(insns);
	CHECK_EQ(bpfrt_kprobe_attach(rp, "ov_target", 0, &ret, &link), -EINVAL);
	CHECK(!link);
	bpfrt_prog_free(rp);
	bpfrt_prog_free(p);
}

TEST(the_helper_refuses_other_contexts)
{
	struct bpfrt_prog *p = load(false);
	uint64_t r0 = 0;
	BPFRT_OPTS(bpfrt_test_run_opts, o);

	REQUIRE(p);
	CHECK_EQ(bpfrt_prog_test_run_opts(p, &o), 0, "%s", bpfrt_last_error());
	CHECK_EQ((int64_t)o.retval, -EINVAL);
	(void)r0;
	bpfrt_prog_free(p);
}
#else
TL_SKIP_ALL("bpf_override_return: kprobes are x86-64 only");
#endif
