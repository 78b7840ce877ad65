/* kprobe trigger benchmarks on the harness of bench_trigger.c.
 *
 * Producers call bench_uprobe_push() in a loop: the kernel's uprobe-push
 * row probes the same function (first instruction push %rbp, built without
 * patchable entries), so the rows compare like for like. The attached
 * program increments a counter.
 *   trig-kprobe       int3 mode: SIGTRAP, programs in the signal handler,
 *                     out-of-line copy of push %rbp, jmp back
 *   trig-kprobe-opt   jmp mode: a 5-byte jmp over push; mov %rsp,%rbp to a
 *                     per-probe trampoline
 *   trig-kretprobe    kretprobe (jmp mode entry + return trampoline) */
#define _GNU_SOURCE
#include "bench.h"
#include "../tests/insns.h"
#include "bpfrt/attach.h"
#include "bpfrt/kprobe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

void bench_uprobe_push(void);

static struct {
	long v;
	char pad[120];
} kprobe_ctr __attribute__((aligned(128)));

static struct bpfrt_prog *kp_prog;
static struct bpfrt_link *kp_link;

static int kp_setup(bool ret, enum bpfrt_kprobe_mode mode, bool want_opt)
{
	BPFRT_OPTS(bpfrt_kprobe_opts, o, .retprobe = ret, .mode = mode);

	kp_prog = bench_counter_prog(&kprobe_ctr.v, "bench_kprobe");
	if (!kp_prog)
		return bench_skip(-EINVAL, "cannot load the counter program: %s",
				  bpfrt_last_error());
	if (bpfrt_kprobe_attach(kp_prog, "bench_uprobe_push", 0, &o, &kp_link))
		return bench_skip(-ENOENT, "attach: %s", bpfrt_last_error());
	if (want_opt && !bpfrt_kprobe_optimized(kp_link))
		return bench_skip(-EAGAIN, "the probe stayed in int3 mode");
	return 0;
}

static int kprobe_setup(void) { return kp_setup(false, BPFRT_KPROBE_INT3, false); }
static int kprobe_opt_setup(void) { return kp_setup(false, BPFRT_KPROBE_AUTO, true); }
static int kretprobe_setup(void) { return kp_setup(true, BPFRT_KPROBE_AUTO, false); }

static void *push_producer(void *arg)
{
	for (;;)
		bench_uprobe_push();
	return NULL;
}

static void kp_measure(struct bench_res *res)
{
	res->hits = (uint64_t)__atomic_exchange_n(&kprobe_ctr.v, 0, __ATOMIC_RELAXED);
}

static void kp_teardown(void)
{
	bpfrt_link_destroy(kp_link);
	kp_link = NULL;
}

#define KPROBE_BENCH(var, bname, setup_fn, text)				\
	static const struct bench_harness var##_h = {				\
		.name = bname, .setup = setup_fn, .producer = push_producer,	\
		.measure = kp_measure, .teardown = kp_teardown,			\
	};									\
	static int var##_run(int argc, char **argv)				\
	{									\
		return bench_harness_main(&var##_h, argc, argv);		\
	}									\
	const struct bench var = { bname, text, var##_run }

KPROBE_BENCH(bench_trig_kprobe, "trig-kprobe", kprobe_setup,
	     "kprobe, int3 mode, on a function starting with push %rbp (no padding)");
KPROBE_BENCH(bench_trig_kprobe_opt, "trig-kprobe-opt", kprobe_opt_setup,
	     "kprobe, jmp mode (optimized), on the same function");
KPROBE_BENCH(bench_trig_kretprobe, "trig-kretprobe", kretprobe_setup,
	     "kretprobe (jmp-mode entry, return trampoline) on the same function");
