/* Host tracepoints: arguments as tp/ and raw_tp/ programs see them (both
 * engines), several programs per tracepoint, the static branch's code
 * bytes, the recursion guard, and attach/detach while threads fire. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "attach_support.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/tracepoint.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

BPFRT_DECLARE_TRACEPOINT(tp_args3, int a, long b, const char *c);
BPFRT_DEFINE_TRACEPOINT(tp_args3);
BPFRT_DECLARE_TRACEPOINT(tp_recurse, uint64_t depth);
BPFRT_DEFINE_TRACEPOINT(tp_recurse);
BPFRT_DECLARE_TRACEPOINT(tp_stress, uint64_t thread_idx);
BPFRT_DEFINE_TRACEPOINT(tp_stress);
BPFRT_DECLARE_TRACEPOINT(tp_zero);
BPFRT_DEFINE_TRACEPOINT(tp_zero);
BPFRT_DECLARE_TRACEPOINT(tp_unused, int x);
BPFRT_DEFINE_TRACEPOINT(tp_unused);

static volatile int args_fired;

__attribute__((noinline)) static void fire_args3(int a, long b, const char *c)
{
	BPFRT_TRACEPOINT(tp_args3, a, b, c);
	args_fired++;
}

__attribute__((noinline)) static void fire_recurse(uint64_t depth)
{
	BPFRT_TRACEPOINT(tp_recurse, depth);
}

__attribute__((noinline)) static void fire_stress(uint64_t idx)
{
	BPFRT_TRACEPOINT(tp_stress, idx);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void fire_zero(void)
{
	BPFRT_TRACEPOINT(tp_zero);
	__asm__ volatile("" ::: "memory");
}

static uint64_t tp_test_refire(uint64_t depth, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5)
{
	fire_recurse(depth);
	return 0;
}

static struct bpfrt_object *open_progs(bool jit)
{
	static const struct bpfrt_helper k = {
		.fn = tp_test_refire,
		.args = { BPFRT_ARG_ANYTHING },
	};
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);

	if (bpfrt_kfunc_id("tp_test_refire") < 0)
		CHECK(bpfrt_kfunc_register("tp_test_refire", &k) >= BPFRT_KFUNC_ID_BASE, "%s",
		      bpfrt_last_error());
	return load_object("tracepoint.bpf.o", &lo);
}

static struct bpfrt_link *attach(struct bpfrt_object *obj, const char *prog_name)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, prog_name);
	struct bpfrt_link *link = NULL;
	int err;

	if (!p) {
		tl_fail(__FILE__, __LINE__, "no program %s", prog_name);
		return NULL;
	}
	err = bpfrt_prog_attach(p, NULL, &link);
	CHECK(err == 0 && link, "attach %s: %d %s", prog_name, err, bpfrt_last_error());
	return link;
}

static void check_args(bool jit)
{
	struct bpfrt_object *obj = open_progs(jit);
	struct bpfrt_link *l_tp, *l_raw;
	struct bpfrt_tracepoint *tp = bpfrt_tracepoint_find("tp_args3");
	long *tp_hits, *raw_hits;
	uint64_t *tp_args, *raw_args;
	uint32_t *tp_id, *tp_nargs;
	int32_t *tp_tid;

	REQUIRE(obj);
	REQUIRE(tp);
	tp_hits = object_global(obj, "tp_hits");
	raw_hits = object_global(obj, "raw_hits");
	tp_args = object_global(obj, "tp_args");
	raw_args = object_global(obj, "raw_args");
	tp_id = object_global(obj, "tp_id");
	tp_nargs = object_global(obj, "tp_nargs");
	tp_tid = object_global(obj, "tp_tid");
	REQUIRE(!tl_failed());

	args_fired = 0;
	fire_args3(1, 2, "x");  /* nothing attached: no program runs */
	CHECK(*tp_hits == 0 && *raw_hits == 0);

	l_tp = attach(obj, "on_tp_args");
	l_raw = attach(obj, "on_raw_args");
	REQUIRE(l_tp && l_raw);
	fire_args3(-5, 0x123456789abcdefl, "hello");
	CHECK(*tp_hits == 1, "%ld", *tp_hits);
	CHECK(args_fired == 2);
	CHECK(*raw_hits == 1, "%ld", *raw_hits);
	/* int -5 sign-extended, as Linux casts tracepoint arguments */
	CHECK(tp_args[0] == (uint64_t)-5, "%#llx", (unsigned long long)tp_args[0]);
	CHECK(tp_args[1] == 0x123456789abcdefull, "%#llx", (unsigned long long)tp_args[1]);
	CHECK(raw_args[0] == (uint64_t)-5);
	CHECK(raw_args[1] == 0x123456789abcdefull);
	CHECK(raw_args[2] == 'h', "%llu", (unsigned long long)raw_args[2]);
	CHECK(*tp_id == tp->id, "%u vs %u", *tp_id, tp->id);
	CHECK(*tp_nargs == 3);
	CHECK(*tp_tid == (int32_t)syscall(SYS_gettid));

	bpfrt_link_destroy(l_tp);
	fire_args3(7, 8, "z");
	CHECK(*tp_hits == 1 && *raw_hits == 2, "%ld %ld", *tp_hits, *raw_hits);
	CHECK(raw_args[0] == 7 && raw_args[2] == 'z');
	bpfrt_link_destroy(l_raw);
	fire_args3(9, 9, "q");
	CHECK(*raw_hits == 2);
	CHECK(!bpfrt_tracepoint_enabled(tp));
	bpfrt_object_close(obj);
}

TEST(tp_and_raw_tp_see_arguments_interp)
{
	check_args(false);
}

TEST(tp_and_raw_tp_see_arguments_jit)
{
	check_args(true);
}

TEST(several_programs_per_tracepoint)
{
	struct bpfrt_object *obj = open_progs(true);
	struct bpfrt_link *l[3];
	long *raw_hits, *second_hits, *tp_hits;

	REQUIRE(obj);
	raw_hits = object_global(obj, "raw_hits");
	second_hits = object_global(obj, "second_hits");
	tp_hits = object_global(obj, "tp_hits");
	l[0] = attach(obj, "on_raw_args");
	l[1] = attach(obj, "on_args_second");
	l[2] = attach(obj, "on_tp_args");
	REQUIRE(l[0] && l[1] && l[2]);
	for (int i = 0; i < 10; i++)
		fire_args3(i, i, "a");
	CHECK(*raw_hits == 10 && *second_hits == 10 && *tp_hits == 10, "%ld %ld %ld",
	      *raw_hits, *second_hits, *tp_hits);
	/* The middle one goes; the others keep running. */
	bpfrt_link_destroy(l[1]);
	for (int i = 0; i < 5; i++)
		fire_args3(i, i, "a");
	CHECK(*raw_hits == 15 && *second_hits == 10 && *tp_hits == 15);
	/* The same program twice: it runs twice per event. */
	l[1] = attach(obj, "on_raw_args");
	fire_args3(1, 1, "a");
	CHECK(*raw_hits == 17, "%ld", *raw_hits);
	for (int i = 0; i < 3; i++)
		bpfrt_link_destroy(l[i]);
	bpfrt_object_close(obj);
}

TEST(disabled_site_is_nop5_enabled_site_is_jmp)
{
	struct bpfrt_tracepoint *tp = bpfrt_tracepoint_find("tp_args3");
	struct bpfrt_object *obj;
	struct bpfrt_link *link;
	struct bpfrt_tp_site sites[8];
	size_t n;

#ifndef __x86_64__
	SKIP("patch sites are x86-64 nop5/jmp here");
#endif
	REQUIRE(tp);
	n = bpfrt_tracepoint_sites(tp, sites, 8);
	REQUIRE(n >= 1 && n <= 8, "%zu sites", n);
	for (size_t i = 0; i < n; i++)
		CHECK(is_nop5((void *)sites[i].addr), "site %zu is not a nop5", i);
	obj = open_progs(true);
	REQUIRE(obj);
	link = attach(obj, "on_raw_args");
	REQUIRE(link);
	CHECK(bpfrt_tracepoint_enabled(tp));
	for (size_t i = 0; i < n; i++) {
		const uint8_t *c = (const uint8_t *)sites[i].addr;
		int32_t rel;

		memcpy(&rel, c + 1, 4);
		CHECK(c[0] == 0xe9, "site %zu starts with %#x", i, c[0]);
		/* jmp rel32 to the site's firing code (in .text.unlikely) */
		CHECK(sites[i].addr + 5 + rel == sites[i].target, "rel %d", rel);
	}
	/* The other tracepoint's sites were left alone. */
	struct bpfrt_tracepoint *other = bpfrt_tracepoint_find("tp_stress");
	struct bpfrt_tp_site osite;

	REQUIRE(other && bpfrt_tracepoint_sites(other, &osite, 1) == 1);
	CHECK(is_nop5((void *)osite.addr));
	bpfrt_link_destroy(link);
	for (size_t i = 0; i < n; i++)
		CHECK(is_nop5((void *)sites[i].addr), "site %zu not restored", i);
	bpfrt_object_close(obj);
}

TEST(registry_names_and_errors)
{
	struct bpfrt_object *obj = open_progs(false);
	BPFRT_OPTS(bpfrt_attach_opts, o);
	struct bpfrt_link *link = NULL;
	struct bpfrt_prog *p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	REQUIRE(obj);
	CHECK(bpfrt_tracepoint_find("tp_unused"));
	CHECK(bpfrt_tracepoint_find("anycat/tp_unused") == bpfrt_tracepoint_find("tp_unused"));
	CHECK(bpfrt_tracepoint_find("tp_nonexistent") == NULL);
	p = bpfrt_object_find_prog(obj, "on_stress");
	REQUIRE(p);
	o.target = "no_such_tracepoint";
	CHECK(bpfrt_prog_attach(p, &o, &link) == -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "no_such_tracepoint"), "%s", bpfrt_last_error());
	CHECK(link == NULL);
	o.target = NULL;
	o.kind = BPFRT_PROG_XDP;
	CHECK(bpfrt_prog_attach(p, &o, &link) == -EOPNOTSUPP);
	/* a kind override would give the raw_tp program a tp context (the
	 * trace entry first): refused, naming the program and both kinds */
	o.kind = BPFRT_PROG_TRACEPOINT;
	o.target = "x/tp_unused";
	CHECK(bpfrt_prog_attach(p, &o, &link) == -EINVAL && !link);
	CHECK(strstr(bpfrt_last_error(), "on_stress") && strstr(bpfrt_last_error(), "raw_tp") &&
	      strstr(bpfrt_last_error(), "tp x/tp_unused"), "%s", bpfrt_last_error());
	/* its own kind, at another tracepoint */
	o.kind = BPFRT_PROG_RAW_TRACEPOINT;
	CHECK(bpfrt_prog_attach(p, &o, &link) == 0, "%s", bpfrt_last_error());
	f = open_memstream(&buf, &len);
	REQUIRE(f);
	CHECK(bpfrt_tracepoint_list(f) >= 4);
	fclose(f);
	CHECK(strstr(buf, "tp_args3(int a, long b, const char *c)"), "%s", buf);
	CHECK(strstr(buf, "tp_unused(int x)  sites 0  programs 1  enabled"), "%s", buf);
	free(buf);
	bpfrt_link_destroy(link);

	/* A tracepoint without arguments. */
	long *zero_hits = object_global(obj, "zero_hits");

	link = attach(obj, "on_zero");
	REQUIRE(link && zero_hits);
	fire_zero();
	fire_zero();
	CHECK(*zero_hits == 2, "%ld", *zero_hits);
	bpfrt_link_destroy(link);
	fire_zero();
	CHECK(*zero_hits == 2);
	bpfrt_object_close(obj);
}

TEST(recursion_guard_counts_misses)
{
	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_object *obj = open_progs(jit);
		struct bpfrt_link *a, *b;
		struct bpfrt_prog *pa;
		long *recurse_hits, *other_hits;

		REQUIRE(obj);
		recurse_hits = object_global(obj, "recurse_hits");
		other_hits = object_global(obj, "other_hits");
		pa = bpfrt_object_find_prog(obj, "on_recurse");
		a = attach(obj, "on_recurse");
		b = attach(obj, "on_recurse_other");
		REQUIRE(a && b && pa);
		/* on_recurse fires tp_recurse again from inside its run: its own
		 * nested run is skipped (miss), on_recurse_other's is not. */
		fire_recurse(3);
		CHECK(*recurse_hits == 1, "jit %d: %ld", jit, *recurse_hits);
		CHECK(bpfrt_prog_misses(pa) == 1, "jit %d: %llu", jit,
		      (unsigned long long)bpfrt_prog_misses(pa));
		CHECK(*other_hits == 2, "jit %d: %ld", jit, *other_hits);
		/* depth 0: no nested fire, no miss */
		fire_recurse(0);
		CHECK(*recurse_hits == 2 && bpfrt_prog_misses(pa) == 1);
		CHECK(bpfrt_prog_aborts(pa) == 0);
		bpfrt_link_destroy(a);
		bpfrt_link_destroy(b);
		bpfrt_object_close(obj);
	}
}

/* ---- concurrency ----------------------------------------------------- */

/* Phase counter (mod 4): 0 detached (destroy returned), 1 attaching,
 * 2 attached (attach returned), 3 detaching. A fire that starts and ends
 * in the same phase 2 must be counted, in the same phase 0 must not. */
static _Atomic uint64_t phase;
static _Atomic bool stop_firing;

struct firer {
	pthread_t thread;
	uint64_t idx;
	volatile uint64_t *slot;        /* the program's thread_hits[idx], or NULL */
	uint64_t definite, maybe, none, lost, phantom;
};

static void *firer_main(void *arg)
{
	struct firer *f = arg;

	while (!atomic_load_explicit(&stop_firing, memory_order_relaxed)) {
		uint64_t g1 = atomic_load(&phase);
		uint64_t before = f->slot ? *f->slot : 0;

		fire_stress(f->idx);
		bool ran = f->slot && *f->slot != before;
		uint64_t g2 = atomic_load(&phase);

		if (g1 != g2 || g1 % 2) {
			f->maybe++;     /* attach or detach in progress */
		} else if (g1 % 4 == 2) {
			f->definite++;
			f->lost += !ran;
		} else {
			f->none++;
			f->phantom += ran;
		}
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_stress(bool jit, double seconds)
{
	const int min_cycles = 30;
	struct bpfrt_object *obj = open_progs(jit);
	struct firer f[2] = { 0 };
	uint64_t definite = 0, maybe = 0, none = 0, lost = 0, phantom = 0, hits;
	uint64_t *thread_hits;
	struct bpfrt_prog *p;
	long *stress_hits;
	int cycles = 0;
	double end;

	REQUIRE(obj);
	stress_hits = object_global(obj, "stress_hits");
	thread_hits = object_global(obj, "thread_hits");
	p = bpfrt_object_find_prog(obj, "on_stress");
	REQUIRE(p && stress_hits && thread_hits);
	atomic_store(&phase, 0);
	atomic_store(&stop_firing, false);
	for (int i = 0; i < 2; i++) {
		f[i].idx = i;
		f[i].slot = &thread_hits[i];
		REQUIRE(pthread_create(&f[i].thread, NULL, firer_main, &f[i]) == 0);
	}
	/* For `seconds`, and at least min_cycles cycles however slow a loaded
	 * machine makes them: the checks below count events, not time. */
	end = now_s() + seconds;
	while ((now_s() < end || cycles < min_cycles) && !tl_failed()) {
		struct bpfrt_link *link = NULL;
		struct timespec pause = { 0, 200 * 1000 };

		atomic_fetch_add(&phase, 1);
		CHECK(bpfrt_prog_attach(p, NULL, &link) == 0, "%s", bpfrt_last_error());
		atomic_fetch_add(&phase, 1);
		nanosleep(&pause, NULL);
		atomic_fetch_add(&phase, 1);
		CHECK(bpfrt_link_detach(link) == 0, "%s", bpfrt_last_error());
		bpfrt_link_destroy(link);
		atomic_fetch_add(&phase, 1);
		nanosleep(&pause, NULL);
		cycles++;
	}
	atomic_store(&stop_firing, true);
	for (int i = 0; i < 2; i++) {
		pthread_join(f[i].thread, NULL);
		definite += f[i].definite;
		maybe += f[i].maybe;
		none += f[i].none;
		lost += f[i].lost;
		phantom += f[i].phantom;
	}
	/* Every event fired wholly inside an attached phase ran the program,
	 * none fired wholly inside a detached phase did. */
	CHECK(lost == 0, "%llu events lost", (unsigned long long)lost);
	CHECK(phantom == 0, "%llu phantom events", (unsigned long long)phantom);
	CHECK(thread_hits[0] + thread_hits[1] == (uint64_t)*stress_hits);
	hits = (uint64_t)*stress_hits;
	CHECK(hits >= definite, "lost events: %llu hits < %llu fired while attached",
	      (unsigned long long)hits, (unsigned long long)definite);
	CHECK(hits <= definite + maybe, "phantom events: %llu hits > %llu + %llu",
	      (unsigned long long)hits, (unsigned long long)definite,
	      (unsigned long long)maybe);
	CHECK(definite > 0 && none > 0);
	fprintf(stderr, "# %s: %d attach/detach cycles, %llu hits, %llu definite, "
		"%llu during attach/detach, %llu while detached\n", jit ? "jit" : "interp", cycles,
		(unsigned long long)hits, (unsigned long long)definite,
		(unsigned long long)maybe, (unsigned long long)none);
	CHECK(!bpfrt_tracepoint_enabled(bpfrt_tracepoint_find("tp_stress")));
	bpfrt_object_close(obj);
}

TEST(attach_detach_loop_while_two_threads_fire_jit)
{
	run_stress(true, 1.5);
}

TEST(attach_detach_loop_while_two_threads_fire_interp)
{
	run_stress(false, 1.0);
}

/* The program and its object are freed right after the detach while two
 * threads keep firing: the detach's grace period must cover every run
 * (ASan reports a use after free otherwise). */
TEST(detach_under_load_then_free)
{
	struct firer f[2] = { 0 };
	double end;
	int rounds = 0;

	atomic_store(&phase, 0);
	atomic_store(&stop_firing, false);
	for (int i = 0; i < 2; i++) {
		f[i].idx = 2 + i;
		REQUIRE(pthread_create(&f[i].thread, NULL, firer_main, &f[i]) == 0);
	}
	/* a second of rounds, and at least 12 however slow the machine */
	end = now_s() + 1.0;
	while ((now_s() < end || rounds < 12) && !tl_failed()) {
		struct bpfrt_object *obj = open_progs(rounds & 1);
		struct bpfrt_link *link;
		struct timespec pause = { 0, 500 * 1000 };
		long *hits;

		if (!obj)
			break;
		hits = object_global(obj, "stress_hits");
		link = attach(obj, "on_stress");
		if (!link) {
			bpfrt_object_close(obj);
			break;
		}
		/* until the firers (which share 2 CPUs with us) ran it */
		for (int i = 0; i < 200 && hits && !*(volatile long *)hits; i++)
			nanosleep(&pause, NULL);
		CHECK(bpfrt_link_detach(link) == 0, "%s", bpfrt_last_error());
		bpfrt_link_destroy(link);
		CHECK(hits && *hits > 0, "round %d: no hits while attached", rounds);
		bpfrt_object_close(obj);
		rounds++;
	}
	atomic_store(&stop_firing, true);
	for (int i = 0; i < 2; i++)
		pthread_join(f[i].thread, NULL);
	CHECK(rounds > 10, "%d rounds", rounds);
}

TEST(context_reach_checked_at_attach)
{
	struct bpfrt_object *obj = open_progs(false);
	BPFRT_OPTS(bpfrt_attach_opts, o);
	struct bpfrt_link *link = NULL;
	struct bpfrt_prog *p;

	REQUIRE(obj);
	p = bpfrt_object_find_prog(obj, "reads_third_arg");
	REQUIRE(p);
	CHECK(bpfrt_prog_ctx_access(p) == 24, "%u", bpfrt_prog_ctx_access(p));
	o.target = "tp_zero"; /* no arguments: reading args[2] would overrun */
	CHECK(bpfrt_prog_attach(p, &o, &link) == -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "reads 24 bytes of context, tp_zero provides 0"), "%s",
	      bpfrt_last_error());
	CHECK(link == NULL);
	o.target = NULL; /* its own tp_args3: three arguments, 24 bytes */
	CHECK(bpfrt_prog_attach(p, &o, &link) == 0, "%s", bpfrt_last_error());
	bpfrt_link_destroy(link);
	bpfrt_object_close(obj);
}
