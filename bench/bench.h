/* bpfrt-bench: benchmarks by name, shaped like the kernel selftests'
 * `bench` (tools/testing/selftests/bpf/bench). Each benchmark is a struct
 * bench in the registry of bench.c; `bpfrt-bench NAME [options]` runs it. */
#ifndef BPFRT_BENCH_H
#define BPFRT_BENCH_H

#include "bpfrt/bpfrt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench {
	const char *name;
	const char *summary;
	/* argv[0] is the benchmark's name; returns the process exit code. */
	int (*run)(int argc, char **argv);
};

/* The registry (bench.c). Add new benchmarks there. */
extern const struct bench bench_cpu;
extern const struct bench bench_prog_pack;
extern const struct bench bench_hashmap;

/* ---- shared utilities (util.c) ---------------------------------------- */
uint64_t bench_now_ns(void);
/* CPU time of the calling thread: excludes time preempted by other load,
 * as the kernel's BPF_PROG_TEST_RUN timer does. */
uint64_t bench_thread_ns(void);

/* Median, range and 10%-trimmed mean of n samples (sorted in place). */
struct bench_stats {
	double median;
	double min;
	double max;
	double tmean; /* mean without the lowest and highest n/10 samples */
};
void bench_stats_of(double *samples, int n, struct bench_stats *out);
/* Half the min-max range as a percentage of the median. */
double bench_spread_pct(const struct bench_stats *s);

/* Pins the calling thread to cpu (or, if cpu < 0, to the one it is on now,
 * so timings do not include migrations). Returns the CPU or -errno. */
int bench_pin_cpu(int cpu);

/* Where `make` put the benchmark programs: <dir of this binary>/bench/progs. */
const char *bench_default_progs_dir(void);

/* Copies the instructions of program prog_name out of the BPF ELF object
 * at path: as they are in the ELF (libbpf, unrelocated) or, when the
 * program makes local calls, linked with its subprograms (bpfrt's object
 * loader). No maps. Returns 0 with a malloc'd array, or -errno with a
 * message on stderr. */
int bench_load_obj_insns(const char *path, const char *prog_name,
			 struct bpf_insn **insns, size_t *cnt);

/* Reads one integer from a /proc/sys file, or returns -1. */
long bench_read_sysctl(const char *path);

/* Geometric mean of the positive values among n (0 if there are none). */
double bench_geomean(const double *v, int n);

#endif
