/* kprobes and kretprobes on host functions built without patchable entries
 * (tests/host/kprobe_targets.c): arguments through bpf_tracing.h's
 * PT_REGS_PARM1..6 (BPF C), rip-relative first instructions, early relative
 * calls and branches, +OFF, return values through recursion and longjmp,
 * both modes (int3, jmp), interpreter and JIT, exact restoration of the
 * original bytes, and attach/detach churn while two threads call the
 * function (no lost or phantom events). */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/attach.h"
#include "bpfrt/kprobe.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
long kp_args6(long a, long b, long c, long d, long e, long f);
long kp_fact(long n);
long kp_setjmp_then(long v);
void kp_jump_out(long v);
long kp_rip_load(long x);
long kp_rip_lea(long x);
long kp_call_first(long x);
long kp_jcc(long x);
long kp_jmp_first(long x);
long kp_tail_a(long x);
long kp_tail_b(long x);
void kp_keep_caller(uint64_t out[21]);
long kp_loop(long x, long n);
long kp_indirect(long (*fn)(void));
long kp_leaf(void);
long kp_stress(unsigned char *p);
double kp_xmm_mid(double x);
extern volatile long kp_rip_data;

/* Functions whose bytes must come back exactly after every detach. */
static const struct { const char *name; void *fn; } targets[] = {
	{ "kp_args6", (void *)kp_args6 }, { "kp_fact", (void *)kp_fact },
	{ "kp_rip_load", (void *)kp_rip_load }, { "kp_rip_lea", (void *)kp_rip_lea },
	{ "kp_call_first", (void *)kp_call_first }, { "kp_jcc", (void *)kp_jcc },
	{ "kp_jmp_first", (void *)kp_jmp_first }, { "kp_loop", (void *)kp_loop },
	{ "kp_indirect", (void *)kp_indirect }, { "kp_stress", (void *)kp_stress },
	{ "kp_jump_out", (void *)kp_jump_out }, { "kp_xmm_mid", (void *)kp_xmm_mid },
	{ "kp_tail_a", (void *)kp_tail_a }, { "kp_tail_b", (void *)kp_tail_b },
};
#define SNAP 32
static uint8_t snap[ARRAY_LEN(targets)][SNAP];

static void snapshot(void)
{
	for (size_t i = 0; i < ARRAY_LEN(targets); i++)
		memcpy(snap[i], targets[i].fn, SNAP);
}

static void check_restored(void)
{
	for (size_t i = 0; i < ARRAY_LEN(targets); i++)
		CHECK(!memcmp(snap[i], targets[i].fn, SNAP), "%s: bytes differ after detach",
		      targets[i].name);
}

__attribute__((constructor)) static void take_snapshot(void)
{
	snapshot();
}

static struct bpfrt_object *open_progs(bool jit)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);

	return load_object("kprobe.bpf.o", &lo);
}

static struct bpfrt_link *kattach(struct bpfrt_prog *p, const char *func, uint64_t off,
				  bool ret, enum bpfrt_kprobe_mode mode)
{
	BPFRT_OPTS(bpfrt_kprobe_opts, o, .offset = off, .retprobe = ret,
		   .mode = mode);
	struct bpfrt_link *l = NULL;
	int err;

	if (!p)
		return NULL;
	err = bpfrt_kprobe_attach(p, func, 0, &o, &l);
	CHECK(!err && l, "attach %s+%lu: %d %s", func, (unsigned long)off, err,
	      bpfrt_last_error());
	return l;
}

static const char *mode_name(enum bpfrt_kprobe_mode m)
{
	return m == BPFRT_KPROBE_INT3 ? "int3" : "auto";
}

/* ---- BPF C: PT_REGS_PARM1..6, kretprobe, offsets -------------------------- */

static void check_args_bpf_c(bool jit, enum bpfrt_kprobe_mode mode)
{
	struct bpfrt_object *obj = open_progs(jit);
	struct bpfrt_link *l, *lr;
	long *args, *hits, *ret_hits, *ret_val, *entry_sp, *ret_sp;

	if (!obj)
		return;
	args = object_global(obj, "args");
	hits = object_global(obj, "args_hits");
	ret_hits = object_global(obj, "ret_hits");
	ret_val = object_global(obj, "ret_val");
	entry_sp = object_global(obj, "entry_sp");
	ret_sp = object_global(obj, "ret_sp");
	l = kattach(bpfrt_object_find_prog(obj, "on_args6"), "kp_args6", 0, false, mode);
	lr = kattach(bpfrt_object_find_prog(obj, "on_args6_ret"), "kp_args6", 0, true, mode);
	if (l && lr) {
		CHECK(!strcmp(bpfrt_link_kind(l), "kprobe") &&
		      !strcmp(bpfrt_link_kind(lr), "kretprobe"), "kinds %s %s",
		      bpfrt_link_kind(l), bpfrt_link_kind(lr));
		if (mode == BPFRT_KPROBE_INT3)
			CHECK(!bpfrt_kprobe_optimized(l), "int3 mode was optimized");
		long r = kp_args6(11, -22, 33, 0x4400000000l, 55, -66);

		CHECK(r == 11 - 44 + 99 + 4 * 0x4400000000l + 275 - 396, "result %ld", r);
		CHECK(*hits == 1 && *ret_hits == 1, "hits %ld ret %ld", *hits, *ret_hits);
		CHECK(args[0] == 11 && args[1] == -22 && args[2] == 33 &&
		      args[3] == 0x4400000000l && args[4] == 55 && args[5] == -66,
		      "args %ld %ld %ld %ld %ld %ld (%s, %s)", args[0], args[1], args[2], args[3],
		      args[4], args[5], jit ? "jit" : "interp", mode_name(mode));
		CHECK(*ret_val == r, "kretprobe saw %ld, returned %ld", *ret_val, r);
		CHECK(*ret_sp == *entry_sp + 8, "sp at entry %#lx, after return %#lx",
		      *entry_sp, *ret_sp);
		for (int i = 0; i < 1000; i++)
			kp_args6(i, 0, 0, 0, 0, 0);
		CHECK(*hits == 1001 && *ret_hits == 1001, "hits %ld ret %ld", *hits, *ret_hits);
	}
	bpfrt_link_destroy(l);
	bpfrt_link_destroy(lr);
	kp_args6(1, 2, 3, 4, 5, 6);
	CHECK(*hits == 1001 && *ret_hits == 1001, "runs after detach: %ld %ld", *hits, *ret_hits);
	bpfrt_object_close(obj);
	check_restored();
}

TEST(kprobe_args_bpf_c)
{
	for (int jit = 0; jit < 2; jit++) {
		check_args_bpf_c(jit, BPFRT_KPROBE_INT3);
		check_args_bpf_c(jit, BPFRT_KPROBE_AUTO);
	}
}

/* The loader's SEC names: kprobe/kp_rip_load (rip-relative first
 * instruction) and kprobe/kp_rip_load+7 (after it: rax holds the load). */
static void check_rip_sec(bool jit)
{
	struct bpfrt_object *obj = open_progs(jit);
	struct bpfrt_link *l = NULL, *lo = NULL;
	long *rip_hits, *rip_di, *off_hits, *off_ax, *off_ip;

	if (!obj)
		return;
	rip_hits = object_global(obj, "rip_hits");
	rip_di = object_global(obj, "rip_di");
	off_hits = object_global(obj, "off_hits");
	off_ax = object_global(obj, "off_ax");
	off_ip = object_global(obj, "off_ip");
	CHECK(!bpfrt_prog_attach(bpfrt_object_find_prog(obj, "on_rip_load"), NULL, &l), "%s",
	      bpfrt_last_error());
	CHECK(!bpfrt_prog_attach(bpfrt_object_find_prog(obj, "on_rip_load_off"), NULL, &lo), "%s",
	      bpfrt_last_error());
	if (l && lo) {
		CHECK(bpfrt_kprobe_addr(l) == (uintptr_t)kp_rip_load, "addr %#lx",
		      (unsigned long)bpfrt_kprobe_addr(l));
		CHECK(bpfrt_kprobe_optimized(l), "kp_rip_load: a 7-byte first instruction, "
		      "not optimized");
		kp_rip_data = 1000;
		CHECK(kp_rip_load(5) == 1005, "kp_rip_load(5) = %ld", kp_rip_load(5));
		kp_rip_data = 77;
		CHECK(kp_rip_load(-7) == 70, "kp_rip_load(-7) = %ld", kp_rip_load(-7));
		CHECK(*rip_hits == 2 && *rip_di == -7, "hits %ld di %ld", *rip_hits, *rip_di);
		CHECK(*off_hits == 2 && *off_ax == 77, "+7: hits %ld ax %ld", *off_hits, *off_ax);
		CHECK(*off_ip == (long)(uintptr_t)kp_rip_load + 8, "+7: ip %#lx", *off_ip);
	}
	bpfrt_link_destroy(l);
	bpfrt_link_destroy(lo);
	kp_rip_data = 1000;
	bpfrt_object_close(obj);
	check_restored();
}

TEST(kprobe_rip_relative_sec)
{
	check_rip_sec(false);
	check_rip_sec(true);
}

/* ---- raw programs: counters and a register ------------------------------- */

static long raw_hits, raw_di, raw_ax;

/* raw_hits += 1; raw_di = ctx->di; raw_ax = ctx->ax */
static struct bpfrt_prog *counter_prog(bool jit)
{
	const struct bpf_insn insns[] = {
		LDDW(2, (uint64_t)(uintptr_t)&raw_hits),
		MOV64_IMM(3, 1),
		ATOMIC(BPF_DW, BPF_ADD, 2, 3, 0),
		LDX(BPF_DW, 3, 1, 112),
		LDDW(2, (uint64_t)(uintptr_t)&raw_di),
		STX(BPF_DW, 2, 3, 0),
		LDX(BPF_DW, 3, 1, 80),
		LDDW(2, (uint64_t)(uintptr_t)&raw_ax),
		STX(BPF_DW, 2, 3, 0),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "kp_counter", .jit = jit);
	struct bpfrt_prog *p = NULL;

	CHECK(!bpfrt_prog_load(insns, ARRAY_LEN(insns), &o, &p), "load: %s", bpfrt_last_error());
	return p;
}

struct branch_case {
	const char *func;
	uint64_t off;
	bool optimizable;
};

static long call_case(const char *func, long x)
{
	if (!strcmp(func, "kp_rip_lea"))
		return kp_rip_lea(x);
	if (!strcmp(func, "kp_call_first"))
		return kp_call_first(x);
	if (!strcmp(func, "kp_jcc"))
		return kp_jcc(x);
	if (!strcmp(func, "kp_jmp_first"))
		return kp_jmp_first(x);
	if (!strcmp(func, "kp_loop"))
		return kp_loop(x, 3);
	if (!strcmp(func, "kp_indirect"))
		return kp_indirect(kp_leaf) + x;
	return kp_rip_load(x);
}

static long expect_case(const char *func, long x)
{
	if (!strcmp(func, "kp_call_first"))
		return 40 + x;
	if (!strcmp(func, "kp_jcc"))
		return x ? 1 : 2;
	if (!strcmp(func, "kp_jmp_first"))
		return x + 1;
	if (!strcmp(func, "kp_loop"))
		return 3 * x;
	if (!strcmp(func, "kp_indirect"))
		return 41 + x;
	return kp_rip_data + x;
}

TEST(kprobe_relocated_instructions)
{
	static const struct branch_case cases[] = {
		{ "kp_rip_lea", 0, true },      /* lea rip-relative, 7 bytes */
		{ "kp_rip_load", 7, false },    /* add; ret: the span would pass ret */
		{ "kp_call_first", 0, true },   /* call rel32 (the span's last) */
		{ "kp_jcc", 3, true },          /* jz rel8, then mov: 7 bytes */
		{ "kp_jmp_first", 0, false },   /* jmp rel8: nothing after it */
		{ "kp_loop", 0, false },        /* a branch lands at +2 */
		{ "kp_indirect", 0, false },    /* call *%rdi: 2 bytes, a call */
	};

	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_prog *p = counter_prog(jit);

		for (size_t i = 0; p && i < ARRAY_LEN(cases); i++) {
			for (int m = 0; m < 2; m++) {
				const struct branch_case *c = &cases[i];
				enum bpfrt_kprobe_mode mode = m ? BPFRT_KPROBE_AUTO : BPFRT_KPROBE_INT3;
				struct bpfrt_link *l = kattach(p, c->func, c->off, false, mode);
				long xs[3] = { 0, 9, -4 };

				if (!l)
					continue;
				raw_hits = 0;
				CHECK(bpfrt_kprobe_optimized(l) == (m && c->optimizable),
				      "%s+%lu %s: optimized %d", c->func, (unsigned long)c->off,
				      mode_name(mode), bpfrt_kprobe_optimized(l));
				for (int k = 0; k < 3; k++) {
					long r = call_case(c->func, xs[k]);

					CHECK(r == expect_case(c->func, xs[k]),
					      "%s+%lu %s: f(%ld) = %ld, want %ld", c->func,
					      (unsigned long)c->off, mode_name(mode), xs[k], r,
					      expect_case(c->func, xs[k]));
				}
				/* kp_indirect: argument is the function pointer */
				if (strcmp(c->func, "kp_indirect"))
					CHECK(c->off || raw_di == -4, "%s: di %ld", c->func, raw_di);
				CHECK(raw_hits == 3, "%s+%lu %s: %ld hits", c->func,
				      (unsigned long)c->off, mode_name(mode), raw_hits);
				bpfrt_link_destroy(l);
				call_case(c->func, 1);
				CHECK(raw_hits == 3, "%s: runs after detach", c->func);
			}
		}
		bpfrt_prog_free(p);
	}
	check_restored();
}

TEST(kprobe_refusals)
{
	struct bpfrt_prog *p = counter_prog(false);
	BPFRT_OPTS(bpfrt_kprobe_opts, o);
	struct bpfrt_link *l = NULL;
	int err;

	if (!p)
		return;
	o.offset = 3; /* inside `mov kp_rip_data(%rip), %rax` */
	err = bpfrt_kprobe_attach(p, "kp_rip_load", 0, &o, &l);
	CHECK(err == -EINVAL && !l, "mid-instruction: %d", err);
	CHECK(strstr(bpfrt_last_error(), "boundary"), "message: %s", bpfrt_last_error());
	o.offset = 0;
	err = bpfrt_kprobe_attach(p, "kp_no_such_function", 0, &o, &l);
	CHECK(err == -ENOENT, "unknown function: %d", err);
	o.offset = 4096;
	err = bpfrt_kprobe_attach(p, "kp_leaf", 0, &o, &l);
	CHECK(err == -EINVAL, "past the end: %d", err);
	o.offset = 7;
	o.retprobe = true;
	err = bpfrt_kprobe_attach(p, "kp_rip_load", 0, &o, &l);
	CHECK(err == -EINVAL, "kretprobe at an offset: %d", err);
	o.offset = 0;
	o.retprobe = false;
	err = bpfrt_kprobe_attach(p, NULL, (uintptr_t)&kp_rip_data, &o, &l);
	CHECK(err == -EINVAL || err == -EOPNOTSUPP, "data address: %d", err);
	o.offset = 0;
	err = bpfrt_kprobe_attach(p, "bpfrt_prog_array_free_rcu", 0, &o, &l);
	CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "probe path"),
	      "bpfrt's own code: %d %s", err, bpfrt_last_error());
	/* SEC-style targets through the dispatch */
	BPFRT_OPTS(bpfrt_attach_opts, ao, .kind = BPFRT_PROG_KPROBE,
		   .target = "kp_rip_load+zz");

	err = bpfrt_prog_attach(p, &ao, &l);
	CHECK(err == -EINVAL, "bad offset: %d", err);
	ao.target = "kp_rip_load+0x7";
	err = bpfrt_prog_attach(p, &ao, &l);
	CHECK(!err && l, "kp_rip_load+0x7: %d %s", err, bpfrt_last_error());
	if (l) {
		CHECK(bpfrt_kprobe_addr(l) == (uintptr_t)kp_rip_load + 7, "addr");
		CHECK(!strcmp(bpfrt_link_target(l), "kp_rip_load+0x7"), "target %s",
		      bpfrt_link_target(l));
		bpfrt_link_destroy(l);
	}
	bpfrt_prog_free(p);
	check_restored();
}

/* ---- kretprobes: recursion and longjmp ----------------------------------- */

static void check_kretprobe_nesting(bool jit)
{
	struct bpfrt_object *obj = open_progs(jit);
	struct bpfrt_link *l, *lr, *la, *lj;
	long *fact_hits, *fact_ret_hits, *fact_rets, *ret_hits, *ret_val;

	if (!obj)
		return;
	fact_hits = object_global(obj, "fact_hits");
	fact_ret_hits = object_global(obj, "fact_ret_hits");
	fact_rets = object_global(obj, "fact_rets");
	ret_hits = object_global(obj, "ret_hits");
	ret_val = object_global(obj, "ret_val");
	l = kattach(bpfrt_object_find_prog(obj, "on_fact"), "kp_fact", 0, false,
		    BPFRT_KPROBE_AUTO);
	lr = kattach(bpfrt_object_find_prog(obj, "on_fact_ret"), "kp_fact", 0, true,
		     BPFRT_KPROBE_AUTO);
	if (l && lr) {
		long r = kp_fact(6);

		CHECK(r == 720, "kp_fact(6) = %ld", r);
		CHECK(*fact_hits == 6 && *fact_ret_hits == 6, "hits %ld ret %ld", *fact_hits,
		      *fact_ret_hits);
		/* innermost returns first */
		static const long want[6] = { 1, 2, 6, 24, 120, 720 };

		for (int i = 0; i < 6; i++)
			CHECK(fact_rets[i] == want[i], "return %d: %ld", i, fact_rets[i]);
	}
	/* kp_jump_out longjmps past its kretprobe; the stale shadow entry
	 * must not confuse kp_args6's return. */
	lj = kattach(bpfrt_object_find_prog(obj, "on_args6_ret"), "kp_jump_out", 0, true,
		     BPFRT_KPROBE_INT3);
	la = kattach(bpfrt_object_find_prog(obj, "on_fact_ret"), "kp_args6", 0, true,
		     BPFRT_KPROBE_AUTO);
	if (lj && la) {
		long before = *fact_ret_hits;

		for (int i = 1; i <= 100; i++) {
			long r = kp_setjmp_then(i);

			CHECK(r == i, "kp_setjmp_then(%d) = %ld", i, r);
		}
		CHECK(*fact_ret_hits == before + 100, "kp_args6 returns seen: %ld",
		      *fact_ret_hits - before);
		CHECK(*ret_hits == 0 && *ret_val == 0, "kp_jump_out never returns: %ld",
		      *ret_hits);
	}
	bpfrt_link_destroy(l);
	bpfrt_link_destroy(lr);
	bpfrt_link_destroy(lj);
	bpfrt_link_destroy(la);
	CHECK(kp_fact(5) == 120, "after detach");
	bpfrt_object_close(obj);
	check_restored();
}

TEST(kretprobe_recursion_longjmp)
{
	check_kretprobe_nesting(false);
	check_kretprobe_nesting(true);
}

/* ---- churn: attach/detach while two threads call ------------------------- */

/* Each call passes a pointer to its own byte; the program increments it.
 * Calls made entirely inside one phase (attached or detached) must show
 * exactly 1 or 0; every call at most 1. */
#define CHURN_CALLS (1 << 21)
/* Calls per thread and phase at most: on a loaded machine an attach may
 * take long enough for the callers to fill the record before 6 cycles. */
#define CHURN_CALLS_PER_PHASE 4096

/* 4 per cycle: 0 attaching, 1 attached, 2 detaching, 3 detached */
static _Atomic unsigned int phase;
static _Atomic bool churn_stop;

struct churn_thread {
	pthread_t tid;
	unsigned char *seen;
	unsigned int *phase_of;         /* phase, or ~0u if it changed during the call */
	long calls;
};

static void *churn_body(void *arg)
{
	struct churn_thread *t = arg;
	unsigned int last = ~0u;
	long in_phase = 0;

	for (long i = 0; i < CHURN_CALLS && !atomic_load(&churn_stop); i++) {
		unsigned int p1 = atomic_load(&phase);

		if (p1 != last) {
			last = p1;
			in_phase = 0;
		} else if (++in_phase > CHURN_CALLS_PER_PHASE) {
			sched_yield();
			i--;
			continue;
		}
		kp_stress(&t->seen[i]);
		unsigned int p2 = atomic_load(&phase);

		/* spread the calls over the run (a detached call takes ns) */
		for (volatile int k = 0; k < 100; k++)
			;

		t->phase_of[i] = p1 == p2 ? p1 : ~0u;
		__atomic_store_n(&t->calls, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static struct bpfrt_prog *byte_inc_prog(bool jit)
{
	const struct bpf_insn insns[] = {
		LDX(BPF_DW, 2, 1, 112),         /* r2 = ctx->di */
		LDX(BPF_B, 3, 2, 0),
		ALU64_IMM(BPF_ADD, 3, 1),
		STX(BPF_B, 2, 3, 0),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "kp_byte_inc", .jit = jit);
	struct bpfrt_prog *p = NULL;

	CHECK(!bpfrt_prog_load(insns, ARRAY_LEN(insns), &o, &p), "load: %s", bpfrt_last_error());
	return p;
}

/* Lets each thread make a few calls in the phase just entered (yielding:
 * on a loaded machine they may only run when this thread does not). */
static void wait_calls(struct churn_thread *th)
{
	long start[2] = { __atomic_load_n(&th[0].calls, __ATOMIC_ACQUIRE),
			  __atomic_load_n(&th[1].calls, __ATOMIC_ACQUIRE) };

	for (int spins = 0; spins < 200; spins++) {
		if (__atomic_load_n(&th[0].calls, __ATOMIC_ACQUIRE) >= start[0] + 3 &&
		    __atomic_load_n(&th[1].calls, __ATOMIC_ACQUIRE) >= start[1] + 3)
			return;
		if (__atomic_load_n(&th[0].calls, __ATOMIC_ACQUIRE) == CHURN_CALLS ||
		    __atomic_load_n(&th[1].calls, __ATOMIC_ACQUIRE) == CHURN_CALLS)
			return;
		sched_yield();
	}
}

static void churn(bool jit, enum bpfrt_kprobe_mode mode, double seconds)
{
	struct bpfrt_prog *p = byte_inc_prog(jit);
	struct churn_thread th[2];
	struct timespec t0, now;
	long cycles = 0, opt_cycles = 0;
	double elapsed;

	if (!p)
		return;
	atomic_store(&phase, 3);
	atomic_store(&churn_stop, false);
	for (int i = 0; i < 2; i++) {
		th[i].seen = calloc(CHURN_CALLS, 1);
		th[i].phase_of = calloc(CHURN_CALLS, sizeof(unsigned int));
		th[i].calls = 0;
		REQUIRE(th[i].seen && th[i].phase_of);
		pthread_create(&th[i].tid, NULL, churn_body, &th[i]);
	}
	/* Under load the threads may take a while to get a CPU. */
	for (int i = 0; i < 2; i++)
		while (__atomic_load_n(&th[i].calls, __ATOMIC_RELAXED) < 1000)
			sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		atomic_fetch_add(&phase, 1);            /* attaching */
		struct bpfrt_link *l = kattach(p, "kp_stress", 0, false, mode);

		if (!l)
			break;
		opt_cycles += bpfrt_kprobe_optimized(l);
		atomic_fetch_add(&phase, 1);            /* attached */
		wait_calls(th);
		atomic_fetch_add(&phase, 1);            /* detaching */
		bpfrt_link_destroy(l);
		atomic_fetch_add(&phase, 1);            /* detached */
		wait_calls(th);
		cycles++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed = now.tv_sec - t0.tv_sec + (now.tv_nsec - t0.tv_nsec) / 1e9;
		/* at least 6 cycles, however slow the machine (within reason) */
	} while ((elapsed < seconds || (cycles <= 5 && elapsed < 30)) && !tl_failed() &&
		 (th[0].calls < CHURN_CALLS || th[1].calls < CHURN_CALLS));
	atomic_store(&churn_stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i].tid, NULL);

	long lost = 0, phantom = 0, dup = 0, in_attached = 0, in_detached = 0;

	for (int i = 0; i < 2; i++) {
		for (long c = 0; c < th[i].calls; c++) {
			unsigned int ph = th[i].phase_of[c];

			if (th[i].seen[c] > 1)
				dup++;
			if (ph == ~0u)
				continue;
			/* attaching and detaching phases may go either way */
			if (ph % 4 == 1) {
				in_attached++;
				lost += th[i].seen[c] != 1;
			} else if (ph % 4 == 3) {
				in_detached++;
				phantom += th[i].seen[c] != 0;
			}
		}
		free(th[i].seen);
		free(th[i].phase_of);
	}
	CHECK(cycles > 5, "only %ld attach/detach cycles", cycles);
	CHECK(in_attached > 0 && in_detached > 0, "calls in attached phases %ld, detached %ld "
	      "(%ld cycles)", in_attached, in_detached, cycles);
	CHECK(!lost && !phantom && !dup, "%s %s: lost %ld phantom %ld duplicated %ld "
	      "(%ld calls in attached phases, %ld cycles)", jit ? "jit" : "interp",
	      mode_name(mode), lost, phantom, dup, in_attached, cycles);
	if (mode == BPFRT_KPROBE_AUTO)
		CHECK(opt_cycles > 0, "never optimized in %ld cycles", cycles);
	else
		CHECK(opt_cycles == 0, "int3 mode optimized");
	fprintf(stderr, "# churn %s %s: %ld cycles (%ld optimized), %ld calls in attached "
		"phases\n", jit ? "jit" : "interp", mode_name(mode), cycles, opt_cycles,
		in_attached);
	bpfrt_prog_free(p);
	check_restored();
}

/* A probed function that tail-calls another probed one: both kretprobes
 * run, on one frame (two entries for one return slot, the inner one's
 * return going to the outer one's landing), and the value comes back. */
TEST(kretprobe_tail_call)
{
	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_prog *p = counter_prog(jit);

		for (int m = 0; m < 2 && p; m++) {
			enum bpfrt_kprobe_mode mode = m ? BPFRT_KPROBE_AUTO : BPFRT_KPROBE_INT3;
			struct bpfrt_link *a = kattach(p, "kp_tail_a", 0, true, mode);
			struct bpfrt_link *b = kattach(p, "kp_tail_b", 0, true, mode);

			if (a && b && m)
				CHECK(bpfrt_kprobe_optimized(a) && bpfrt_kprobe_optimized(b),
				      "optimized: a %d b %d", bpfrt_kprobe_optimized(a),
				      bpfrt_kprobe_optimized(b));
			raw_hits = 0;
			for (long i = 1; i <= 50 && a && b; i++) {
				long r = kp_tail_a(i);

				CHECK(r == i + 1, "%s: kp_tail_a(%ld) = %ld", mode_name(mode), i, r);
				CHECK(raw_ax == i + 1, "%s: ax %ld", mode_name(mode), raw_ax);
			}
			CHECK(kp_tail_b(7) == 8, "kp_tail_b");
			CHECK(raw_hits == (a && b ? 101 : 1), "%s %s: hits %ld", mode_name(mode),
			      jit ? "jit" : "interp", raw_hits);
			bpfrt_link_destroy(a);
			bpfrt_link_destroy(b);
		}
		bpfrt_prog_free(p);
	}
	check_restored();
}

/* r0 = bpf_ktime_get_ns() & 0: a helper call, so the run takes the C path */
static struct bpfrt_prog *helper_prog(bool jit)
{
	const struct bpf_insn insns[] = {
		CALL_HELPER(BPF_FUNC_ktime_get_ns),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "kp_helper", .jit = jit);
	struct bpfrt_prog *p = NULL;

	CHECK(!bpfrt_prog_load(insns, ARRAY_LEN(insns), &o, &p), "load: %s", bpfrt_last_error());
	return p;
}

/* A caller may keep values in call-clobbered registers across a call of a
 * function it knows leaves them alone (GCC's -fipa-ra does, at -O2, for
 * functions in the same unit): a probe on the callee, at its entry or its
 * return, must leave every register as the function itself would, in
 * both modes, whether the program runs directly or through C. */
TEST(probes_keep_the_registers_a_callee_leaves_alone)
{
	static const uint64_t want[7] = { 0x1111, 0x2222, 0x8888, 0x9999, 0xaaaa, 0xbbbb, 0x77 };

	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_prog *progs[2] = { counter_prog(jit), helper_prog(jit) };

		for (int k = 0; k < 4; k++) {
			enum bpfrt_kprobe_mode mode = k & 1 ? BPFRT_KPROBE_AUTO : BPFRT_KPROBE_INT3;
			bool ret = k & 2;

			for (int pi = 0; pi < 2; pi++) {
				struct bpfrt_link *l = kattach(progs[pi], "kp_tail_b", 0, ret, mode);
				uint64_t out[21];

				if (!l)
					continue;
				memset(out, 0, sizeof(out));
				kp_keep_caller(out);
				for (int i = 0; i < 7; i++)
					CHECK(out[i] == want[i], "%s %s %s %s: register %d = %#llx",
					      jit ? "jit" : "interp", mode_name(mode),
					      ret ? "return" : "entry", pi ? "C path" : "direct", i,
					      (unsigned long long)out[i]);
				for (int x = 2; x < 16; x++)
					CHECK(out[7 + x - 2] == 0x1000u + (unsigned)x,
					      "%s %s %s %s: xmm%d = %#llx", jit ? "jit" : "interp",
					      mode_name(mode), ret ? "return" : "entry",
					      pi ? "C path" : "direct", x,
					      (unsigned long long)out[7 + x - 2]);
				bpfrt_link_destroy(l);
			}
		}
		bpfrt_prog_free(progs[0]);
		bpfrt_prog_free(progs[1]);
	}
	check_restored();
}

TEST(kprobe_churn_two_threads)
{
	double s = getenv("BPFRT_TEST_QUICK") ? 0.2 : 0.6;

	churn(false, BPFRT_KPROBE_INT3, s);
	churn(true, BPFRT_KPROBE_INT3, s);
	churn(false, BPFRT_KPROBE_AUTO, s);
	churn(true, BPFRT_KPROBE_AUTO, s);
}

/* Several programs on one address, modes mixed: an int3-only link keeps
 * the site in int3 mode; when it leaves, the site is optimized again. */
TEST(kprobe_shared_site_modes)
{
	struct bpfrt_prog *p1 = counter_prog(true), *p2 = counter_prog(false);
	struct bpfrt_link *a, *b;

	if (!p1 || !p2)
		return;
	a = kattach(p1, "kp_rip_lea", 0, false, BPFRT_KPROBE_AUTO);
	CHECK(a && bpfrt_kprobe_optimized(a), "first link optimized");
	b = kattach(p2, "kp_rip_lea", 0, false, BPFRT_KPROBE_INT3);
	CHECK(b && !bpfrt_kprobe_optimized(a), "int3 link un-optimizes the site");
	raw_hits = 0;
	CHECK(kp_rip_lea(1) == kp_rip_data + 1, "result");
	CHECK(raw_hits == 2, "two programs: %ld", raw_hits);
	bpfrt_link_destroy(b);
	CHECK(bpfrt_kprobe_optimized(a), "optimized again");
	CHECK(kp_rip_lea(1) == kp_rip_data + 1 && raw_hits == 3, "hits %ld", raw_hits);
	bpfrt_link_destroy(a);
	bpfrt_prog_free(p1);
	bpfrt_prog_free(p2);
	check_restored();
}

/* Mid-function jmp-mode probes save the whole FP state (xsave), entry ones
 * xmm0-7; kretprobes keep xmm0/xmm1 (float return values). */
TEST(kprobe_float_registers)
{
	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_prog *p = counter_prog(jit);

		for (int m = 0; m < 2 && p; m++) {
			enum bpfrt_kprobe_mode mode = m ? BPFRT_KPROBE_AUTO : BPFRT_KPROBE_INT3;
			struct bpfrt_link *mid = kattach(p, "kp_xmm_mid", 4, false, mode);
			struct bpfrt_link *ret = kattach(p, "kp_xmm_mid", 0, true, mode);

			raw_hits = 0;
			if (mid)
				CHECK(bpfrt_kprobe_optimized(mid) == (bool)m, "+4 %s: optimized %d",
				      mode_name(mode), bpfrt_kprobe_optimized(mid));
			for (int i = 1; i <= 100; i++) {
				double x = i * 0.25, r = kp_xmm_mid(x);

				CHECK(r == 2 * x * x, "%s: kp_xmm_mid(%g) = %g", mode_name(mode), x, r);
			}
			CHECK(raw_hits == (mid ? 100 : 0) + (ret ? 100 : 0), "hits %ld", raw_hits);
			bpfrt_link_destroy(mid);
			bpfrt_link_destroy(ret);
		}
		bpfrt_prog_free(p);
	}
	check_restored();
}

/* The flags word of pt_regs at a function's entry: what pushfq gives
 * right before the call, in both modes and both engines (jmp mode builds
 * it from lahf/seto where it can; int3 mode has the kernel's). */
static uint64_t raw_flags;

static struct bpfrt_prog *flags_prog(bool jit)
{
	const struct bpf_insn insns[] = {
		LDX(BPF_DW, 2, 1, 144),         /* pt_regs->flags */
		LDDW(1, (uint64_t)(uintptr_t)&raw_flags),
		STX(BPF_DW, 1, 2, 0),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "kp_flags", .jit = jit);
	struct bpfrt_prog *p = NULL;

	CHECK(!bpfrt_prog_load(insns, ARRAY_LEN(insns), &o, &p), "load: %s", bpfrt_last_error());
	return p;
}

/* kp_args6() called right after `cmp b, a` set the flags; returns them
 * as pushfq read them just before the call. */
static uint64_t call_after_cmp(long a, long b)
{
	uint64_t before;

	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "lea -128(%%rsp), %%rsp\n\t"   /* past the red zone */
			 "and $-16, %%rsp\n\t"
			 /* kp_args6's other arguments defined (mov keeps the flags
			  * the cmp sets): garbage overflows its arithmetic, which
			  * UBSan stops the test on */
			 "mov $0, %%edx\n\t"
			 "mov $0, %%ecx\n\t"
			 "mov $0, %%r8d\n\t"
			 "mov $0, %%r9d\n\t"
			 "cmp %[b], %[a]\n\t"
			 "pushfq\n\t"
			 "pop %%r12\n\t"
			 "call kp_args6\n\t"
			 "mov %%rbx, %%rsp\n\t"
			 "mov %%r12, %[before]"
			 : [before] "=m"(before)
			 : [a] "D"(a), [b] "S"(b)
			 : "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "memory",
			   "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			   "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	return before;
}

TEST(kprobe_flags_at_entry)
{
	static const long pairs[][2] = {
		{ 1, 1 }, { 0, 1 }, { 1, 0 }, { (long)(1ul << 63), 1 }, { -1, 0x7fffffff },
	};

	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_prog *p = flags_prog(jit);

		for (int m = 0; m < 2 && p; m++) {
			enum bpfrt_kprobe_mode mode = m ? BPFRT_KPROBE_AUTO : BPFRT_KPROBE_INT3;
			struct bpfrt_link *l = kattach(p, "kp_args6", 0, false, mode);

			if (l && m)
				CHECK(bpfrt_kprobe_optimized(l), "kp_args6 not optimized");
			for (size_t i = 0; i < ARRAY_LEN(pairs) && l; i++) {
				uint64_t before;

				raw_flags = 0;
				before = call_after_cmp(pairs[i][0], pairs[i][1]);
				CHECK_EQ(raw_flags, before, "cmp %ld, %ld: %s %s", pairs[i][1],
					 pairs[i][0], mode_name(mode), jit ? "jit" : "interp");
			}
			bpfrt_link_destroy(l);
		}
		bpfrt_prog_free(p);
	}
	check_restored();
}

/* get_func_ip: the probed address for a kprobe (func+OFF included), the
 * function's entry for a kretprobe, as Linux; 0 for a ctx that is not the
 * probe's (a program run on its own). */
static uint64_t raw_ip;

static struct bpfrt_prog *func_ip_prog(bool jit)
{
	const struct bpf_insn insns[] = {
		CALL_HELPER(BPF_FUNC_get_func_ip),
		LDDW(2, (uint64_t)(uintptr_t)&raw_ip),
		STX(BPF_DW, 2, 0, 0),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "kp_func_ip", .jit = jit);
	struct bpfrt_prog *p = NULL;

	CHECK(!bpfrt_prog_load(insns, ARRAY_LEN(insns), &o, &p), "load: %s", bpfrt_last_error());
	return p;
}

TEST(kprobe_get_func_ip)
{
	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_prog *p = func_ip_prog(jit);
		uint64_t ctx[21] = { 0 }, r0;

		for (int m = 0; m < 2 && p; m++) {
			enum bpfrt_kprobe_mode mode = m ? BPFRT_KPROBE_AUTO : BPFRT_KPROBE_INT3;
			struct bpfrt_link *l = kattach(p, "kp_args6", 0, false, mode);

			raw_ip = 1;
			kp_args6(1, 2, 3, 4, 5, 6);
			CHECK_EQ(raw_ip, (uint64_t)(uintptr_t)kp_args6, "kprobe %s", mode_name(mode));
			bpfrt_link_destroy(l);
			l = kattach(p, "kp_jcc", 3, false, mode);
			raw_ip = 1;
			kp_jcc(1);
			CHECK_EQ(raw_ip, (uint64_t)(uintptr_t)kp_jcc + 3, "kprobe +3 %s",
				 mode_name(mode));
			bpfrt_link_destroy(l);
			l = kattach(p, "kp_args6", 0, true, mode);
			raw_ip = 1;
			kp_args6(1, 2, 3, 4, 5, 6);
			CHECK_EQ(raw_ip, (uint64_t)(uintptr_t)kp_args6, "kretprobe %s",
				 mode_name(mode));
			bpfrt_link_destroy(l);
		}
		/* outside a probe's run: 0 */
		raw_ip = 1;
		if (p)
			CHECK(!bpfrt_prog_run(p, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP,
					      (uintptr_t)ctx, sizeof(ctx), &r0));
		CHECK_EQ(raw_ip, 0);
		bpfrt_prog_free(p);
	}
	check_restored();
}

#else
TL_SKIP_ALL("kprobes are x86-64 only")
#endif
