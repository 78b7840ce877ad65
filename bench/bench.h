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
/* Trigger benchmarks (bench_trigger.c). */
extern const struct bench bench_trig_base, bench_trig_tp_disabled, bench_trig_tp,
	bench_trig_rawtp, bench_trig_kernel_base, bench_trig_kernel_tp,
	bench_trig_kernel_rawtp, bench_trig_uprobe_nop5, bench_trig_uprobe_push,
	bench_trig_uretprobe_push;
extern const struct bench bench_hashmap;
extern const struct bench bench_helpers; /* bench_helpers.c */
extern const struct bench bench_private_stack, bench_no_private_stack, bench_private_stack_ab,
	bench_nest_run;
/* fentry/fexit/fmod_ret/fentry.multi (bench_fentry.c). */
extern const struct bench bench_trig_fentry, bench_trig_fexit, bench_trig_fmodret,
	bench_trig_fentry_multi_pad, bench_trig_fentry_multi_hash, bench_multi_calls,
	bench_multi_attach;
/* kprobes (bench_kprobe.c). */
extern const struct bench bench_trig_kprobe, bench_trig_kprobe_opt, bench_trig_kretprobe;
extern const struct bench bench_trig_bpfrt_uprobe, bench_trig_bpfrt_uprobe_int3,
	bench_trig_bpfrt_uretprobe, bench_trig_bpfrt_uprobe_percpu, bench_trig_bpfrt_uprobe_2t;
/* USDT: bpfrt's (bench_usdt.c) and the kernel's on the same site
 * (bench_trigger.c). */
extern const struct bench bench_trig_bpfrt_usdt, bench_trig_bpfrt_usdt_noarg, bench_trig_usdt;
void bench_usdt_site(long x);

/* The verifier, bpfrt's beside the kernel's (bench_verif.c). */
extern const struct bench bench_verif;

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

/* hits += 1 (an atomic add); return 0: the counter program the trigger
 * benchmarks attach (0 lets fmod_ret run the original). JIT unless
 * BPFRT_BENCH_INTERP; BENCH_EMPTY_PROG=1 loads an empty program (r0 = 0;
 * exit, the one kfunc_md_test's fentry benchmark attaches) instead. NULL
 * with a message on stderr. */
struct bpfrt_prog *bench_counter_prog(long *hits, const char *name);

/* Geometric mean of the positive values among n (0 if there are none). */
double bench_geomean(const double *v, int n);

/* ---- producer/consumer harness (bench_trigger.c) --------------------- */
/* As the kernel's bench: `-w warmup_s -d duration_s -p producers
 * -c consumers -a`, a progress line per second, then
 * "Summary: hits X ± Y M/s (Z M/prod), drops ...". */
struct bench_env {
	int warmup_s, duration_s, producers, consumers;
	bool affinity;
};
extern struct bench_env bench_env;

struct bench_res {
	uint64_t hits, drops;
};

struct bench_harness {
	const char *name;
	/* Loads and attaches; returns 0 or bench_skip()'s value (the
	 * benchmark then prints "Skipped: REASON" and exits 0). May be NULL. */
	int (*setup)(void);
	/* Thread body, arg = producer index; loops forever (the process
	 * exits under it, as in the kernel's bench). */
	void *(*producer)(void *arg);
	/* Events since the last call (swap the counters to 0). */
	void (*measure)(struct bench_res *res);
	void (*teardown)(void);           /* may be NULL */
	int producers;                    /* without -p (0: 1) */
};

/* Parses the options, runs h, prints progress and summary; exits. */
int bench_harness_main(const struct bench_harness *h, int argc, char **argv);
/* Records why a benchmark cannot run (printed as "Skipped: ..."); returns
 * err (negative) for setup() to return. */
int bench_skip(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern char bench_skip_reason[256];
/* Loads bench/progs/OBJ_FILE with bpfrt (JIT unless BPFRT_BENCH_INTERP is
 * set), attaches prog_name and returns its `hits` global. 0 or
 * bench_skip()'s value. */
struct bpfrt_link;
int bench_bpfrt_attach(const char *obj_file, const char *prog_name, long **hits,
		       struct bpfrt_object **obj, struct bpfrt_link **link);

#endif
