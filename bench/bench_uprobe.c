/* uprobe trigger benchmarks on the harness of bench_trigger.c: bpfrt's
 * uprobes (bpfrt/uprobe.h, placed by the kprobe engine) on the function the
 * kernel's trig-uprobe-push row probes (bench_uprobe_push, first
 * instruction push %rbp), named as a libbpf user names it: the executable
 * by path and the function by name. The program increments a counter.
 *   trig-bpfrt-uprobe        jmp mode
 *   trig-bpfrt-uprobe-int3   int3 mode (SIGTRAP)
 *   trig-bpfrt-uretprobe     uretprobe (jmp-mode entry, return trampoline) */
#define _GNU_SOURCE
#include "bench.h"
#include "bpfrt/attach.h"
#include "bpfrt/uprobe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

void bench_uprobe_push(void);

static struct {
	long v;
	char pad[120];
} uprobe_ctr __attribute__((aligned(128)));

static struct bpfrt_prog *up_prog;
static struct bpfrt_link *up_link;

static int up_setup(bool ret, enum bpfrt_kprobe_mode mode)
{
	BPFRT_OPTS(bpfrt_uprobe_opts, o, .retprobe = ret, .mode = mode,
		   .func_name = "bench_uprobe_push");

	up_prog = bench_counter_prog(&uprobe_ctr.v, "bench_uprobe");
	if (!up_prog)
		return bench_skip(-EINVAL, "cannot load the counter program: %s",
				  bpfrt_last_error());
	if (bpfrt_uprobe_attach(up_prog, "/proc/self/exe", 0, &o, &up_link))
		return bench_skip(-ENOENT, "attach: %s", bpfrt_last_error());
	return 0;
}

static int uprobe_setup(void) { return up_setup(false, BPFRT_KPROBE_AUTO); }
static int uprobe_int3_setup(void) { return up_setup(false, BPFRT_KPROBE_INT3); }
static int uretprobe_setup(void) { return up_setup(true, BPFRT_KPROBE_AUTO); }

static void *push_producer(void *arg)
{
	for (;;)
		bench_uprobe_push();
	return NULL;
}

static void up_measure(struct bench_res *res)
{
	res->hits = (uint64_t)__atomic_exchange_n(&uprobe_ctr.v, 0, __ATOMIC_RELAXED);
}

static void up_teardown(void)
{
	bpfrt_link_destroy(up_link);
	up_link = NULL;
}

#define UPROBE_BENCH(var, bname, setup_fn, text)				\
	static const struct bench_harness var##_h = {				\
		.name = bname, .setup = setup_fn, .producer = push_producer,	\
		.measure = up_measure, .teardown = up_teardown,			\
	};									\
	static int var##_run(int argc, char **argv)				\
	{									\
		return bench_harness_main(&var##_h, argc, argv);		\
	}									\
	const struct bench var = { bname, text, var##_run }

UPROBE_BENCH(bench_trig_bpfrt_uprobe, "trig-bpfrt-uprobe", uprobe_setup,
	     "bpfrt uprobe (/proc/self/exe:bench_uprobe_push), jmp mode");
UPROBE_BENCH(bench_trig_bpfrt_uprobe_int3, "trig-bpfrt-uprobe-int3", uprobe_int3_setup,
	     "bpfrt uprobe on the same function, int3 mode");
UPROBE_BENCH(bench_trig_bpfrt_uretprobe, "trig-bpfrt-uretprobe", uretprobe_setup,
	     "bpfrt uretprobe on the same function");
