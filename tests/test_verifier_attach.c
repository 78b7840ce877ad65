/* The context a verified program reads must fit what its attach point
 * supplies (bpfrt_prog_check_ctx): fentry/fmod_ret/fexit get nr_args u64
 * arguments (fexit and fmod_ret one more for the return value), every
 * target of an fentry.multi its own count, a kprobe a struct pt_regs.
 * A program that reads further is refused at attach, with the program and
 * the target named; one that fits attaches. And the hook must give the
 * context of the kind the program was verified as (bpfrt_prog_check_kind):
 * an attach kind override to another context is refused. Host functions:
 * tramp_funcs (patchable, as test_trampoline) and a plain function for
 * the kprobe. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/attach.h"

#include <errno.h>
#include <string.h>

#if !defined(__x86_64__)
TL_SKIP_ALL("fentry trampolines and kprobes are x86-64 only")
#else

long tramp_add(long a, long b);
long tramp_six(long a, long b, long c, long d, long e, long f);

/* The nr_args of a host function is fixed by its first attach: tramp_add
 * is always attached with 2 arguments here, tramp_six with 6. */

/* r0 = ctx[off / 8] (one 8-byte read at off), then return 0. */
static struct bpfrt_prog *reader(enum bpfrt_prog_kind kind, int16_t off, uint32_t ctx_size)
{
	struct bpf_insn insns[] = {
		LDX(BPF_DW, 2, 1, off),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "ctx_reader", .verify = true,
		   .kind = kind, .ctx_size = ctx_size);
	struct bpfrt_prog *p = NULL;
	int err = bpfrt_prog_load(insns, sizeof(insns) / sizeof(insns[0]), &o, &p);

	CHECK(!err, "load (kind %d, off %d): %d %s", kind, off, err, bpfrt_last_error());
	if (p)
		CHECK(bpfrt_prog_verified(p) && bpfrt_prog_ctx_access(p) == (uint32_t)off + 8,
		      "verified, reads %u", bpfrt_prog_ctx_access(p));
	return p;
}

/* 0 and a link, or the error (message checked to name prog and target). */
static int try_attach(struct bpfrt_prog *p, enum bpfrt_prog_kind kind, const char *target,
		      uint32_t nr_args, const char *name_in_error)
{
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = kind, .target = target,
		   .nr_args = nr_args);
	struct bpfrt_link *l = NULL;
	int err;

	if (!p)
		return -EINVAL;
	err = bpfrt_prog_attach(p, &o, &l);
	if (!err) {
		bpfrt_link_destroy(l);
		return 0;
	}
	CHECK(strstr(bpfrt_last_error(), "ctx_reader") &&
	      strstr(bpfrt_last_error(), name_in_error) &&
	      strstr(bpfrt_last_error(), "bytes of context"),
	      "message names the program and %s: %s", name_in_error, bpfrt_last_error());
	return err;
}

TEST(fentry_refuses_reads_past_the_arguments)
{
	struct bpfrt_prog *third = reader(BPFRT_PROG_FENTRY, 16, 0);  /* ctx[2] */
	struct bpfrt_prog *second = reader(BPFRT_PROG_FENTRY, 8, 0);  /* ctx[1] */
	int err;

	err = try_attach(third, BPFRT_PROG_FENTRY, "tramp_add", 2, "tramp_add");
	CHECK(err == -EINVAL, "fentry reading ctx[2] of a 2-argument function: %d", err);
	CHECK(try_attach(second, BPFRT_PROG_FENTRY, "tramp_add", 2, "tramp_add") == 0,
	      "ctx[1] of 2 arguments: %s", bpfrt_last_error());
	CHECK(try_attach(third, BPFRT_PROG_FENTRY, "tramp_six", 6, "tramp_six") == 0,
	      "ctx[2] of 6 arguments: %s", bpfrt_last_error());
	CHECK(tramp_add(2, 3) == 5);
	bpfrt_prog_free(third);
	bpfrt_prog_free(second);
}

TEST(fexit_and_fmod_ret_get_the_return_value_slot_too)
{
	struct bpfrt_prog *ret = reader(BPFRT_PROG_FEXIT, 16, 0);     /* ctx[2]: return */
	struct bpfrt_prog *past = reader(BPFRT_PROG_FEXIT, 24, 0);    /* ctx[3] */
	struct bpfrt_prog *mret = reader(BPFRT_PROG_FMOD_RET, 16, 0); /* ctx[2]: so far */
	struct bpfrt_prog *enter = reader(BPFRT_PROG_FENTRY, 16, 0);
	int err;

	CHECK(try_attach(ret, BPFRT_PROG_FEXIT, "tramp_add", 2, "tramp_add") == 0,
	      "fexit reading the return value at ctx[2]: %s", bpfrt_last_error());
	CHECK(try_attach(mret, BPFRT_PROG_FMOD_RET, "tramp_add", 2, "tramp_add") == 0,
	      "fmod_ret reading the return value so far: %s", bpfrt_last_error());
	err = try_attach(past, BPFRT_PROG_FEXIT, "tramp_add", 2, "tramp_add");
	CHECK(err == -EINVAL, "fexit reading ctx[3] of 2 arguments + return: %d", err);
	/* the return value slot is fexit's and fmod_ret's, not fentry's */
	err = try_attach(enter, BPFRT_PROG_FENTRY, "tramp_add", 2, "tramp_add");
	CHECK(err == -EINVAL, "fentry reading ctx[2] of 2 arguments: %d", err);
	CHECK(tramp_add(4, 5) == 9);
	bpfrt_prog_free(ret);
	bpfrt_prog_free(past);
	bpfrt_prog_free(mret);
	bpfrt_prog_free(enter);
}

TEST(fentry_multi_checks_every_target)
{
	struct bpfrt_prog *p = reader(BPFRT_PROG_FENTRY_MULTI, 24, 0); /* ctx[3] */
	int err;

	/* make sure both functions have their counts before the glob sees them */
	{
		struct bpfrt_prog *a = reader(BPFRT_PROG_FENTRY, 0, 0);

		CHECK(try_attach(a, BPFRT_PROG_FENTRY, "tramp_add", 2, "tramp_add") == 0);
		CHECK(try_attach(a, BPFRT_PROG_FENTRY, "tramp_six", 6, "tramp_six") == 0);
		bpfrt_prog_free(a);
	}
	CHECK(try_attach(p, BPFRT_PROG_FENTRY_MULTI, "tramp_six", 6, "tramp_six") == 0,
	      "ctx[3] of tramp_six's 6: %s", bpfrt_last_error());
	/* tramp_add has 2: the whole attach is refused, naming it */
	err = try_attach(p, BPFRT_PROG_FENTRY_MULTI, "tramp_*", 6, "tramp_add");
	CHECK(err == -EINVAL, "glob with a 2-argument target: %d", err);
	CHECK(tramp_six(1, 1, 1, 1, 1, 1) == 21);
	bpfrt_prog_free(p);
}

__attribute__((noinline)) long va_kprobe_target(long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

TEST(kprobe_refuses_reads_past_pt_regs)
{
	/* a program verified with a larger caller-described context must
	 * not run on a pt_regs (its kind is refused before its reach); the
	 * kprobe reading the last field attaches */
	struct bpfrt_prog *far = reader(BPFRT_PROG_UNSPEC, 168, 256);
	struct bpfrt_prog *near = reader(BPFRT_PROG_KPROBE, 160, 0);
	struct bpfrt_link *l = NULL;
	int err;

	if (!far || !near)
		return;
	err = bpfrt_kprobe_attach(far, "va_kprobe_target", 0, NULL, &l);
	CHECK(err == -EINVAL && !l, "reads 176 bytes of a 168-byte pt_regs: %d", err);
	CHECK(strstr(bpfrt_last_error(), "ctx_reader") &&
	      strstr(bpfrt_last_error(), "va_kprobe_target"), "%s", bpfrt_last_error());
	err = bpfrt_kprobe_attach(near, "va_kprobe_target", 0, NULL, &l);
	CHECK(!err && l, "reads 168 bytes: %d %s", err, bpfrt_last_error());
	CHECK(va_kprobe_target(2) == 7);
	bpfrt_link_destroy(l);
	bpfrt_prog_free(far);
	bpfrt_prog_free(near);
}

/* ---- kind overrides ------------------------------------------------------ */

/* 0 and a link (destroyed), or the error, whose message must name the
 * program, the kind it was verified as and the hook. */
static int try_override(struct bpfrt_prog *p, enum bpfrt_prog_kind kind, const char *target,
			uint32_t nr_args, const char *verified_as, const char *hook)
{
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = kind, .target = target,
		   .nr_args = nr_args);
	struct bpfrt_link *l = NULL;
	int err;

	if (!p)
		return -EINVAL;
	err = bpfrt_prog_attach(p, &o, &l);
	if (!err) {
		bpfrt_link_destroy(l);
		return 0;
	}
	CHECK(strstr(bpfrt_last_error(), bpfrt_prog_name(p)) &&
	      strstr(bpfrt_last_error(), verified_as) && strstr(bpfrt_last_error(), hook),
	      "message names the program, %s and %s: %s", verified_as, hook,
	      bpfrt_last_error());
	return err;
}

TEST(trampoline_kinds_attach_only_as_verified)
{
	struct bpfrt_prog *enter = reader(BPFRT_PROG_FENTRY, 8, 0);
	struct bpfrt_prog *leave = reader(BPFRT_PROG_FEXIT, 16, 0);  /* return of tramp_add */
	struct bpfrt_prog *multi = reader(BPFRT_PROG_FENTRY_MULTI, 0, 0);

	/* fexit's and fmod_ret's ctx[nr_args] is the return value, which an
	 * fentry program was not verified to see; fmod_ret's result would
	 * replace the function's return although fentry's was checked to be 0 */
	CHECK(try_override(enter, BPFRT_PROG_FEXIT, "tramp_add", 2, "fentry",
			   "fexit tramp_add") == -EINVAL);
	CHECK(try_override(enter, BPFRT_PROG_FMOD_RET, "tramp_add", 2, "fentry",
			   "fmod_ret tramp_add") == -EINVAL);
	CHECK(try_override(leave, BPFRT_PROG_FENTRY, "tramp_add", 2, "fexit",
			   "fentry tramp_add") == -EINVAL);
	CHECK(try_override(enter, BPFRT_PROG_FENTRY_MULTI, "tramp_add", 2, "fentry",
			   "fentry.multi tramp_add") == -EINVAL);
	CHECK(try_override(multi, BPFRT_PROG_FENTRY, "tramp_add", 2, "fentry.multi",
			   "fentry tramp_add") == -EINVAL);
	/* the kinds they were verified as attach */
	CHECK(try_override(enter, BPFRT_PROG_FENTRY, "tramp_add", 2, "", "") == 0, "%s",
	      bpfrt_last_error());
	CHECK(try_override(leave, BPFRT_PROG_FEXIT, "tramp_add", 2, "", "") == 0, "%s",
	      bpfrt_last_error());
	CHECK(try_override(multi, BPFRT_PROG_FENTRY_MULTI, "tramp_add", 2, "", "") == 0, "%s",
	      bpfrt_last_error());
	CHECK(tramp_add(1, 2) == 3);
	bpfrt_prog_free(enter);
	bpfrt_prog_free(leave);
	bpfrt_prog_free(multi);
}

TEST(writable_caller_context_does_not_attach_as_a_hook)
{
	/* verified with 48 read-write bytes (UNSPEC): as an fentry it would
	 * write the traced function's saved arguments, which fentry programs
	 * can only read */
	struct bpf_insn insns[] = {
		ST(BPF_DW, 1, 0, 100),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .name = "ctx_writer", .verify = true,
		   .ctx_size = 48);
	struct bpfrt_prog *p = NULL;

	REQUIRE(!bpfrt_prog_load(insns, 3, &lo, &p), "%s", bpfrt_last_error());
	CHECK(try_override(p, BPFRT_PROG_FENTRY, "tramp_add", 2, "unspec",
			   "fentry tramp_add") == -EINVAL);
	CHECK(try_override(p, BPFRT_PROG_FMOD_RET, "tramp_add", 2, "unspec",
			   "fmod_ret tramp_add") == -EINVAL);
	CHECK(try_override(p, BPFRT_PROG_FENTRY_MULTI, "tramp_*", 6, "unspec",
			   "fentry.multi tramp_*") == -EINVAL);
	CHECK(tramp_add(1, 2) == 3);
	bpfrt_prog_free(p);
}

TEST(kprobe_hooks_take_only_pt_regs_kinds)
{
	struct bpfrt_prog *entry = reader(BPFRT_PROG_FENTRY, 0, 0);
	struct bpfrt_prog *rawtp = reader(BPFRT_PROG_RAW_TRACEPOINT, 0, 0);
	struct bpfrt_prog *kp = reader(BPFRT_PROG_KPROBE, 80, 0);         /* ax */
	struct bpfrt_prog *krp = reader(BPFRT_PROG_KRETPROBE, 80, 0);
	BPFRT_OPTS(bpfrt_kprobe_opts, ko);
	struct bpfrt_link *l = NULL;
	int err;

	/* the direct kprobe API and the dispatch both check */
	err = bpfrt_kprobe_attach(entry, "va_kprobe_target", 0, &ko, &l);
	CHECK(err == -EINVAL && !l, "fentry program on a kprobe: %d", err);
	CHECK(strstr(bpfrt_last_error(), "ctx_reader") && strstr(bpfrt_last_error(), "fentry") &&
	      strstr(bpfrt_last_error(), "kprobe va_kprobe_target"), "%s", bpfrt_last_error());
	ko.retprobe = true;
	err = bpfrt_kprobe_attach(rawtp, "va_kprobe_target", 0, &ko, &l);
	CHECK(err == -EINVAL && !l, "raw_tp program on a kretprobe: %d", err);
	CHECK(strstr(bpfrt_last_error(), "raw_tp") &&
	      strstr(bpfrt_last_error(), "kretprobe va_kprobe_target"), "%s", bpfrt_last_error());
	CHECK(try_override(rawtp, BPFRT_PROG_KPROBE, "va_kprobe_target", 0, "raw_tp",
			   "kprobe va_kprobe_target") == -EINVAL);
	/* kprobe and kretprobe share struct pt_regs (one Linux type) */
	CHECK(try_override(kp, BPFRT_PROG_KRETPROBE, "va_kprobe_target", 0, "", "") == 0, "%s",
	      bpfrt_last_error());
	CHECK(try_override(krp, BPFRT_PROG_KPROBE, "va_kprobe_target", 0, "", "") == 0, "%s",
	      bpfrt_last_error());
	CHECK(va_kprobe_target(2) == 7);
	bpfrt_prog_free(entry);
	bpfrt_prog_free(rawtp);
	bpfrt_prog_free(kp);
	bpfrt_prog_free(krp);
}

#endif /* __x86_64__ */
