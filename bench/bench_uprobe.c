/* uprobe trigger benchmarks on the harness of bench_trigger.c: bpfrt's
 * uprobes (bpfrt/uprobe.h, placed by the kprobe engine) on the function the
 * kernel's trig-uprobe-push row probes (bench_uprobe_push, first
 * instruction push %rbp), named as a libbpf user names it: the executable
 * by path and the function by name. The program increments a counter.
 *   trig-bpfrt-uprobe        jmp mode
 *   trig-bpfrt-uprobe-int3   int3 mode (SIGTRAP)
 *   trig-bpfrt-uretprobe     uretprobe (jmp-mode entry, return trampoline)
 *   trig-bpfrt-uprobe-percpu jmp mode, the kernel trigger programs' counter:
 *                            a slot per CPU (bpf_get_smp_processor_id)
 *   trig-bpfrt-uprobe-2t     the same with two producers: no line is
 *                            written by both, so the aggregate rate shows
 *                            what the probe itself shares between threads
 *                            (bench/run_bench_trigger.sh prints the ratio) */
#define _GNU_SOURCE
#include "bench.h"
#include "bpfrt/attach.h"
#include "bpfrt/uprobe.h"
#include "../tests/insns.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

void bench_uprobe_push(void);

static struct {
	long v;
	char pad[120];
} uprobe_ctr __attribute__((aligned(128)));

/* Per-CPU slots of their own cache lines, as the kernel's trigger
 * programs count (bench/progs: hits[cpu & CPU_MASK]). */
#define UP_SLOTS 64
static struct {
	long v;
	char pad[120];
} uprobe_cpu_ctr[UP_SLOTS] __attribute__((aligned(128)));

static struct bpfrt_prog *percpu_counter_prog(void)
{
	_Static_assert(sizeof(uprobe_cpu_ctr[0]) == 128, "a slot is 128 bytes");
	const struct bpf_insn insns[] = {
		CALL_HELPER(BPF_FUNC_get_smp_processor_id),
		ALU64_IMM(BPF_AND, 0, UP_SLOTS - 1),
		ALU64_IMM(BPF_LSH, 0, 7),
		LDDW(1, (uint64_t)(uintptr_t)uprobe_cpu_ctr),
		ALU64_REG(BPF_ADD, 1, 0),
		MOV64_IMM(2, 1),
		ATOMIC(BPF_DW, BPF_ADD, 1, 2, 0),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "bench_uprobe_cpu",
		   .jit = !getenv("BPFRT_BENCH_INTERP"));
	struct bpfrt_prog *p = NULL;

	if (bpfrt_prog_load(insns, ARRAY_LEN(insns), &o, &p)) {
		fprintf(stderr, "load bench_uprobe_cpu: %s\n", bpfrt_last_error());
		return NULL;
	}
	return p;
}

static struct bpfrt_prog *up_prog;
static bool up_percpu;
static struct bpfrt_link *up_link;

static int up_setup(bool ret, enum bpfrt_kprobe_mode mode)
{
	BPFRT_OPTS(bpfrt_uprobe_opts, o, .retprobe = ret, .mode = mode,
		   .func_name = "bench_uprobe_push");

	up_prog = up_percpu ? percpu_counter_prog() : bench_counter_prog(&uprobe_ctr.v, "bench_uprobe");
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
static int uprobe_percpu_setup(void)
{
	up_percpu = true;
	return up_setup(false, BPFRT_KPROBE_AUTO);
}

static void *push_producer(void *arg)
{
	for (;;)
		bench_uprobe_push();
	return NULL;
}

static void up_measure(struct bench_res *res)
{
	res->hits = (uint64_t)__atomic_exchange_n(&uprobe_ctr.v, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < UP_SLOTS; i++)
		res->hits += (uint64_t)__atomic_exchange_n(&uprobe_cpu_ctr[i].v, 0,
							   __ATOMIC_RELAXED);
}

static void up_teardown(void)
{
	bpfrt_link_destroy(up_link);
	up_link = NULL;
}

#define UPROBE_BENCH_P(var, bname, setup_fn, nprod, text)			\
	static const struct bench_harness var##_h = {				\
		.name = bname, .setup = setup_fn, .producer = push_producer,	\
		.measure = up_measure, .teardown = up_teardown,			\
		.producers = nprod,						\
	};									\
	static int var##_run(int argc, char **argv)				\
	{									\
		return bench_harness_main(&var##_h, argc, argv);		\
	}									\
	const struct bench var = { bname, text, var##_run }
#define UPROBE_BENCH(var, bname, setup_fn, text) UPROBE_BENCH_P(var, bname, setup_fn, 1, text)

UPROBE_BENCH(bench_trig_bpfrt_uprobe, "trig-bpfrt-uprobe", uprobe_setup,
	     "bpfrt uprobe (/proc/self/exe:bench_uprobe_push), jmp mode");
UPROBE_BENCH(bench_trig_bpfrt_uprobe_int3, "trig-bpfrt-uprobe-int3", uprobe_int3_setup,
	     "bpfrt uprobe on the same function, int3 mode");
UPROBE_BENCH(bench_trig_bpfrt_uretprobe, "trig-bpfrt-uretprobe", uretprobe_setup,
	     "bpfrt uretprobe on the same function");
UPROBE_BENCH(bench_trig_bpfrt_uprobe_percpu, "trig-bpfrt-uprobe-percpu", uprobe_percpu_setup,
	     "bpfrt uprobe, jmp mode, counting in a slot per CPU");
UPROBE_BENCH_P(bench_trig_bpfrt_uprobe_2t, "trig-bpfrt-uprobe-2t", uprobe_percpu_setup, 2,
	       "bpfrt uprobe, jmp mode, a slot per CPU, two producers");
