/* bpfrt-bench entry point: picks a benchmark by name from the registry. */
#include "bench.h"

#include <stdio.h>
#include <string.h>

static const struct bench *const benches[] = {
	&bench_cpu,
	&bench_prog_pack,
	&bench_trig_base,
	&bench_trig_tp_disabled,
	&bench_trig_tp,
	&bench_trig_rawtp,
	&bench_trig_kernel_base,
	&bench_trig_kernel_tp,
	&bench_trig_kernel_rawtp,
	&bench_trig_uprobe_nop5,
	&bench_trig_uprobe_push,
	&bench_trig_uretprobe_push,
	&bench_trig_usdt,
	&bench_trig_fentry,
	&bench_trig_fexit,
	&bench_trig_fmodret,
	&bench_trig_fentry_multi_pad,
	&bench_trig_fentry_multi_hash,
	&bench_trig_kprobe, &bench_trig_kprobe_opt, &bench_trig_kretprobe,
	&bench_trig_bpfrt_uprobe, &bench_trig_bpfrt_uprobe_int3, &bench_trig_bpfrt_uretprobe,
	&bench_trig_bpfrt_uprobe_percpu, &bench_trig_bpfrt_uprobe_2t,
	&bench_trig_bpfrt_usdt, &bench_trig_bpfrt_usdt_noarg,
	&bench_multi_calls,
	&bench_multi_attach,
	&bench_hashmap,
	&bench_private_stack, &bench_no_private_stack, &bench_private_stack_ab,
	&bench_nest_run,
	&bench_helpers,
	&bench_verif,
};

#define BENCH_CNT (sizeof(benches) / sizeof(benches[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: bpfrt-bench BENCHMARK [options]   (BENCHMARK -h for its options)\n"
		   "benchmarks:\n");
	for (size_t i = 0; i < BENCH_CNT; i++)
		fprintf(f, "  %-16s %s\n", benches[i]->name, benches[i]->summary);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "list")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < BENCH_CNT; i++)
		if (!strcmp(argv[1], benches[i]->name))
			return benches[i]->run(argc - 1, argv + 1);
	fprintf(stderr, "bpfrt-bench: unknown benchmark '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
