/* Utilities the benchmarks share: clocks, statistics, CPU pinning and
 * reading instructions out of BPF ELF objects. */
#define _GNU_SOURCE
#include "bench.h"
#include "../tests/insns.h"
#include "bpfrt/object.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bench_thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_stats_of(double *samples, int n, struct bench_stats *out)
{
	int trim = n / 10;
	double sum = 0;

	if (n <= 0) {
		out->median = out->min = out->max = out->tmean = 0;
		return;
	}
	qsort(samples, (size_t)n, sizeof(*samples), cmp_double);
	out->min = samples[0];
	out->max = samples[n - 1];
	out->median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	for (int i = trim; i < n - trim; i++)
		sum += samples[i];
	out->tmean = sum / (n - 2 * trim);
}

double bench_spread_pct(const struct bench_stats *s)
{
	return s->median > 0 ? 100.0 * (s->max - s->min) / (2 * s->median) : 0;
}

int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return cpu;
}

const char *bench_default_progs_dir(void)
{
	static char dir[PATH_MAX + 32];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return "bench/progs";
	exe[n] = '\0';
	snprintf(dir, sizeof(dir), "%s/bench/progs", dirname(exe));
	return dir;
}

static bool has_local_calls(const struct bpf_insn *insns, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++)
		if (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == BPF_PSEUDO_CALL)
			return true;
	return false;
}

/* Before load, libbpf's bpf_program__insns() lacks the subprograms that
 * local calls reach (it appends them when it loads into the kernel), so
 * such programs are linked by bpfrt's own object loader instead. */
static int load_linked_insns(const char *path, const char *prog_name,
			     struct bpf_insn **insns, size_t *cnt)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo);
	struct bpfrt_object *obj;
	const struct bpf_insn *linked;
	struct bpfrt_prog *prog;
	int err;

	err = bpfrt_object_open(path, NULL, &obj);
	if (err) {
		fprintf(stderr, "bpfrt-bench: %s: %s\n", path, bpfrt_last_error());
		return err;
	}
	err = bpfrt_object_load(obj, &lo);
	if (err) {
		fprintf(stderr, "bpfrt-bench: %s: %s\n", path, bpfrt_last_error());
		goto out;
	}
	prog = bpfrt_object_find_prog(obj, prog_name);
	if (!prog) {
		fprintf(stderr, "bpfrt-bench: %s: no program '%s'\n", path, prog_name);
		err = -ENOENT;
		goto out;
	}
	linked = bpfrt_prog_insns(prog, cnt);
	*insns = malloc(*cnt * sizeof(**insns));
	if (!*insns) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(*insns, linked, *cnt * sizeof(**insns));
out:
	bpfrt_object_close(obj);
	return err;
}

int bench_load_obj_insns(const char *path, const char *prog_name,
			 struct bpf_insn **insns, size_t *cnt)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int err = 0;

	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		err = -errno;
		fprintf(stderr, "bpfrt-bench: %s: cannot open BPF object: %s\n", path, strerror(errno));
		return err;
	}
	prog = bpf_object__find_program_by_name(obj, prog_name);
	if (!prog) {
		fprintf(stderr, "bpfrt-bench: %s: no program '%s'\n", path, prog_name);
		err = -ENOENT;
		goto out;
	}
	*cnt = bpf_program__insn_cnt(prog);
	if (has_local_calls(bpf_program__insns(prog), *cnt)) {
		bpf_object__close(obj);
		return load_linked_insns(path, prog_name, insns, cnt);
	}
	*insns = malloc(*cnt * sizeof(**insns));
	if (!*insns) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(*insns, bpf_program__insns(prog), *cnt * sizeof(**insns));
out:
	bpf_object__close(obj);
	return err;
}

long bench_read_sysctl(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

double bench_geomean(const double *v, int n)
{
	double log_sum = 0;
	int used = 0;

	for (int i = 0; i < n; i++) {
		if (v[i] > 0) {
			log_sum += log(v[i]);
			used++;
		}
	}
	return used ? exp(log_sum / used) : 0;
}

struct bpfrt_prog *bench_counter_prog(long *hits, const char *name)
{
	const struct bpf_insn insns[] = {
		LDDW(1, (uint64_t)(uintptr_t)hits),
		MOV64_IMM(2, 1),
		ATOMIC(BPF_DW, BPF_ADD, 1, 2, 0),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = name,
		   .jit = !getenv("BPFRT_BENCH_INTERP"));
	struct bpfrt_prog *p = NULL;
	bool empty = getenv("BENCH_EMPTY_PROG") != NULL;

	if (bpfrt_prog_load(empty ? insns + 4 : insns, empty ? 2 : ARRAY_LEN(insns), &o, &p)) {
		fprintf(stderr, "load %s: %s\n", name, bpfrt_last_error());
		return NULL;
	}
	return p;
}
