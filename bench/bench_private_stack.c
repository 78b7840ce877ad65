/* private-stack / no-private-stack: the kernel selftest's private-stack
 * benchmark. A tp/ program on the host tracepoint bench_trigger does
 * --nr-batch-iters rounds of hash lookup/update/delete on 48-byte keys and
 * values per event; hits count
 * rounds (events x batch), as the selftest's do. The two differ only by the
 * load flag BPFRT_F_DISABLE_PRIVATE_STACK. Options as the trigger
 * harness (-w -d -p -a) plus --nr-batch-iters N (default 1). */
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_trigger_tp_func(int id); /* bench_trigger.c: fires bench_trigger */

static long batch_iters = 1;
static bool disable_private_stack;
static long *ps_hits;
static struct bpfrt_object *ps_obj;
static struct bpfrt_link *ps_link;

static int ps_setup(void)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = !getenv("BPFRT_BENCH_INTERP"));
	struct bpfrt_privstack_info info = { .sz = sizeof(info) };
	char path[PATH_MAX + 64];
	struct bpfrt_prog *prog;
	int *iters;
	int err;

	snprintf(path, sizeof(path), "%s/private_stack.bpf.o", bench_default_progs_dir());
	err = bpfrt_object_open(path, NULL, &ps_obj);
	if (err)
		return bench_skip(err, "%s: %s", path, bpfrt_last_error());
	prog = bpfrt_object_find_prog(ps_obj, "stack0");
	iters = bpfrt_object_global(ps_obj, "batch_iters", NULL);
	if (!prog || !iters)
		return bench_skip(-ENOENT, "%s: %s", path, bpfrt_last_error());
	*iters = (int)batch_iters;
	if (disable_private_stack)
		bpfrt_prog_set_flags(prog, bpfrt_prog_flags(prog) | BPFRT_F_DISABLE_PRIVATE_STACK);
	err = bpfrt_object_load(ps_obj, &lo);
	if (err)
		return bench_skip(err, "%s: %s", path, bpfrt_last_error());
	ps_hits = bpfrt_object_global(ps_obj, "hits", NULL);
	bpfrt_prog_privstack_info(prog, &info);
	if (!ps_hits || info.enabled == disable_private_stack)
		return bench_skip(-EINVAL, "private stack %s, wanted %s",
				  info.enabled ? "on" : "off", disable_private_stack ? "off" : "on");
	err = bpfrt_prog_attach(prog, NULL, &ps_link);
	if (err)
		return bench_skip(err, "attach stack0: %s", bpfrt_last_error());
	return 0;
}

static void *ps_producer(void *arg)
{
	for (;;)
		bench_trigger_tp_func(1);
	return NULL;
}

static void ps_measure(struct bench_res *res)
{
	res->hits = (uint64_t)__atomic_exchange_n(ps_hits, 0, __ATOMIC_RELAXED) *
		    (uint64_t)batch_iters;
}

static void ps_teardown(void)
{
	bpfrt_link_destroy(ps_link);
	ps_link = NULL;
}

/* Takes --nr-batch-iters out of argv; the harness parses the rest. */
static int ps_main(const struct bench_harness *h, bool disable, int argc, char **argv)
{
	int out = 0;

	disable_private_stack = disable;
	for (int i = 0; i < argc; i++) {
		const char *v = NULL;

		if (!strncmp(argv[i], "--nr-batch-iters=", 17))
			v = argv[i] + 17;
		else if (!strcmp(argv[i], "--nr-batch-iters") && i + 1 < argc)
			v = argv[++i];
		if (v) {
			batch_iters = strtol(v, NULL, 10);
			if (batch_iters < 1) {
				fprintf(stderr, "--nr-batch-iters: need a number >= 1\n");
				return 2;
			}
			continue;
		}
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	return bench_harness_main(h, out, argv);
}

/* ---- private-stack-ab: both variants in one process, in turn ----------- */

/* Rounds/ns of one trial: prog attached alone, the tracepoint fired on this
 * thread for ms of its CPU time (preemption excluded). */
static double ab_trial(struct bpfrt_prog *prog, long ms)
{
	struct bpfrt_link *link;
	uint64_t t0, t, n = 0;

	if (bpfrt_prog_attach(prog, NULL, &link))
		return -1;
	for (int i = 0; i < 1000; i++) /* warm caches and predictors */
		bench_trigger_tp_func(1);
	__atomic_store_n(ps_hits, 0, __ATOMIC_RELAXED);
	t0 = bench_thread_ns();
	do {
		for (int i = 0; i < 256; i++)
			bench_trigger_tp_func(1);
		n += 256;
		t = bench_thread_ns();
	} while (t - t0 < (uint64_t)ms * 1000000);
	bpfrt_link_destroy(link);
	if ((uint64_t)__atomic_load_n(ps_hits, __ATOMIC_RELAXED) != n)
		return -1; /* the program did not run on every event */
	return (double)n * (double)batch_iters / (double)(t - t0);
}

/* Paired measurement: stack0 (private stack) and stack1 (the same code with
 * BPFRT_F_DISABLE_PRIVATE_STACK) share one map and one address-space layout
 * and are attached in turn (order flipped every round); the figure is the
 * median of the per-round ratios, so drift and layout luck of separate
 * processes cancel out. */
static int ab_run(int argc, char **argv)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = true);
	struct bpfrt_privstack_info i0 = { .sz = sizeof(i0) }, i1 = { .sz = sizeof(i1) };
	struct bpfrt_prog *p0, *p1;
	long rounds = 21, ms = 40;
	char path[PATH_MAX + 64];
	int *iters, err;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--nr-batch-iters=", 17))
			batch_iters = strtol(argv[i] + 17, NULL, 10);
		else if (!strcmp(argv[i], "--nr-batch-iters") && i + 1 < argc)
			batch_iters = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rounds = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			ms = strtol(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: bpfrt-bench private-stack-ab [--nr-batch-iters N] "
					"[-r ROUNDS] [-t MS_PER_TRIAL]\n");
			return 2;
		}
	}
	if (batch_iters < 1 || rounds < 1 || rounds > 1001 || ms < 1) {
		fprintf(stderr, "private-stack-ab: bad option value\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/private_stack.bpf.o", bench_default_progs_dir());
	err = bpfrt_object_open(path, NULL, &ps_obj);
	if (err)
		return bench_skip(err, "%s: %s", path, bpfrt_last_error());
	p0 = bpfrt_object_find_prog(ps_obj, "stack0");
	p1 = bpfrt_object_find_prog(ps_obj, "stack1");
	iters = bpfrt_object_global(ps_obj, "batch_iters", NULL);
	if (!p0 || !p1 || !iters)
		return bench_skip(-ENOENT, "%s: stack0, stack1 or batch_iters missing", path);
	*iters = (int)batch_iters;
	bpfrt_prog_set_flags(p1, bpfrt_prog_flags(p1) | BPFRT_F_DISABLE_PRIVATE_STACK);
	err = bpfrt_object_load(ps_obj, &lo);
	if (err)
		return bench_skip(err, "%s: %s", path, bpfrt_last_error());
	ps_hits = bpfrt_object_global(ps_obj, "hits", NULL);
	bpfrt_prog_privstack_info(p0, &i0);
	bpfrt_prog_privstack_info(p1, &i1);
	if (!ps_hits || !i0.enabled || i1.enabled)
		return bench_skip(-EINVAL, "private stack: stack0 %s, stack1 %s (want on, off)",
				  i0.enabled ? "on" : "off", i1.enabled ? "on" : "off");
	bench_pin_cpu(-1);

	double ratio[1001], rp[1001], rn[1001];

	for (long r = 0; r < rounds; r++) {
		bool priv_first = r & 1;
		double a = ab_trial(priv_first ? p0 : p1, ms);
		double b = ab_trial(priv_first ? p1 : p0, ms);

		rp[r] = priv_first ? a : b;
		rn[r] = priv_first ? b : a;
		if (rp[r] <= 0 || rn[r] <= 0) {
			fprintf(stderr, "private-stack-ab: a trial failed: %s\n", bpfrt_last_error());
			return 1;
		}
		ratio[r] = rp[r] / rn[r];
	}
	struct bench_stats sr, sp, sn;

	bench_stats_of(ratio, (int)rounds, &sr);
	bench_stats_of(rp, (int)rounds, &sp);
	bench_stats_of(rn, (int)rounds, &sn);
	printf("no-private-stack-%ld: %8.3f M/s\n", batch_iters, sn.median * 1e3);
	printf("private-stack-%ld:    %8.3f M/s   (%+.2f%%, paired ratio %.4f, %.4f..%.4f, "
	       "%ld rounds x %ld ms)\n", batch_iters, sp.median * 1e3, (sr.median - 1) * 100,
	       sr.median, sr.min, sr.max, rounds, ms);
	bpfrt_object_close(ps_obj);
	return 0;
}

static const struct bench_harness h_private = {
	.name = "private-stack", .setup = ps_setup, .producer = ps_producer,
	.measure = ps_measure, .teardown = ps_teardown,
};
static const struct bench_harness h_no_private = {
	.name = "no-private-stack", .setup = ps_setup, .producer = ps_producer,
	.measure = ps_measure, .teardown = ps_teardown,
};

static int private_run(int argc, char **argv) { return ps_main(&h_private, false, argc, argv); }
static int no_private_run(int argc, char **argv) { return ps_main(&h_no_private, true, argc, argv); }

const struct bench bench_private_stack = {
	"private-stack", "tp program (Linux's private-stack selftest shape), --nr-batch-iters hash ops, private stack",
	private_run,
};
const struct bench bench_no_private_stack = {
	"no-private-stack", "the same with BPFRT_F_DISABLE_PRIVATE_STACK", no_private_run,
};
const struct bench bench_private_stack_ab = {
	"private-stack-ab", "private-stack vs no-private-stack in one process, paired rounds",
	ab_run,
};
