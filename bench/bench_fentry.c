/* fentry / fexit / fmod_ret / fentry.multi benchmarks.
 *
 * Trigger benchmarks on the harness of bench_trigger.c: producers call
 * bench_target() (bench/host/bench_target_clang.c, built with a nop5 entry
 * and 16 bytes of padding) in a loop; the attached program increments a
 * counter the main thread reads once a second.
 *   trig-fentry, trig-fexit, trig-fmodret   per-function trampoline
 *   trig-fentry-multi-pad                   global trampoline, index in padding
 *   trig-fentry-multi-hash                  global trampoline, address hash
 *                                           (BENCH_MULTI_FUNCS=N more functions
 *                                           attached, default 0)
 *
 * multi-calls: per-function metadata in function padding vs a hash table,
 * the kfunc_md_test experiment. 10 million calls of bench_target(),
 * in ms of thread CPU time (median of -n runs, default 5), with no program, fentry,
 * fentry.multi through the padding, and fentry.multi through the hash with
 * 1,000 and 32,768 functions attached (the generated bench_fn_* of
 * mk/gen-host-funcs.sh); also the time to attach and detach 32,768 functions.
 *
 * multi-attach: the first fentry.multi attach of a fresh process (forked
 * before anything was scanned or patched), 32,768 functions, wall and
 * thread CPU time: symbol discovery, function states, program arrays,
 * the first write to each text page; then detach and attach again. */
#define _GNU_SOURCE
#include "bench.h"
#include "../tests/insns.h"
#include "bpfrt/attach.h"
#include "attach/text_poke.h"
#include "attach/trampoline.h"

#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void bench_target(long a);
extern long (*const bench_fn_table[])(long);
extern const unsigned long bench_fn_count;

/* A cache line of its own: a neighbour written on every call (bench_target_result
 * is one) would slow the atomic add. */
static struct {
	long v;
	char pad[120];
} fentry_ctr __attribute__((aligned(128)));
#define fentry_hits fentry_ctr.v

static struct bpfrt_link *attach_kind(struct bpfrt_prog *p, enum bpfrt_prog_kind kind,
				      const char *target)
{
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = kind, .target = target,
		   .nr_args = 1);
	struct bpfrt_link *l = NULL;

	if (!p || bpfrt_prog_attach(p, &o, &l)) {
		fprintf(stderr, "attach %s: %s\n", target, bpfrt_last_error());
		return NULL;
	}
	return l;
}

/* ---- trigger benchmarks --------------------------------------------------- */

static struct bpfrt_prog *trig_prog;
static struct bpfrt_link *trig_links[4];

static int trig_attach(enum bpfrt_prog_kind kind, bool hash)
{
	trig_prog = bench_counter_prog(&fentry_hits, "bench_counter");
	if (!trig_prog)
		return bench_skip(-EINVAL, "cannot load the counter program: %s",
				  bpfrt_last_error());
	bpfrt_multi_force_hash = hash;
	trig_links[0] = attach_kind(trig_prog, kind, "bench_target");
	if (trig_links[0] && hash && getenv("BENCH_MULTI_FUNCS")) {
		static char glob[64];
		long n = atol(getenv("BENCH_MULTI_FUNCS"));

		/* bench_fn_* with as many digits as n needs: a prefix glob. */
		snprintf(glob, sizeof(glob), "bench_fn_%s", n >= 10000 ? "*" : n >= 1000 ? "???" :
			 n >= 100 ? "??" : "?");
		trig_links[1] = attach_kind(trig_prog, kind, glob);
	}
	bpfrt_multi_force_hash = false;
	if (!trig_links[0])
		return bench_skip(-ENOENT, "attach: %s", bpfrt_last_error());
	return 0;
}

static int fentry_setup(void) { return trig_attach(BPFRT_PROG_FENTRY, false); }
static int fexit_setup(void) { return trig_attach(BPFRT_PROG_FEXIT, false); }
static int fmodret_setup(void) { return trig_attach(BPFRT_PROG_FMOD_RET, false); }
static int multi_pad_setup(void) { return trig_attach(BPFRT_PROG_FENTRY_MULTI, false); }
static int multi_hash_setup(void) { return trig_attach(BPFRT_PROG_FENTRY_MULTI, true); }

static void *target_producer(void *arg)
{
	for (;;)
		bench_target(1);
	return NULL;
}

static void fentry_measure(struct bench_res *res)
{
	res->hits = (uint64_t)__atomic_exchange_n(&fentry_hits, 0, __ATOMIC_RELAXED);
}

static void fentry_teardown(void)
{
	for (int i = 0; i < 4; i++)
		bpfrt_link_destroy(trig_links[i]);
}

#define FENTRY_HARNESS(var, bname, setup_fn)					\
	static const struct bench_harness var = {				\
		.name = bname, .setup = setup_fn, .producer = target_producer,	\
		.measure = fentry_measure, .teardown = fentry_teardown,		\
	}

FENTRY_HARNESS(h_fentry, "trig-fentry", fentry_setup);
FENTRY_HARNESS(h_fexit, "trig-fexit", fexit_setup);
FENTRY_HARNESS(h_fmodret, "trig-fmodret", fmodret_setup);
FENTRY_HARNESS(h_multi_pad, "trig-fentry-multi-pad", multi_pad_setup);
FENTRY_HARNESS(h_multi_hash, "trig-fentry-multi-hash", multi_hash_setup);

#define FENTRY_BENCH(var, h, text)					\
	static int var##_run(int argc, char **argv)			\
	{								\
		return bench_harness_main(&h, argc, argv);		\
	}								\
	const struct bench var = { h.name, text, var##_run }

FENTRY_BENCH(bench_trig_fentry, h_fentry, "fentry program on a host function");
FENTRY_BENCH(bench_trig_fexit, h_fexit, "fexit program on a host function");
FENTRY_BENCH(bench_trig_fmodret, h_fmodret, "fmod_ret program (returns 0) on a host function");
FENTRY_BENCH(bench_trig_fentry_multi_pad, h_multi_pad,
	     "fentry.multi, metadata index in the function's padding");
FENTRY_BENCH(bench_trig_fentry_multi_hash, h_multi_hash,
	     "fentry.multi, metadata from the address hash (BENCH_MULTI_FUNCS=N more)");

/* ---- multi-calls (kfunc_md_test: padding vs hash) ----------------------------- */

#define CALLS 10000000l

/* Thread CPU time: other load on the machine preempting us does not count
 * (as the trigger harness's per-producer-CPU-second figures). */
static double time_calls_ms(void)
{
	uint64_t t0 = bench_thread_ns();

	for (long i = 0; i < CALLS; i++)
		bench_target(i);
	return (double)(bench_thread_ns() - t0) / 1e6;
}

static double median_ms(int runs, long expect_hits_per_run)
{
	double v[64];
	struct bench_stats st;

	for (int r = 0; r < runs; r++) {
		long before = fentry_hits;

		v[r] = time_calls_ms();
		if (expect_hits_per_run && !getenv("BENCH_EMPTY_PROG") && fentry_hits - before != expect_hits_per_run) {
			fprintf(stderr, "multi-calls: %ld program runs for %ld calls\n",
				fentry_hits - before, expect_hits_per_run);
			exit(1);
		}
	}
	bench_stats_of(v, runs, &st);
	return st.median;
}

static double attach_ms(struct bpfrt_prog *p, const char *glob, struct bpfrt_link **l)
{
	uint64_t t0 = bench_now_ns();

	*l = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, glob);
	return (double)(bench_now_ns() - t0) / 1e6;
}

static void row(const char *what, double ms, double none, double ref, const char *ref_name)
{
	printf("%-44s %9.1f ms  %6.2f ns/call  +%5.2f ns", what, ms, ms * 1e6 / CALLS,
	       (ms - none) * 1e6 / CALLS);
	if (ref > 0)
		printf("  %.2fx %s", ms / ref, ref_name);
	printf("\n");
}

static int multi_calls_run(int argc, char **argv)
{
	int runs = 5, opt;
	struct bpfrt_prog *p;
	struct bpfrt_link *l, *l2, *l3;
	double none, fentry, pad, h1k, h32k, pad32k, t_attach, t_detach;
	uint64_t w0, s0, w1, s1;

	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		if (opt == 'n' && atoi(optarg) > 0 && atoi(optarg) <= 64) {
			runs = atoi(optarg);
		} else {
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: bpfrt-bench multi-calls [-n runs (1..64, default 5)]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	bench_pin_cpu(-1);
	p = bench_counter_prog(&fentry_hits, "bench_counter");
	if (!p)
		return 1;
	printf("multi-calls: %ld calls of bench_target(), median of %d runs; the program "
	       "increments a counter\n", CALLS, runs);
	none = median_ms(runs, 0);
	row("no program", none, none, 0, NULL);

	l = attach_kind(p, BPFRT_PROG_FENTRY, "bench_target");
	if (!l)
		return 1;
	fentry = median_ms(runs, CALLS);
	bpfrt_link_destroy(l);
	row("fentry", fentry, none, 0, NULL);

	/* kprobe (bench_kprobe.c): jmp mode, after the patchable nop5 */
	BPFRT_OPTS(bpfrt_kprobe_opts, ko);

	if (!bpfrt_kprobe_attach(p, "bench_target", 0, &ko, &l)) {
		double kp = median_ms(runs, CALLS);

		row(bpfrt_kprobe_optimized(l) ? "kprobe (jmp mode)" : "kprobe (int3 mode)", kp,
		    none, fentry, "fentry");
		bpfrt_link_destroy(l);
	}

	l = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, "bench_target");
	if (!l)
		return 1;
	pad = median_ms(runs, CALLS);
	bpfrt_link_destroy(l);
	row("fentry.multi, padding, 1 function", pad, none, fentry, "fentry");

	/* Hash: bench_target plus bench_fn_? .. bench_fn_??? (1,001 functions). */
	bpfrt_multi_force_hash = true;
	l = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, "bench_target");
	l2 = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, "bench_fn_?");
	l3 = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, "bench_fn_??");
	struct bpfrt_link *l4 = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, "bench_fn_???");

	if (!l || !l2 || !l3 || !l4)
		return 1;
	h1k = median_ms(runs, CALLS);
	bpfrt_link_destroy(l2);
	bpfrt_link_destroy(l3);
	bpfrt_link_destroy(l4);
	row("fentry.multi, hash, 1,001 functions", h1k, none, fentry, "fentry");

	/* 32,768 more: timed attach (one text_poke batch). */
	bpfrt_text_poke_stats(&w0, &s0);
	t_attach = attach_ms(p, "bench_fn_*", &l2);
	bpfrt_text_poke_stats(&w1, &s1);
	if (!l2)
		return 1;
	h32k = median_ms(runs, CALLS);
	row("fentry.multi, hash, 32,769 functions", h32k, none, h1k, "1,001");
	bpfrt_multi_force_hash = false;
	t_detach = (double)bench_now_ns();
	bpfrt_link_destroy(l2);
	t_detach = ((double)bench_now_ns() - t_detach) / 1e6;
	bpfrt_link_destroy(l);

	/* Padding with the same 32,769 functions attached. */
	l = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, "bench_target");
	double t_attach_pad = attach_ms(p, "bench_fn_*", &l2);

	if (!l || !l2)
		return 1;
	pad32k = median_ms(runs, CALLS);
	row("fentry.multi, padding, 32,769 functions", pad32k, none, fentry, "fentry");
	bpfrt_link_destroy(l2);
	bpfrt_link_destroy(l);
	printf("attach %lu functions (hash): %.1f ms (%lu writes to /proc/self/mem, %lu syncs); "
	       "detach %.1f ms; attach again (padding): %.1f ms\n", bench_fn_count, t_attach,
	       (unsigned long)(w1 - w0), (unsigned long)(s1 - s0), t_detach, t_attach_pad);
	/* The no-program loop has no counter increment: with the counter
	 * program the fentry row includes its locked add (the trigger rows
	 * compare like with like; BENCH_EMPTY_PROG=1 is kfunc_md_test's empty program). */
	double added = (fentry - none) * 1e6 / CALLS;

	printf("targets:\n");
	printf("  fentry adds at most 3 ns per call%s: %+.2f ns: %s\n",
	       getenv("BENCH_EMPTY_PROG") ? "" : " (incl. the counter's locked add)", added,
	       added <= 3 ? "met" : "MISSED");
	printf("  fentry.multi through the padding index at most 1.2x fentry: %.2fx: %s\n",
	       pad / fentry, pad / fentry <= 1.2 ? "met" : "MISSED");
	printf("  fentry.multi through the hash, 32,769 functions at most 1.5x 1,001: %.2fx: %s\n",
	       h32k / h1k, h32k / h1k <= 1.5 ? "met" : "MISSED");
	printf("  attaching 32,768 functions in under 50 ms: %.1f ms: %s\n", t_attach,
	       t_attach < 50 ? "met" : "MISSED");
	bpfrt_prog_free(p);
	return 0;
}

const struct bench bench_multi_calls = {
	"multi-calls", "10M calls of one function with fentry / fentry.multi (padding, hash 1k/32k)",
	multi_calls_run,
};

/* ---- multi-attach: the first attach of a process ------------------------------ */

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int multi_attach_child(void)
{
	struct bpfrt_prog *p = bench_counter_prog(&fentry_hits, "bench_counter");
	struct bpfrt_link *l = NULL;
	double w0, c0, w1, c1, w2, c2, w3, c3;

	if (!p)
		return 1;
	w0 = (double)bench_now_ns() / 1e6;
	c0 = cpu_ms();
	l = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, "bench_fn_*");
	w1 = (double)bench_now_ns() / 1e6;
	c1 = cpu_ms();
	if (!l)
		return 1;
	bpfrt_link_destroy(l);
	w2 = (double)bench_now_ns() / 1e6;
	c2 = cpu_ms();
	l = attach_kind(p, BPFRT_PROG_FENTRY_MULTI, "bench_fn_*");
	w3 = (double)bench_now_ns() / 1e6;
	c3 = cpu_ms();
	if (!l)
		return 1;
	printf("first attach %6.1f ms (cpu %5.1f)  detach %5.1f ms (cpu %4.1f)  "
	       "attach again %5.1f ms (cpu %4.1f)\n", w1 - w0, c1 - c0, w2 - w1, c2 - c1,
	       w3 - w2, c3 - c2);
	bpfrt_link_destroy(l);
	bpfrt_prog_free(p);
	return 0;
}

static int multi_attach_run(int argc, char **argv)
{
	int runs = 5, opt, failed = 0;

	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		if (opt == 'n' && atoi(optarg) > 0 && atoi(optarg) <= 64) {
			runs = atoi(optarg);
		} else {
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: bpfrt-bench multi-attach [-n runs (1..64, default 5)]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	printf("multi-attach: fentry.multi on %lu functions, each run in a fresh process\n",
	       bench_fn_count);
	fflush(stdout);
	for (int i = 0; i < runs; i++) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			return 1;
		if (!pid) {
			int rc = multi_attach_child();

			fflush(stdout);
			_exit(rc);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	return failed ? 1 : 0;
}

const struct bench bench_multi_attach = {
	"multi-attach", "first fentry.multi attach of 32,768 functions in a fresh process",
	multi_attach_run,
};
