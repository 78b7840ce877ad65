/* fentry.multi on 10,000 generated functions (mk/gen-host-funcs.sh, built
 * with padding by mk/host-targets.mk): every call seen once with the right func_ip,
 * argument and cookie, through the padding index and through the address
 * hash; attach time; fentry and fentry.multi on one function; churn while
 * two threads call the functions. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"
#include "prog_support.h"
#include "attach_support.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/attach.h"
#include "attach/run.h"
#include "attach/trampoline.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#if !defined(__x86_64__)
TL_SKIP_ALL("fentry trampolines are x86-64 only")
#else

#define NFUNCS 10000

extern long (*const multi_fn_table[NFUNCS])(long);
extern const unsigned long multi_fn_count;

/* out[0] = func_ip, out[1] = get_func_arg(0), out[2] = cookie,
 * out[3] = arg_cnt, out[4] += 1. */
static struct bpfrt_prog *record_prog(uint64_t *out, bool jit)
{
	struct pb b = { .n = 0 };

	pb_add(&b, MOV64_REG(6, 1));
	pb_ldptr(&b, 7, out);
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_ip));
	pb_add(&b, STX(BPF_DW, 7, 0, 0));
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, MOV64_IMM(2, 0));
	pb_add(&b, MOV64_REG(3, 7));
	pb_add(&b, ALU64_IMM(BPF_ADD, 3, 8));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_arg));
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_attach_cookie));
	pb_add(&b, STX(BPF_DW, 7, 0, 16));
	pb_add(&b, MOV64_REG(1, 6));
	pb_add(&b, CALL_HELPER(BPF_FUNC_get_func_arg_cnt));
	pb_add(&b, STX(BPF_DW, 7, 0, 24));
	pb_add(&b, MOV64_IMM(3, 1));
	pb_add(&b, ATOMIC(BPF_DW, BPF_ADD, 7, 3, 32));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, EXIT());
	return pb_load(&b, "multi_rec", jit);
}

static struct bpfrt_link *attach_multi(struct bpfrt_prog *p, const char *glob, uint64_t cookie,
				       double *ms)
{
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = BPFRT_PROG_FENTRY_MULTI,
		   .target = glob, .cookie = cookie, .nr_args = 1);
	struct bpfrt_link *l = NULL;
	struct timespec t0, t1;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = bpfrt_prog_attach(p, &o, &l);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ms)
		*ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	CHECK(!err && l, "attach %s: %d %s", glob, err, bpfrt_last_error());
	return l;
}

static void check_all_calls(bool hash, bool jit)
{
	uint64_t out[5] = { 0 };
	struct bpfrt_prog *p = record_prog(out, jit);
	struct bpfrt_link *l;
	double ms;
	long bad = 0;

	REQUIRE(p);
	REQUIRE(multi_fn_count == NFUNCS);
	bpfrt_multi_force_hash = hash;
	l = attach_multi(p, "multi_fn_*", 0xabc, &ms);
	bpfrt_multi_force_hash = false;
	REQUIRE(l);
	printf("# %s, %s: attached %d functions in %.1f ms\n", hash ? "hash" : "padding",
	       jit ? "jit" : "interp", NFUNCS, ms);
	for (int i = 0; i < NFUNCS && bad < 5; i++) {
		uint64_t before = out[4];
		long arg = 1000003l * i;

		if (multi_fn_table[i](arg) != (arg ^ i) || out[4] != before + 1 ||
		    out[0] != (uintptr_t)multi_fn_table[i] || out[1] != (uint64_t)arg ||
		    out[2] != 0xabc || out[3] != 1) {
			bad++;
			tl_fail(__FILE__, __LINE__, "function %d: runs %lu->%lu ip %#lx (want %p) "
				"arg %lu cookie %#lx cnt %lu", i, (unsigned long)before,
				(unsigned long)out[4], (unsigned long)out[0],
				(void *)multi_fn_table[i], (unsigned long)out[1],
				(unsigned long)out[2], (unsigned long)out[3]);
		}
	}
	if (!hash)
		for (int i = 0; i < NFUNCS; i += 997) {
			uint32_t idx;

			memcpy(&idx, (const char *)multi_fn_table[i] - 4, 4);
			CHECK(idx != 0x90909090u, "function %d: padding holds an index", i);
		}
	bpfrt_link_destroy(l);
	for (int i = 0; i < NFUNCS; i++)
		if (!is_nop5((const void *)multi_fn_table[i])) {
			tl_fail(__FILE__, __LINE__, "function %d: nop5 not restored", i);
			break;
		}
	uint64_t runs = out[4];

	for (int i = 0; i < NFUNCS; i += 7)
		multi_fn_table[i](1);
	CHECK(out[4] == runs, "no runs after detach");
	bpfrt_prog_free(p);
}

TEST(multi_padding_10000_interp) { check_all_calls(false, false); }
TEST(multi_padding_10000_jit) { check_all_calls(false, true); }
TEST(multi_hash_10000_interp) { check_all_calls(true, false); }
TEST(multi_hash_10000_jit) { check_all_calls(true, true); }

TEST(multi_glob_and_overlap)
{
	uint64_t a[5] = { 0 }, b[5] = { 0 };
	struct bpfrt_prog *pa = record_prog(a, true), *pb_ = record_prog(b, false);
	struct bpfrt_link *la = attach_multi(pa, "multi_fn_1?", 1, NULL);
	struct bpfrt_link *lb = attach_multi(pb_, "multi_fn_1[0-4]", 2, NULL);
	BPFRT_OPTS(bpfrt_attach_opts, fo, .kind = BPFRT_PROG_FENTRY,
		   .target = "multi_fn_12", .cookie = 3, .nr_args = 1);
	struct bpfrt_link *lf = NULL;
	uint64_t c[5] = { 0 };
	struct bpfrt_prog *pc = record_prog(c, true);

	REQUIRE(la && lb && pc);
	REQUIRE(!bpfrt_prog_attach(pc, &fo, &lf), "%s", bpfrt_last_error());
	multi_fn_table[12](5);
	CHECK(a[4] == 1 && b[4] == 1 && c[4] == 1, "all three ran: %lu %lu %lu",
	      (unsigned long)a[4], (unsigned long)b[4], (unsigned long)c[4]);
	CHECK(a[2] == 1 && b[2] == 2 && c[2] == 3, "each with its cookie");
	CHECK(a[0] == (uintptr_t)multi_fn_table[12] && c[0] == a[0]);
	multi_fn_table[17](5);
	CHECK(a[4] == 2 && b[4] == 1 && c[4] == 1);
	multi_fn_table[1](5);
	multi_fn_table[100](5);
	CHECK(a[4] == 2, "the glob matched exactly multi_fn_1?");
	bpfrt_link_destroy(lf);
	multi_fn_table[12](5);
	CHECK(a[4] == 3 && b[4] == 2 && c[4] == 1, "back on the global trampoline");
	bpfrt_link_destroy(la);
	bpfrt_link_destroy(lb);
	CHECK(is_nop5((const void *)multi_fn_table[12]));

	BPFRT_OPTS(bpfrt_attach_opts, no, .kind = BPFRT_PROG_FENTRY_MULTI,
		   .target = "no_such_fn_*");
	struct bpfrt_link *ln = NULL;

	CHECK(bpfrt_prog_attach(pa, &no, &ln) == -ENOENT && !ln);
	bpfrt_prog_free(pa);
	bpfrt_prog_free(pb_);
	bpfrt_prog_free(pc);
}

/* out[0] = ctx[0] (the argument), out[1] += 1; calls nothing, so the
 * global trampoline runs it inline when JIT'ed. */
static struct bpfrt_prog *arg_counter_prog(uint64_t *out, bool jit)
{
	struct pb b = { .n = 0 };

	pb_ldptr(&b, 2, out);
	pb_add(&b, LDX(BPF_DW, 3, 1, 0));
	pb_add(&b, STX(BPF_DW, 2, 3, 0));
	pb_add(&b, LDX(BPF_DW, 3, 2, 8));
	pb_add(&b, ALU64_IMM(BPF_ADD, 3, 1));
	pb_add(&b, STX(BPF_DW, 2, 3, 8));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, EXIT());
	return pb_load(&b, "multi_cnt", jit);
}

/* Several programs on the same functions through the global trampoline
 * (its item loop): two run inline, one interpreted in C; then the inline
 * guard: a program already running on this thread is skipped and counted,
 * and another running program sends the inline ones through C, which runs
 * them. */
static void check_several(bool hash)
{
	uint64_t x[2] = { 0 }, y[2] = { 0 }, z[2] = { 0 };
	struct bpfrt_prog *px = arg_counter_prog(x, true), *py = arg_counter_prog(y, true);
	struct bpfrt_prog *pz = arg_counter_prog(z, false);

	REQUIRE(px && py && pz);
	CHECK(bpfrt_tramp_prog_inlinable(px) && !bpfrt_tramp_prog_inlinable(pz));
	bpfrt_multi_force_hash = hash;
	struct bpfrt_link *lx = attach_multi(px, "multi_fn_3??", 0, NULL);
	struct bpfrt_link *ly = attach_multi(py, "multi_fn_30?", 0, NULL);
	struct bpfrt_link *lz = attach_multi(pz, "multi_fn_30?", 0, NULL);

	bpfrt_multi_force_hash = false;
	REQUIRE(lx && ly && lz);
	CHECK(multi_fn_table[305](77) == (77 ^ 305));
	CHECK(x[0] == 77 && x[1] == 1 && y[0] == 77 && y[1] == 1 && z[0] == 77 && z[1] == 1,
	      "all three: %lu %lu %lu", (unsigned long)x[1], (unsigned long)y[1],
	      (unsigned long)z[1]);
	multi_fn_table[355](78);
	CHECK(x[0] == 78 && x[1] == 2 && y[1] == 1 && z[1] == 1, "one item");

	struct bpfrt_attach_tls saved = bpfrt_attach_tls;
	uint64_t mx = bpfrt_prog_misses(px), my = bpfrt_prog_misses(py);

	bpfrt_attach_tls.active[0] = px;
	bpfrt_attach_tls.depth = 1;
	multi_fn_table[305](79);
	multi_fn_table[355](80);
	CHECK(x[1] == 2 && bpfrt_prog_misses(px) == mx + 2, "x skipped, counted");
	CHECK(y[0] == 79 && y[1] == 2 && z[1] == 2 && bpfrt_prog_misses(py) == my,
	      "the others ran through C");
	CHECK(bpfrt_attach_tls.depth == 1 && bpfrt_attach_tls.active[0] == px);
	bpfrt_attach_tls = saved;
	bpfrt_link_destroy(ly);
	multi_fn_table[305](81);
	CHECK(x[1] == 3 && y[1] == 2 && z[1] == 3, "the array follows the detach");
	bpfrt_link_destroy(lx);
	bpfrt_link_destroy(lz);
	multi_fn_table[305](82);
	CHECK(x[1] == 3 && z[1] == 3 && is_nop5((const void *)multi_fn_table[305]));
	bpfrt_prog_free(px);
	bpfrt_prog_free(py);
	bpfrt_prog_free(pz);
}

TEST(multi_several_programs_padding) { check_several(false); }
TEST(multi_several_programs_hash) { check_several(true); }

/* Churn: attach to multi_fn_2?? (100 functions) and detach in a loop while
 * two threads call them; calls entirely inside an attached phase must be
 * seen (per-thread slot holds the id passed), calls entirely inside a
 * detached phase must not. */
static uint64_t slots[2];

static void *caller(void *arg)
{
	struct churn_stats *st = arg;
	uint64_t seq = 0;

	while (!churn_stop) {
		uint64_t id = (++seq << 1) | (uint64_t)st->thread;
		unsigned long p1 = atomic_load(&churn_phase);

		multi_fn_table[200 + (seq % 100)]((long)id);
		unsigned long p2 = atomic_load(&churn_phase);

		churn_note(st, p1, p2, slots[st->thread] == id, 1);
	}
	return NULL;
}

static void check_churn(bool hash)
{
	struct pb b = { .n = 0 };
	struct bpfrt_prog *p;
	struct churn_stats st[2] = { { .thread = 0 }, { .thread = 1 } };
	pthread_t t[2];
	struct timespec start;
	long cycles = 0;

	pb_add(&b, LDX(BPF_DW, 2, 1, 0));
	pb_add(&b, MOV64_REG(3, 2));
	pb_add(&b, ALU64_IMM(BPF_AND, 3, 1));
	pb_add(&b, ALU64_IMM(BPF_LSH, 3, 3));
	pb_ldptr(&b, 5, slots);
	pb_add(&b, ALU64_REG(BPF_ADD, 5, 3));
	pb_add(&b, STX(BPF_DW, 5, 2, 0));
	pb_add(&b, MOV64_IMM(0, 0));
	pb_add(&b, EXIT());
	p = pb_load(&b, "multi_slot", true);
	REQUIRE(p);
	/* The ids of an earlier run (same threads' sequence numbers) must not
	 * be left in the slots: a caller reaching one later would count its
	 * own call as a phantom. */
	memset(slots, 0, sizeof(slots));
	churn_start(t, caller, st);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		atomic_fetch_add(&churn_phase, 1);
		bpfrt_multi_force_hash = hash;
		struct bpfrt_link *l = attach_multi(p, "multi_fn_2??", 0, NULL);

		bpfrt_multi_force_hash = false;
		atomic_fetch_add(&churn_phase, 1);
		churn_spin(50000);
		atomic_fetch_add(&churn_phase, 1);
		bpfrt_link_destroy(l);
		atomic_fetch_add(&churn_phase, 1);
		churn_spin(50000);
		cycles++;
	} while (!tl_failed() && churn_more(&start, st));
	churn_finish(t);
	printf("# %s: %ld cycles, %ld+%ld calls, checked on %ld off %ld\n", hash ? "hash" : "padding",
	       cycles, st[0].calls, st[1].calls, st[0].must_see + st[1].must_see,
	       st[0].must_not + st[1].must_not);
	for (int i = 0; i < 2; i++) {
		CHECK(st[i].missed == 0, "thread %d: %ld lost", i, st[i].missed);
		CHECK(st[i].phantom == 0, "thread %d: %ld phantom", i, st[i].phantom);
	}
	bpfrt_prog_free(p);
}

TEST(multi_churn_padding) { check_churn(false); }
TEST(multi_churn_hash) { check_churn(true); }

#endif /* __x86_64__ */
