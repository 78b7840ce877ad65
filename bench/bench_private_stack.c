/* private-stack / no-private-stack: the seed's benchmark. A tp/ program on
 * the host tracepoint bench_trigger does --nr-batch-iters rounds of hash
 * lookup/update/delete on 48-byte keys and values per event; hits count
 * rounds (events x batch), as the seed's do. The two differ only by the
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
	struct bpfrt_object_load_opts lo = { .sz = sizeof(lo), .jit = !getenv("BPFRT_BENCH_INTERP") };
	struct bpfrt_privstack_info info;
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
	"private-stack", "seed 000: tp program, --nr-batch-iters hash ops, private stack",
	private_run,
};
const struct bench bench_no_private_stack = {
	"no-private-stack", "the same with BPFRT_F_DISABLE_PRIVATE_STACK", no_private_run,
};
