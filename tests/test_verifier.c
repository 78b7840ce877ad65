/* The verifier (src/verifier): a corpus of accepted and rejected programs
 * (tests/verifier/: hand-written assembly, generated families, BPF C),
 * every accepted one also run by the interpreter and the JIT; every BPF C
 * program of tests/progs and bench/progs verifies; the Linux verifier
 * agrees on each case (as root) except where the corpus says why not. The
 * fuzzer is tests/test_verifier_fuzz.c. */
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "isa/isa.h"
#include "maps/map.h"
#include "verifier/vharness.h"
#include "verifier/vsupport.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* struct bpf_perf_event_data begins with the architecture's user registers,
 * so sample_period's offset is the target's (the corpus's perf_event cases
 * read it there). */
#include <linux/bpf_perf_event.h>
#include <stddef.h>
#if defined(__aarch64__)
#define PERF_SAMPLE_PERIOD_OFF 272
#elif defined(__riscv)
#define PERF_SAMPLE_PERIOD_OFF 256
#else
#define PERF_SAMPLE_PERIOD_OFF 168
#endif
_Static_assert(offsetof(struct bpf_perf_event_data, sample_period) == PERF_SAMPLE_PERIOD_OFF,
	       "sample_period where the corpus reads it");
#define STR_(x) #x
#define STR(x) STR_(x)

#include "verifier/corpus_asm.inc"

/* ---- running accepted programs ------------------------------------------------ */

static void run_accepted_in(const struct vcase *c, struct bpfrt_prog *prog, const char *mode,
			    enum bpfrt_exec_mode exec, uint64_t *r0)
{
	uint64_t len, ctx = ctx_for(c, &len);
	int err;

	if (!ctx)
		return;
	err = bpfrt_prog_run(prog, exec, ctx, len, r0);
	if (err)
		tl_fail(__FILE__, __LINE__, "%s (%s): run failed: %s", c->name, mode,
			bpfrt_last_error());
	else if (c->ret != RET_ANY && *r0 != (uint64_t)c->ret)
		tl_fail(__FILE__, __LINE__, "%s (%s): returned %#" PRIx64 ", expected %#" PRIx64,
			c->name, mode, *r0, (uint64_t)c->ret);
}

/* In its engine; an interpreter load also runs in the checking
 * interpreter, which must find no violation and return what the case
 * expects (maps keep their state between the runs, so results are only
 * compared with the expectation, as for the JIT). */
static void run_accepted(const struct vcase *c, struct bpfrt_prog *prog, const char *mode)
{
	uint64_t r0 = 0;

	run_accepted_in(c, prog, mode, prog->jit_func ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, &r0);
	if (!prog->jit_func)
		run_accepted_in(c, prog, "checked", BPFRT_EXEC_CHECKED, &r0);
}

static size_t cases_checked, cases_accepted, cases_rejected;

static int cases_skipped_qemu;

static struct bpfrt_env *asan_budget_env(void)
{
	static struct bpfrt_env *env;

	if (!env) {
		struct bpfrt_env_opts eo = { .sz = sizeof(eo), .max_processed_insns = 100000 };

		if (bpfrt_env_new(&eo, &env))
			env = NULL; /* the default, Linux's 1M */
	}
	return env;
}

static void check_case(const struct vcase *c)
{
	static char log[1 << 16];
	char err[256] = "";
	struct bpfrt_prog *prog = NULL;
	struct built b;
	int rc;

	/* Walks to the 1M-insn limit only exercise the verifier (C, the same
	 * on every architecture; native and ASan runs cover them): under
	 * qemu-user they cost ~8 s each. */
	bool budget = c->reject && strstr(c->reject, "BPF program is too large");

	if (budget && getenv("BPFRT_CROSS_QEMU")) {
		cases_skipped_qemu++;
		return;
	}
	if (build_case(c->text, &b, err, sizeof(err))) {
		tl_fail(__FILE__, __LINE__, "%s: %s", c->name, err);
		return;
	}
	/* Under ASan the same walks to a 100k budget: memory errors show in
	 * the first steps of a walk as in the last, and the full 1M costs
	 * minutes there (the native run walks the whole budget). */
	load_env = budget && TL_ASAN ? asan_budget_env() : NULL;
	rc = load_case(c, &b, false, &prog, log, sizeof(log), 1);
	load_env = NULL;
	cases_checked++;
	if (c->reject) {
		cases_rejected++;
		if (!rc) {
			tl_fail(__FILE__, __LINE__, "%s: accepted, expected rejection '%s'", c->name,
				c->reject);
			bpfrt_prog_free(prog);
		} else if (!strstr(bpfrt_last_error(), c->reject)) {
			tl_fail(__FILE__, __LINE__, "%s: rejected with '%s', expected '%s'", c->name,
				bpfrt_last_error(), c->reject);
		} else if (!strstr(bpfrt_last_error(), "insn ")) {
			tl_fail(__FILE__, __LINE__, "%s: message names no insn: %s", c->name,
				bpfrt_last_error());
		}
		free(b.insns);
		return;
	}
	cases_accepted++;
	if (rc) {
		tl_fail(__FILE__, __LINE__, "%s: rejected: %s\n%s", c->name, bpfrt_last_error(), log);
		free(b.insns);
		return;
	}
	run_accepted(c, prog, "interp");
	bpfrt_prog_free(prog);
	prog = NULL;
	rc = load_case(c, &b, true, &prog, NULL, 0, 0);
	if (rc)
		tl_fail(__FILE__, __LINE__, "%s: JIT load failed: %s", c->name, bpfrt_last_error());
	else
		run_accepted(c, prog, "jit");
	bpfrt_prog_free(prog);
	free(b.insns);
}

#include "verifier/corpus_gen.inc"

/* BPFRT_CORPUS_TIMES=1 names the cases that take over 50 ms (the slow
 * ones under qemu). */
static void check_case_timed(const struct vcase *c)
{
	static int show = -1;
	struct timespec a, b;

	if (show < 0)
		show = getenv("BPFRT_CORPUS_TIMES") != NULL;
	clock_gettime(CLOCK_MONOTONIC, &a);
	check_case(c);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;

	if (show && ms > 50)
		printf("# %s: %.0f ms\n", c->name, ms);
}

TEST(asm_corpus_verdicts_and_runs)
{
	maps_init();
	for (size_t i = 0; i < sizeof(asm_cases) / sizeof(asm_cases[0]); i++)
		check_case_timed(&asm_cases[i]);
	if (cases_skipped_qemu)
		printf("# %d rejects that walk 1M insns not run under qemu-user (verifier only; "
		       "native and ASan runs check them)\n", cases_skipped_qemu);
}

static uint64_t const_str_first(uint64_t s, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return *(const char *)(uintptr_t)s;
}

/* BPFRT_ARG_PTR_TO_CONST_STR takes strings only from maps that cannot
 * change (frozen and BPF_F_RDONLY_PROG), not from maps named .rodata. */
TEST(const_string_argument_needs_a_frozen_read_only_map)
{
	static const struct bpfrt_helper k = { .fn = const_str_first, .ret = BPFRT_RET_INTEGER,
					       .args = { BPFRT_ARG_PTR_TO_CONST_STR } };
	static const struct { const char *map; const char *reject; } cases[] = {
		{ "rodata", NULL },
		{ "ro", "does not point to a readonly map" },        /* not frozen */
		{ "frozen", "does not point to a readonly map" },    /* programs may write it */
		{ "rodata_rw", "does not point to a readonly map" }, /* ".rodata.rw", unfrozen */
		{ "ro4", "does not point to a readonly map" },       /* four entries */
	};
	int id = bpfrt_kfunc_id("const_str_first");

	maps_init();
	if (id < 0)
		id = bpfrt_kfunc_register("const_str_first", &k);
	REQUIRE(id >= BPFRT_KFUNC_ID_BASE, "%s", bpfrt_last_error());
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[128];
		struct vcase c = { .name = cases[i].map, .text = text, .reject = cases[i].reject,
				   .ret = 'h' };

		snprintf(text, sizeof(text), "lddw %%r1, mapval:%s+0\ncall %d\nexit\n",
			 cases[i].map, id);
		check_case(&c);
	}
}

TEST(generated_corpus_verdicts_and_runs)
{
	maps_init();
	gen_cases_init();
	for (size_t i = 0; i < gen_cnt; i++)
		check_case_timed(&gen_cases[i]);
}

/* ---- every BPF C program of the project verifies ------------------------------ */

static int verify_objects_in(const char *dir, int *cnt)
{
	static char log[1 << 20];
	DIR *d = opendir(dir);
	struct dirent *e;
	int bad = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		struct bpfrt_object *obj = NULL;
		struct bpfrt_prog *p;
		size_t len = strlen(e->d_name);

		if (len < 7 || strcmp(e->d_name + len - 6, ".bpf.o") || !strncmp(e->d_name, "bad_", 4))
			continue;
		/* passes a number in r1 and computes with it: no verifier
		 * accepts that of a context pointer (test_privstack loads it
		 * trusted) */
		if (!strcmp(e->d_name, "nested_tree.bpf.o"))
			continue;
#ifndef BTFARGS_BTF_ENCODED
		/* its typed arguments need the host function's BTF */
		if (!strcmp(e->d_name, "btf_args.bpf.o"))
			continue;
#endif
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (bpfrt_object_open(path, NULL, &obj) ||
		    bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
			    .sz = sizeof(struct bpfrt_object_load_opts), .trusted = true })) {
			/* needs host kfuncs or is a loader negative: not ours */
			bpfrt_object_close(obj);
			continue;
		}
		for (p = bpfrt_object_next_prog(obj, NULL); p; p = bpfrt_object_next_prog(obj, p)) {
			BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log,
				   .log_size = sizeof(log), .log_level = 1);
			const char *name = bpfrt_prog_name(p);
			size_t nlen = strlen(name);
			/* unsafe_*.bpf.o: the checking interpreter's unsafe
			 * programs, which the verifier must reject (but for
			 * the *_ok ones) */
			bool unsafe = !strncmp(e->d_name, "unsafe_", 7) &&
				      !(nlen >= 3 && !strcmp(name + nlen - 3, "_ok"));

			if (!bpfrt_prog_autoload(p))
				continue; /* '?' in its SEC() name: never loaded */
			(*cnt)++;
			if (unsafe && !bpfrt_prog_verify(p, &vo)) {
				bad++;
				tl_fail(__FILE__, __LINE__, "%s: %s: unsafe program accepted",
					e->d_name, name);
			} else if (!unsafe && bpfrt_prog_verify(p, &vo)) {
				bad++;
				tl_fail(__FILE__, __LINE__, "%s: %s: %s", e->d_name, name,
					bpfrt_last_error());
			}
		}
		bpfrt_object_close(obj);
	}
	closedir(d);
	return bad;
}

static uint64_t host_add_fn(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a + b;
}

TEST(every_project_bpf_program_verifies)
{
	static const char *const kfuncs[] = { "host_add", "host_mix", "host_sum", "tp_test_refire",
					      "tramp_test_call_traced", "bpfrt_run_children" };
	struct bpfrt_helper k = { .fn = host_add_fn, .ret = BPFRT_RET_INTEGER,
				  .args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING } };
	/* host_sum reads a buffer: a memory argument, not a leaked pointer */
	struct bpfrt_helper mem = { .fn = host_add_fn, .ret = BPFRT_RET_INTEGER,
				    .args = { BPFRT_ARG_PTR_TO_MEM, BPFRT_ARG_CONST_SIZE } };
	char dir[PATH_MAX];
	int cnt = 0, bad;

	for (size_t i = 0; i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++)
		if (bpfrt_kfunc_id(kfuncs[i]) < 0)
			bpfrt_kfunc_register(kfuncs[i], strcmp(kfuncs[i], "host_sum") ? &k : &mem);
	snprintf(dir, sizeof(dir), "%s", tl_prog_path(""));
	bad = verify_objects_in(dir, &cnt);
	snprintf(dir, sizeof(dir), "%s/../../bench/progs", tl_prog_path(""));
	bad += verify_objects_in(dir, &cnt);
	if (!cnt)
		SKIP("no BPF objects built next to this binary (make all)");
	printf("# %d programs of tests/progs and bench/progs verified, %d rejected\n", cnt, bad);
	CHECK(cnt >= 30, "only %d programs found", cnt);
}

/* The private-stack benchmark's loop (lookup / update if missing /
 * delete) with batch_iters = 4096, as the kernel accepts it: each
 * iteration's NULL and non-NULL paths must rejoin through pruning, past the
 * per-insn state cap (it hit the 1M limit from 511 iterations on). */
TEST(long_loop_of_map_calls_verifies)
{
	static char log[1 << 16];
	char path[PATH_MAX];
	struct bpfrt_object *obj = NULL;
	struct bpfrt_prog *p;
	BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log, .log_size = sizeof(log),
		   .log_level = 1);
	int *iters;

	snprintf(path, sizeof(path), "%s/../../bench/progs/private_stack.bpf.o", tl_prog_path(""));
	if (bpfrt_object_open(path, NULL, &obj))
		SKIP("%s: %s", path, bpfrt_last_error());
	iters = bpfrt_object_global(obj, "batch_iters", NULL);
	REQUIRE(iters);
	*iters = 4096;
	REQUIRE(!bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
			.sz = sizeof(struct bpfrt_object_load_opts), .trusted = true }),
		"%s", bpfrt_last_error());
	p = bpfrt_object_find_prog(obj, "stack0");
	REQUIRE(p);
	CHECK(!bpfrt_prog_verify(p, &vo), "%s", bpfrt_last_error());
	printf("# batch_iters 4096: %llu insns processed, %u states\n",
	       (unsigned long long)vo.insn_processed, vo.states);
	bpfrt_object_close(obj);
}

/* ---- log and CLI-facing API ------------------------------------------------------ */

/* An object's program: its source lines from BTF line info, helpers and
 * maps by name, register states as the kernel prints them. */
TEST(log_reads_like_the_kernels)
{
	static char log[1 << 16];
	char path[PATH_MAX];
	struct bpfrt_object *obj = NULL;
	struct bpfrt_prog *p;
	BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log, .log_size = sizeof(log),
		   .log_level = 2);
	static const char *const want[] = {
		"0: R1=ctx() ",
		"; int k = 0; @ vmaps.bpf.c:110\n",
		"2: (63) *(u32 *)(r10 -4) = r6",
		"4: (07) r2 += -4                      ; R2_w=fp-4\n",
		"; char *v = bpf_map_lookup_elem(&a, &k); @ vmaps.bpf.c:111\n",
		"5: (18) r1 = map[a]                   ; R1_w=map_ptr(map=a,ks=4,vs=64)\n",
		"7: (85) call bpf_map_lookup_elem#1    ; R0_w=map_value_or_null(id=1,map=a,ks=4,vs=64)\n",
		"8: (15) if r0 == 0x0 goto pc+6        ; R0=map_value(map=a,ks=4,vs=64)\n",
		"9: (79) r1 = *(u64 *)(r7 +0)          ; R1_w=scalar() R7=ctx()\n",
		"10: (25) if r1 > 0x40 goto pc+4       ; R1_w=scalar(smin=smin32=0,smax=umax=smax32="
		"umax32=64,var_off=(0x0; 0x7f))\n",
		"; return v[i]; @ vmaps.bpf.c:116\n",
		"12: (71) r6 = *(u8 *)(r0 +0)\ninvalid access to map value",
		"processed 12 insns (limit 1000000) total_states ",
	};

	snprintf(path, sizeof(path), "%s/../verifier/progs/vmaps.bpf.o", tl_prog_path(""));
	if (bpfrt_object_open(path, NULL, &obj))
		SKIP("%s: %s", path, bpfrt_last_error());
	REQUIRE(!bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
			.sz = sizeof(struct bpfrt_object_load_opts), .trusted = true }),
		"%s", bpfrt_last_error());
	p = bpfrt_object_find_prog(obj, "var_index_off_by_one");
	REQUIRE(p);
	CHECK_EQ(bpfrt_prog_verify(p, &vo), -EACCES);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(strstr(log, want[i]), "missing \"%s\" in:\n%s", want[i], log);
	/* level 1 too: the same lines */
	vo.log_level = 1;
	CHECK_EQ(bpfrt_prog_verify(p, &vo), -EACCES);
	CHECK(strstr(log, want[6]), "%s", log);
	bpfrt_object_close(obj);
}

TEST(log_names_insn_disassembly_and_state)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1, .imm = 1 },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 0, .src_reg = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[4096];
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .verify = true, .log_buf = log,
		   .log_size = sizeof(log), .log_level = 2);
	struct bpfrt_prog *p = NULL;
	int err = bpfrt_prog_load(insns, 3, &o, &p);

	CHECK(err == -EACCES, "%d %s", err, bpfrt_last_error());
	CHECK(strstr(bpfrt_last_error(), "insn 1: R1 invalid mem access 'scalar'"), "%s",
	      bpfrt_last_error());
	/* the kernel's notation: C-like insn, the state it left after it, the
	 * message on its own line, the totals */
	CHECK(strstr(log, "0: (b7) r1 = 1                        ; R1_w=1\n"), "%s", log);
	CHECK(strstr(log, "1: (79) r0 = *(u64 *)(r1 +0)\nR1 invalid mem access 'scalar'\n"
		      "processed 2 insns (limit 1000000)"), "%s", log);
	/* without verify, the same raw bytes load trusted (validator only) */
	o.verify = false;
	CHECK(bpfrt_prog_load(insns, 3, &o, &p) == 0, "%s", bpfrt_last_error());
	CHECK(p && !bpfrt_prog_verified(p));
	bpfrt_prog_free(p);
	/* a small log keeps the tail, where the reason is */
	o.verify = true;
	o.log_size = 40;
	bpfrt_prog_load(insns, 3, &o, &p);
	CHECK(strlen(log) < 40 && strstr(log, "insn"), "%s", log);
}

TEST(verified_stack_depth_is_tighter_only_when_safe)
{
	/* r10 escapes into r1 (the validator gives 512) but only 16 bytes are used */
	const char *text = "mov %r1, %r10\nadd %r1, -16\nstdw [%r1], 1\nstdw [%r1+8], 2\n"
			   "ldxdw %r0, [%r1+8]\nexit\n";
	const char *escaped = "mov %r1, %r10\nadd %r1, -16\nstdw [%r1], 1\nmov %r2, 8\n"
			      "mov %r3, %r1\nmov %r1, %r10\nadd %r1, -24\ncall 4\nmov %r0, 0\nexit\n";
	struct bpf_insn *insns;
	size_t n;
	struct bpfrt_prog *p = NULL;
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .verify = true);
	uint64_t r0, ctx = 0; /* a verified program never runs on a NULL context */

	REQUIRE(bpfrt_asm(text, &insns, &n) == 0);
	o.verify = false;
	REQUIRE(bpfrt_prog_load(insns, n, &o, &p) == 0);
	CHECK(bpfrt_prog_stack_depth(p) == 512, "%u", bpfrt_prog_stack_depth(p));
	bpfrt_prog_free(p);
	o.verify = true;
	o.jit = true;
	REQUIRE(bpfrt_prog_load(insns, n, &o, &p) == 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_stack_depth(p) == 16, "%u", bpfrt_prog_stack_depth(p));
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_JIT, (uintptr_t)&ctx, 0, &r0) == 0 && r0 == 2);
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, (uintptr_t)&ctx, 0, &r0) == 0 && r0 == 2);
	bpfrt_prog_free(p);
	free(insns);
	/* a stack pointer handed to a helper as a plain number (a leak only
	 * trusted programs may make): keep 512 */
	REQUIRE(bpfrt_asm(escaped, &insns, &n) == 0);
	o.kind = BPFRT_PROG_KPROBE;
	o.flags = BPFRT_F_ALLOW_PTR_LEAKS;
	REQUIRE(bpfrt_prog_load(insns, n, &o, &p) == 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_stack_depth(p) == 512, "%u", bpfrt_prog_stack_depth(p));
	bpfrt_prog_free(p);
	free(insns);
}

/* ---- speed: a 100,000-instruction program (printed, not asserted tightly) ------------ */

TEST(large_program_verifies_fast)
{
	size_t n = 100000, i = 0;
	struct bpf_insn *insns = calloc(n, sizeof(*insns));
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .verify = true);
	struct bpfrt_prog *p = NULL;
	struct timespec t0, t1;
	double ms;

	/* straight-line ALU and stack traffic with a forward branch every 16 */
	insns[i++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 };
	while (i < n - 1) {
		if (i % 16 == 0 && i + 2 < n - 1) {
			insns[i++] = (struct bpf_insn){ .code = BPF_JMP | BPF_JGT | BPF_K, .dst_reg = 2,
							.off = 1, .imm = 7 };
			insns[i++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K,
							.dst_reg = 0, .imm = 1 };
		} else if (i % 4 == 0) {
			insns[i++] = (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_DW,
							.dst_reg = 10, .src_reg = 0, .off = -8 };
		} else {
			insns[i++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_XOR | BPF_K,
							.dst_reg = 0, .imm = (int32_t)i };
		}
	}
	insns[n - 1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(bpfrt_prog_load(insns, n, &o, &p) == 0, "%s", bpfrt_last_error());
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	printf("# 100,000 instructions validated and verified in %.1f ms\n", ms);
	CHECK(ms < 5000, "%.1f ms", ms);
	bpfrt_prog_free(p);
	free(insns);
}

/* ---- agreement with Linux's verifier (root only) ---------------------------------- */

static void compare_with_linux(const struct vcase *cases, size_t n, size_t *same, size_t *diff,
			       size_t *skipped)
{
	static char log[1 << 16];

	for (size_t i = 0; i < n; i++) {
		const struct vcase *c = &cases[i];
		int lx = c->lx == LX_SKIP ? -1 : kernel_verdict(c, log, sizeof(log));
		bool ours = !c->reject, expect = ours;
		char *last;

		if (lx < 0) {
			(*skipped)++;
			continue;
		}
		if (c->lx == LX_ACCEPTS)
			expect = true;
		else if (c->lx == LX_REJECTS)
			expect = false;
		if ((lx == 1) == expect) {
			(*same)++;
			if (c->lx != LX_SAME)
				(*diff)++;
			continue;
		}
		/* the reason is the line before the statistics */
		last = log + strlen(log);
		while (last > log && last[-1] == '\n')
			*--last = 0;
		if ((last = strrchr(log, '\n')))
			*last = 0;
		last = strrchr(log, '\n');
		tl_fail(__FILE__, __LINE__, "%s: Linux %s, bpfrt %s%s%s (Linux: %s)", c->name,
			lx ? "accepts" : "rejects", ours ? "accepts" : "rejects: ",
			ours ? "" : c->reject, c->lx != LX_SAME ? " [recorded difference wrong]" : "",
			last ? last + 1 : log);
	}
}

TEST(verifier_agrees_with_linux)
{
	size_t same = 0, diff = 0, skipped = 0;
	int err;

	if (geteuid() != 0)
		SKIP("needs root to load programs into the kernel");
	/* ~12 s in the kernel, whatever the build: the normal build compares */
	if (TL_ASAN)
		SKIP("Linux's verdicts do not depend on the sanitizer build; the normal build compares them");
	maps_init();
	gen_cases_init();
	err = kernel_maps_init();
	if (err)
		SKIP("cannot create kernel maps: %s", strerror(-err));
	compare_with_linux(asm_cases, sizeof(asm_cases) / sizeof(asm_cases[0]), &same, &diff,
			   &skipped);
	compare_with_linux(gen_cases, gen_cnt, &same, &diff, &skipped);
	printf("# Linux: %zu cases agree (%zu of them recorded differences), %zu not comparable\n",
	       same, diff, skipped);
}

/* Found by the fuzzer (seed 107): a mutated lddw immediate kept its map
 * reference, so the verifier typed it as the map while the program ran
 * the bogus immediate and map_lookup_elem faulted on it. The asm corpus
 * cannot spell a reference whose immediate disagrees, hence this test. */
TEST(lddw_immediate_must_match_its_map_reference)
{
	static const char *const texts[] = {
		"mov %r0, 0\nstw [%r10-4], 5\nmov %r2, %r10\nadd %r2, -4\n"
		"lddw %r1, map:array\ncall 1\nmov %r0, 0\nexit\n",
		"lddw %r1, mapval:array+8\nldxdw %r0, [%r1]\nexit\n",
	};

	maps_init();
	for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		struct vcase c = { .name = "lddw_ref", .ctx_size = 64 };
		struct bpfrt_prog *prog = NULL;
		struct built b;
		char err[256];

		REQUIRE(build_case(texts[t], &b, err, sizeof(err)) == 0, "%s", err);
		REQUIRE(b.ref_cnt == 1);
		/* untouched, it verifies */
		CHECK(load_case(&c, &b, false, &prog, NULL, 0, 0) == 0, "%s", bpfrt_last_error());
		bpfrt_prog_free(prog);
		/* either half of the immediate changed: rejected, not run */
		for (int half = 0; half < 2; half++) {
			struct bpf_insn *in = &b.insns[b.refs[0].insn + (uint32_t)half];
			int32_t saved = in->imm;

			in->imm ^= 0x10000;
			prog = NULL;
			CHECK(load_case(&c, &b, false, &prog, NULL, 0, 0) == -EACCES,
			      "case %zu half %d accepted", t, half);
			CHECK(strstr(bpfrt_last_error(), "does not match its map reference"), "%s",
			      bpfrt_last_error());
			if (prog)
				bpfrt_prog_free(prog);
			in->imm = saved;
		}
		free(b.insns);
	}
}

/* ---- the scalar domain is sound: concrete samples stay inside -------------------------- */

#include "verifier/vstate.h"

static uint64_t sd_alu(uint8_t op, uint64_t a, uint64_t b, bool is64)
{
	if (!is64) {
		uint32_t x = (uint32_t)a, y = (uint32_t)b;

		switch (op) {
		case BPF_ADD: return (uint32_t)(x + y);
		case BPF_SUB: return (uint32_t)(x - y);
		case BPF_MUL: return (uint32_t)(x * y);
		case BPF_AND: return x & y;
		case BPF_OR: return x | y;
		case BPF_XOR: return x ^ y;
		case BPF_LSH: return (uint32_t)(x << (y & 31));
		case BPF_RSH: return x >> (y & 31);
		case BPF_ARSH: return (uint32_t)((int32_t)x >> (y & 31));
		case BPF_DIV: return y ? x / y : 0;
		default: return y ? x % y : x; /* BPF_MOD */
		}
	}
	switch (op) {
	case BPF_ADD: return a + b;
	case BPF_SUB: return a - b;
	case BPF_MUL: return a * b;
	case BPF_AND: return a & b;
	case BPF_OR: return a | b;
	case BPF_XOR: return a ^ b;
	case BPF_LSH: return a << (b & 63);
	case BPF_RSH: return a >> (b & 63);
	case BPF_ARSH: return (uint64_t)((int64_t)a >> (b & 63));
	case BPF_DIV: return b ? a / b : 0;
	default: return b ? a % b : a;
	}
}

static bool sd_jmp(uint8_t op, uint64_t a, uint64_t b, bool is32)
{
	int64_t sa = (int64_t)a, sb = (int64_t)b;

	if (is32) {
		a = (uint32_t)a, b = (uint32_t)b;
		sa = (int32_t)(uint32_t)a, sb = (int32_t)(uint32_t)b;
	}
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSGT: return sa > sb;
	case BPF_JSGE: return sa >= sb;
	case BPF_JSLT: return sa < sb;
	case BPF_JSLE: return sa <= sb;
	default: return a & b; /* BPF_JSET */
	}
}

static bool sd_contains(const struct vreg *r, uint64_t v)
{
	return r->umin <= v && v <= r->umax && r->smin <= (int64_t)v && (int64_t)v <= r->smax &&
	       r->u32min <= (uint32_t)v && (uint32_t)v <= r->u32max &&
	       r->s32min <= (int32_t)(uint32_t)v && (int32_t)(uint32_t)v <= r->s32max &&
	       (v & ~r->var_off.mask) == r->var_off.value;
}

static uint64_t sd_value(void)
{
	static const uint64_t edges[] = { 0, 1, 15, 16, 0x7fffffff, 0x80000000, 0xffffffff,
					  0x100000000ull, 0x7fffffffffffffffull,
					  0x8000000000000000ull, ~0ull, ~0ull - 15 };
	uint64_t v = fz(2) ? edges[fz(12)] : fz_next();

	return fz(4) ? v : v >> fz(64);
}

/* v sign-extended from its low `bits` (64: unchanged) */
static uint64_t sd_sext(uint64_t v, unsigned bits)
{
	uint64_t sb;

	if (bits >= 64)
		return v;
	sb = 1ull << (bits - 1);
	v &= (1ull << bits) - 1;
	return (v ^ sb) - sb;
}

static char sd_trace[4096];
static size_t sd_len;

static void sd_log(const char *what, uint8_t op, bool wide, uint64_t k, const struct vreg *r)
{
	if (sd_len < sizeof(sd_trace) - 200)
		sd_len += (size_t)snprintf(sd_trace + sd_len, sizeof(sd_trace) - sd_len,
			"%s op=%#x %s k=%#" PRIx64 " -> u[%#" PRIx64 ",%#" PRIx64 "] s[%" PRId64 ",%"
			PRId64 "] u32[%#x,%#x] s32[%d,%d] t(%#" PRIx64 ";%#" PRIx64 ")\n", what, op,
			wide ? "64" : "32", k, r->umin, r->umax, r->smin, r->smax, r->u32min,
			r->u32max, r->s32min, r->s32max, r->var_off.value, r->var_off.mask);
}

/* One random walk: ALU operations with constants and branches taken one
 * way, applied to the abstract scalar and to concrete samples that
 * follow the same path. Returns false on the first unsound step. */
static bool sd_walk(void)
{
	static const uint8_t alu[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_AND, BPF_OR, BPF_XOR,
				       BPF_LSH, BPF_RSH, BPF_ARSH, BPF_DIV, BPF_MOD };
	static const uint8_t jmp[] = { BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE,
				       BPF_JSGT, BPF_JSGE, BPF_JSLT, BPF_JSLE, BPF_JSET };
	uint64_t v[48], kvs[48];
	size_t nv = 48;
	struct vreg r, k;
	unsigned lsize = 8;
	bool lsx = false;

	sd_len = 0;
	vreg_mark_unknown(&r);
	if (fz(2)) {
		/* a load of 1, 2, 4 or 8 bytes, zero- or (ldsx) sign-extended */
		lsize = 1u << fz(4);
		lsx = lsize < 8 && fz(2);
		vreg_mark_load(&r, lsize, lsx);
		sd_log(lsx ? "load-sx" : "load", 0, true, lsize, &r);
	}
	for (size_t i = 0; i < nv; i++) {
		v[i] = sd_value();
		if (lsize < 8)
			v[i] = sd_sext(v[i] & ((1ull << (lsize * 8)) - 1), lsx ? lsize * 8 : 64);
		if (!sd_contains(&r, v[i])) {
			sd_log("loaded value outside", 0, true, v[i], &r);
			return false;
		}
	}
	for (int step = 0; step < 12 && nv; step++) {
		bool wide = fz(3) != 0;
		uint64_t c = sd_value();

		memset(&k, 0, sizeof(k));
		k.type = SCALAR;
		if (fz(8) == 0) {
			/* mov32 (zero extension), movsx of the low 8/16/32 bits, or
			 * a fill of the low 1/2/4 bytes of a spilled scalar, zero-
			 * or sign-extended (vreg_coerce, then ldsx's vscalar_sext) */
			unsigned bits = 8u << fz(3);
			uint32_t kind = fz(3);

			if (kind == 2) {
				bool sx = fz(2);

				vreg_coerce(&r, bits / 8);
				if (sx)
					vscalar_sext(&r, bits, true);
				sd_log(sx ? "fill-sx" : "fill", 0, true, bits, &r);
				for (size_t i = 0; i < nv; i++)
					v[i] = sd_sext(v[i] & ((1ull << bits) - 1), sx ? bits : 64);
			} else if (kind) {
				vreg_zext32(&r);
				sd_log("zext32", 0, false, 0, &r);
				for (size_t i = 0; i < nv; i++)
					v[i] = (uint32_t)v[i];
			} else {
				vscalar_sext(&r, bits, wide);
				sd_log("sext", 0, wide, bits, &r);
				for (size_t i = 0; i < nv; i++) {
					uint64_t lo = bits == 64 ? v[i] : v[i] & ((1ull << bits) - 1);
					uint64_t sb = 1ull << (bits - 1);

					v[i] = (lo ^ sb) - sb;
					if (!wide)
						v[i] = (uint32_t)v[i];
				}
			}
		} else if (fz(3)) {
			uint8_t op = alu[fz(11)];
			struct bpf_insn in = { .code = (uint8_t)((wide ? BPF_ALU64 : BPF_ALU) | op) };

			if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
				c &= wide ? 63 : 31;
			if ((op == BPF_DIV || op == BPF_MOD) && !(wide ? c : (uint32_t)c))
				c = 3;
			vreg_mark_const(&k, c);
			vscalar_alu(NULL, &in, &r, &k, wide);
			sd_log("alu", op, wide, c, &r);
			for (size_t i = 0; i < nv; i++)
				v[i] = sd_alu(op, v[i], c, wide);
		} else {
			uint8_t op = jmp[fz(11)];
			bool dir;
			struct vreg a = r, b;
			size_t keep = 0;
			int taken;

			if (fz(2) && nv)
				c = v[fz((uint32_t)nv)] + fz(3) - 1; /* near a live value */
			vreg_mark_const(&k, wide ? c : (uint32_t)c);
			if (fz(3) == 0) {
				/* against a register known as [c, c + d] */
				uint64_t d = fz(2) ? fz(40) : sd_value();

				vreg_mark_unknown(&k);
				if (fz(2))
					vreg_set_urange(&k, c, c + d < c ? UINT64_MAX : c + d);
				else if (fz(2))
					vreg_set_range(&k, (int64_t)c, (int64_t)(c + d) < (int64_t)c ?
						       INT64_MAX : (int64_t)(c + d));
			}
			b = k;
			dir = fz(2);
			if (!vreg_is_const(&k))
				sd_log("src", 0, wide, c, &k);
			if (!sd_contains(&k, k.umin) || !sd_contains(&k, k.umax)) {
				sd_log("src ends outside", 0, wide, c, &k);
				return false;
			}
			taken = vscalar_branch_taken(&r, &k, op, !wide);
			for (size_t i = 0; i < nv; i++) {
				/* a range's lowest and highest members are members */
				uint64_t kv = fz(2) ? k.umin : k.umax;
				bool t = sd_jmp(op, v[i], kv, !wide);

				if (taken >= 0 && t != (taken == 1)) {
					sd_log("taken?", op, wide, kv, &r);
					return false;
				}
				if (t == dir) {
					kvs[keep] = kv;
					v[keep++] = v[i];
				}
			}
			nv = keep;
			if (!nv)
				break;
			if (!vscalar_refine(&a, &b, op, !wide, dir)) {
				sd_log(dir ? "refine-true-empty" : "refine-false-empty", op, wide, c, &r);
				return false;
			}
			r = a;
			sd_log(dir ? "jmp-true" : "jmp-false", op, wide, c, &r);
			for (size_t i = 0; i < nv; i++)
				if (!sd_contains(&b, kvs[i])) {
					sd_log("src outside", op, wide, kvs[i], &b);
					return false;
				}
		}
		for (size_t i = 0; i < nv; i++)
			if (!sd_contains(&r, v[i])) {
				sd_log("outside", 0, true, v[i], &r);
				return false;
			}
	}
	return true;
}

TEST(scalar_bounds_are_sound_on_concrete_samples)
{
	int walks = 0;

	for (; walks < 20000; walks++)
		if (!sd_walk()) {
			tl_fail(__FILE__, __LINE__, "walk %d unsound:\n%s", walks, sd_trace);
			break;
		}
	printf("# %d random ALU/branch walks, samples always inside the bounds\n", walks);
}

/* ---- the BPF C corpus (tests/verifier/progs) ----------------------------------------- */

/* One expectation from a corpus file's header:
 *   @NAME: accept | reject "reason" ; linux: same|accept|reject|skip (why) */
struct cexpect {
	char name[64];
	char reason[160];        /* "" : accept */
	char lx[16];
};

static int c_expectations(const char *src, struct cexpect *out, int max)
{
	FILE *f = fopen(src, "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		char *at = strstr(line, " * @"), *colon, *q, *lx;
		struct cexpect *e = &out[n];

		if (!at || !(colon = strchr(at, ':')))
			continue;
		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%.*s", (int)(colon - at - 4), at + 4);
		if ((q = strstr(colon, "reject \""))) {
			char *end = strchr(q + 8, '"');

			snprintf(e->reason, sizeof(e->reason), "%.*s", end ? (int)(end - q - 8) : 0,
				 q + 8);
		}
		lx = strstr(colon, "linux: ");
		snprintf(e->lx, sizeof(e->lx), "%s", lx ? lx + 7 : "same");
		e->lx[strcspn(e->lx, " \n(")] = 0;
		n++;
	}
	fclose(f);
	return n;
}

static void c_run_accepted(struct bpfrt_prog *p, const char *name, enum bpfrt_exec_mode mode)
{
	struct vcase c = { .name = name, .kind = bpfrt_prog_kind(p) };
	uint64_t len, ctx = ctx_for(&c, &len), r0;

	if (ctx && bpfrt_prog_run(p, mode, ctx, len, &r0))
		tl_fail(__FILE__, __LINE__, "%s (%s): run failed: %s", name,
			mode == BPFRT_EXEC_JIT ? "jit" : "interp", bpfrt_last_error());
	/* the interpreter's load runs in the checking interpreter too */
	ctx = ctx_for(&c, &len);
	if (ctx && mode == BPFRT_EXEC_INTERP && bpfrt_prog_run(p, BPFRT_EXEC_CHECKED, ctx, len, &r0))
		tl_fail(__FILE__, __LINE__, "%s (checked): run failed: %s", name, bpfrt_last_error());
}

/* Our verdict for one program of an object (bpfrt_prog_verify on a
 * trusted load, so one file holds accepts and rejects side by side), and
 * for accepted ones a run under the interpreter and the JIT. */
/* The program alone, loaded verified, run: for programs whose verified
 * load changes what runs (loads through typed arguments become
 * fault-safe only then; a trusted load runs them as written). */
static void c_run_verified(const char *obj_path, const char *name, bool jit, uint32_t prog_flags)
{
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit, .prog_flags = prog_flags);
	struct bpfrt_prog *p;

	if (bpfrt_object_open(obj_path, NULL, &obj)) {
		tl_fail(__FILE__, __LINE__, "%s: %s", obj_path, bpfrt_last_error());
		return;
	}
	for (p = NULL; (p = bpfrt_object_next_prog(obj, p));)
		bpfrt_prog_set_autoload(p, !strcmp(bpfrt_prog_name(p), name));
	if (bpfrt_object_load(obj, &lo))
		tl_fail(__FILE__, __LINE__, "%s: verified load: %s", name, bpfrt_last_error());
	else
		c_run_accepted(bpfrt_object_find_prog(obj, name), name,
			       jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP);
	bpfrt_object_close(obj);
}

/* prog_flags: the loads' (BPFRT_F_ALLOW_PTR_LEAKS for a file of
 * privileged programs: kernel kfuncs are Linux's CAP_BPF's) */
static void c_check(const char *obj_path, const struct cexpect *e, bool verified_runs,
		    uint32_t prog_flags)
{
	static char log[1 << 16];

	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_object *obj = NULL;
		BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit, .trusted = true,
			   .prog_flags = prog_flags);
		BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log,
			   .log_size = sizeof(log), .log_level = 1);
		struct bpfrt_prog *p;
		int err;

		if (bpfrt_object_open(obj_path, NULL, &obj) || bpfrt_object_load(obj, &lo)) {
			tl_fail(__FILE__, __LINE__, "%s: %s", obj_path, bpfrt_last_error());
			bpfrt_object_close(obj);
			return;
		}
		p = bpfrt_object_find_prog(obj, e->name);
		if (!p) {
			tl_fail(__FILE__, __LINE__, "%s: no program %s", obj_path, e->name);
			bpfrt_object_close(obj);
			return;
		}
		err = bpfrt_prog_verify(p, &vo);
		if (e->reason[0]) {
			if (!err)
				tl_fail(__FILE__, __LINE__, "%s: accepted, expected '%s'", e->name,
					e->reason);
			else if (!strstr(bpfrt_last_error(), e->reason) ||
				 !strstr(bpfrt_last_error(), "insn "))
				tl_fail(__FILE__, __LINE__, "%s: rejected with '%s', expected '%s'",
					e->name, bpfrt_last_error(), e->reason);
			bpfrt_object_close(obj);
			return;
		}
		if (err)
			tl_fail(__FILE__, __LINE__, "%s: rejected: %s\n%s", e->name,
				bpfrt_last_error(), log);
		else if (verified_runs)
			c_run_verified(obj_path, e->name, jit, prog_flags);
		else
			c_run_accepted(p, e->name, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP);
		bpfrt_object_close(obj);
		if (err)
			return;
	}
}

/* Linux's verdict for one program (libbpf, as the section's type):
 * 1 accepted, 0 rejected, -1 could not be tried. */
static int c_linux_verdict(const char *obj_path, const char *name, char *why, size_t whylen)
{
	static char log[1 << 16];
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	struct bpf_program *p;
	int err;

	if (!obj)
		return -1;
	bpf_object__for_each_program(p, obj) {
		bool me = !strcmp(bpf_program__name(p), name);

		bpf_program__set_autoload(p, me);
		if (me) {
			log[0] = 0;
			bpf_program__set_log_buf(p, log, sizeof(log));
			bpf_program__set_log_level(p, 1);
		}
	}
	err = bpf_object__load(obj);
	bpf_object__close(obj);
	if (err) {
		char *last;

		while ((last = strrchr(log, '\n')) && !last[1])
			*last = 0;
		if ((last = strrchr(log, '\n')))
			*last = 0;
		last = strrchr(log, '\n');
		snprintf(why, whylen, "%s", last ? last + 1 : log);
	}
	return err ? 0 : 1;
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

TEST(c_corpus_verdicts_runs_and_linux)
{
	static const char *const files[] = { "vmaps", "vringbuf", "vstack", "vctx", "vpacket",
					     "vhelpers", "vloops", "vcallbacks",
					     "vsext", "vleak", "vmapflags", "vspinlock", "viters",
					     "vtailcall", "vkfuncs",
#ifdef BTFARGS_BTF_ENCODED
					     /* its target's BTF is in this executable */
					     "vbtfargs",
#endif
	};
	/* under qemu-user the guest's bpf(2) calls do not reach the kernel as
	 * written: Linux's verdicts come from the native runs */
	bool root = geteuid() == 0 && !getenv("BPFRT_CROSS_QEMU");
	int checked = 0, rejects = 0, lx_same = 0, lx_diff = 0, lx_skip = 0;

	libbpf_set_print(quiet_libbpf);
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char src[PATH_MAX], obj[PATH_MAX];
		struct cexpect ex[64];
		int n;

		snprintf(src, sizeof(src), "%s/../../../tests/verifier/progs/%s.bpf.c",
			 tl_prog_path(""), files[f]);
		snprintf(obj, sizeof(obj), "%s/../verifier/progs/%s.bpf.o", tl_prog_path(""),
			 files[f]);
		REQUIRE(!access(obj, R_OK), "%s not built (mk/test-objects.mk builds it)", obj);
		n = c_expectations(src, ex, 64);
		CHECK(n > 0, "%s: no @expectations", src);
		for (int i = 0; i < n; i++) {
			bool ours = !ex[i].reason[0];
			char why[256] = "";
			int lx;

			bool kf = !strcmp(files[f], "vkfuncs");

			c_check(obj, &ex[i], !strcmp(files[f], "vbtfargs") || kf,
				kf ? BPFRT_F_ALLOW_PTR_LEAKS : 0);
			checked++;
			rejects += !ours;
			if (!strcmp(ex[i].lx, "skip") || !root) {
				lx_skip++;
				continue;
			}
			lx = c_linux_verdict(obj, ex[i].name, why, sizeof(why));
			if (lx < 0) {
				lx_skip++;
				continue;
			}
			if (!strcmp(ex[i].lx, "same") ? lx == ours
			    : (lx == 1) == !strcmp(ex[i].lx, "accept")) {
				lx_same++;
				lx_diff += strcmp(ex[i].lx, "same") != 0;
			} else {
				tl_fail(__FILE__, __LINE__, "%s: Linux %s (recorded: %s): %s", ex[i].name,
					lx ? "accepts" : "rejects", ex[i].lx, why);
			}
		}
	}
	printf("# C corpus: %d programs (%d rejects); Linux agrees as recorded on %d "
	       "(%d recorded differences), %d not compared\n", checked, rejects, lx_same,
	       lx_diff, lx_skip);
	CHECK(rejects >= 30, "only %d C rejects", rejects);
}
