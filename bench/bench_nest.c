/* nest-run: what a nested run costs. A parent program calls the
 * nest kfunc (bpfrt_run_children), which runs a list of 16 copies of a
 * one-instruction child through bpfrt_prog_run; the child either has no
 * private stack (its nested JIT runs switch to the thread's nest stack for
 * that level) or is forced onto one. ns per nested run = (parent run with
 * the list - parent run with an empty list) / 16, next to a top-level run
 * of the same child. The modes alternate in short trials (thread CPU time)
 * and each figure is the median over the rounds. */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEST_CHILDREN 16

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off,
				  .imm = imm };
}

static struct bpfrt_prog *load(const struct bpf_insn *insns, size_t cnt, const char *name,
			       uint32_t flags)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = name, .jit = true,
		   .flags = flags);
	struct bpfrt_prog *p = NULL;

	if (bpfrt_prog_load(insns, cnt, &o, &p)) {
		fprintf(stderr, "nest-run: load %s: %s\n", name, bpfrt_last_error());
		return NULL;
	}
	return p;
}

/* ns per run of prog over ms of this thread's CPU time. */
static double time_runs(struct bpfrt_prog *prog, long ms)
{
	uint64_t t0, t, n = 0, r0;

	for (int i = 0; i < 1000; i++)
		bpfrt_prog_run(prog, BPFRT_EXEC_JIT, 0, 0, &r0);
	t0 = bench_thread_ns();
	do {
		for (int i = 0; i < 256; i++)
			if (bpfrt_prog_run(prog, BPFRT_EXEC_JIT, 0, 0, &r0))
				return -1;
		n += 256;
		t = bench_thread_ns();
	} while (t - t0 < (uint64_t)ms * 1000000);
	return (double)(t - t0) / (double)n;
}

static int nest_run(int argc, char **argv)
{
	long rounds = 15, ms = 30;
	int id, err = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rounds = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			ms = strtol(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: bpfrt-bench nest-run [-r ROUNDS] [-t MS_PER_TRIAL]\n");
			return 2;
		}
	}
	if (rounds < 1 || rounds > 1001 || ms < 1) {
		fprintf(stderr, "nest-run: bad option value\n");
		return 2;
	}
	id = bpfrt_nest_kfunc_register();
	if (id < 0)
		return bench_skip(id, "nest kfunc: %s", bpfrt_last_error());

	const struct bpf_insn child_insns[] = {
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
		insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	/* r0 = bpfrt_run_children(list, 0) for list 0 (16 children) and 1 (empty) */
	struct bpf_insn parent_insns[2][4];

	for (int l = 0; l < 2; l++) {
		parent_insns[l][0] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, l);
		parent_insns[l][1] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0);
		parent_insns[l][2] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, id);
		parent_insns[l][3] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	}
	struct bpfrt_prog *child = load(child_insns, 2, "child", 0);
	struct bpfrt_prog *child_ps = load(child_insns, 2, "child_ps", BPFRT_F_PRIVATE_STACK);
	struct bpfrt_prog *full = load(parent_insns[0], 4, "parent", 0);
	struct bpfrt_prog *empty = load(parent_insns[1], 4, "parent_empty", 0);
	struct bpfrt_prog *list[NEST_CHILDREN];
	struct bpfrt_privstack_info pi0 = { .sz = sizeof(pi0) }, pi1 = { .sz = sizeof(pi1) };
	double t_top[1001], t_sw[1001], t_ps[1001], t_empty[1001];
	uint64_t r0;

	if (!child || !child_ps || !full || !empty)
		goto out;
	bpfrt_prog_privstack_info(child, &pi0);
	bpfrt_prog_privstack_info(child_ps, &pi1);
	if (pi0.enabled || !pi1.enabled) {
		fprintf(stderr, "nest-run: private stacks: child %d, child_ps %d (want 0, 1)\n",
			pi0.enabled, pi1.enabled);
		goto out;
	}
	if (bpfrt_nest_set_children(1, NULL, 0))
		goto fail;
	bench_pin_cpu(-1);
	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < NEST_CHILDREN; k++)
			list[k] = child;
		if (bpfrt_nest_set_children(0, list, NEST_CHILDREN))
			goto fail;
		if (bpfrt_prog_run(full, BPFRT_EXEC_JIT, 0, 0, &r0) || r0 != NEST_CHILDREN) {
			fprintf(stderr, "nest-run: parent returned %llu\n", (unsigned long long)r0);
			goto out;
		}
		t_sw[r] = time_runs(full, ms);
		t_empty[r] = time_runs(empty, ms);
		for (int k = 0; k < NEST_CHILDREN; k++)
			list[k] = child_ps;
		if (bpfrt_nest_set_children(0, list, NEST_CHILDREN))
			goto fail;
		t_ps[r] = time_runs(full, ms);
		t_top[r] = time_runs(child, ms);
		if (t_sw[r] < 0 || t_empty[r] < 0 || t_ps[r] < 0 || t_top[r] < 0)
			goto fail;
		t_sw[r] = (t_sw[r] - t_empty[r]) / NEST_CHILDREN;
		t_ps[r] = (t_ps[r] - t_empty[r]) / NEST_CHILDREN;
	}
	struct bench_stats s_top, s_sw, s_ps, s_empty;

	bench_stats_of(t_top, (int)rounds, &s_top);
	bench_stats_of(t_sw, (int)rounds, &s_sw);
	bench_stats_of(t_ps, (int)rounds, &s_ps);
	bench_stats_of(t_empty, (int)rounds, &s_empty);
	printf("nest-run (ns per run, median of %ld rounds x %ld ms per trial):\n", rounds, ms);
	printf("  top-level bpfrt_prog_run, JIT:                   %6.2f\n", s_top.median);
	printf("  parent with an empty child list:                 %6.2f\n", s_empty.median);
	printf("  nested run, no private stack (nest stack switch): %6.2f (%.2f..%.2f)\n",
	       s_sw.median, s_sw.min, s_sw.max);
	printf("  nested run, private stack:                        %6.2f (%.2f..%.2f)\n",
	       s_ps.median, s_ps.min, s_ps.max);
	err = 0;
	goto out;
fail:
	fprintf(stderr, "nest-run: %s\n", bpfrt_last_error());
out:
	bpfrt_nest_set_children(0, NULL, 0);
	bpfrt_prog_free(full);
	bpfrt_prog_free(empty);
	bpfrt_prog_free(child);
	bpfrt_prog_free(child_ps);
	return err;
}

const struct bench bench_nest_run = {
	"nest-run", "nested bpfrt_prog_run through the nest kfunc: nest-stack switch vs private stack",
	nest_run,
};
