/* Trigger benchmarks (base/tp/rawtp/kprobe/fentry/fmodret, "X ± Y M/s") and
 * the producer/consumer harness they run in, shaped like the kernel
 * selftests' bench:
 *
 *   bpfrt-bench trig-NAME [-w warmup_s] [-d duration_s] [-p producers]
 *                         [-c consumers] [-a]
 *
 * Producers call a host function in a tight loop; the program attached to
 * it increments a `hits` global (__sync_fetch_and_add), which the main
 * thread swaps to 0 once a second and prints as a progress line; after the
 * warm-up seconds, the mean and standard deviation of the per-second rates
 * make the summary line:
 *
 *   Summary: hits X ± Y M/s (Z M/prod), drops 0.000 ± 0.000 M/s
 *
 * Benchmarks here: trig-base (no tracepoint, the producer counts),
 * trig-tp-disabled (a BPFRT_TRACEPOINT with nothing attached, the producer
 * counts), trig-tp, trig-rawtp (bpfrt programs on the host tracepoint), and
 * the kernel side by side (root): trig-kernel-base (getpgid syscall),
 * trig-kernel-tp (tp/syscalls/sys_enter_getpgid), trig-kernel-rawtp
 * (raw_tp/sys_enter filtered on getpgid), trig-uprobe-nop5 and
 * trig-uprobe-push (a uprobe on a user function whose first instruction is
 * a 5-byte nop or push %rbp). Benchmarks the kernel refuses print
 * "Skipped: REASON" instead of a summary. */
#define _GNU_SOURCE
#include "bench.h"
#include "bpfrt/tracepoint.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- harness ---------------------------------------------------------- */

struct bench_env bench_env = {
	.warmup_s = 1,
	.duration_s = 5,
	.producers = 1,
	.consumers = 1,
};

static void harness_usage(FILE *f, const char *name)
{
	fprintf(f, "usage: bpfrt-bench %s [-w warmup_s] [-d duration_s] [-p producers] "
		   "[-c consumers] [-a]\n"
		   "  -w N  seconds of warm-up, not in the summary (default 1)\n"
		   "  -d N  seconds measured (default 5)\n"
		   "  -p N  producer threads (default 1, 2 for the -2t rows)\n"
		   "  -c N  consumer threads (default 1; trigger benchmarks have none)\n"
		   "  -a    pin producers (then consumers) to CPUs 0, 1, ... in turn\n", name);
}

static int parse_env(int argc, char **argv)
{
	int opt;

	optind = 1;
	while ((opt = getopt(argc, argv, "w:d:p:c:ah")) != -1) {
		switch (opt) {
		case 'w': bench_env.warmup_s = atoi(optarg); break;
		case 'd': bench_env.duration_s = atoi(optarg); break;
		case 'p': bench_env.producers = atoi(optarg); break;
		case 'c': bench_env.consumers = atoi(optarg); break;
		case 'a': bench_env.affinity = true; break;
		case 'h': harness_usage(stdout, argv[0]); exit(0);
		default: harness_usage(stderr, argv[0]); return -EINVAL;
		}
	}
	if (bench_env.warmup_s < 0 || bench_env.duration_s < 1 || bench_env.producers < 1 ||
	    bench_env.consumers < 0 || optind != argc) {
		harness_usage(stderr, argv[0]);
		return -EINVAL;
	}
	return 0;
}

static int next_cpu;

static void set_affinity(pthread_t t)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(next_cpu++ % (ncpu > 0 ? ncpu : 1), &set);
	pthread_setaffinity_np(t, sizeof(set), &set);
}

static double now_s(void)
{
	return bench_now_ns() * 1e-9;
}

/* Summed CPU time of the producer threads, in seconds. */
static double producers_cpu_s(const clockid_t *clocks)
{
	double sum = 0;

	for (int i = 0; i < bench_env.producers; i++) {
		struct timespec ts;

		if (clocks[i] != (clockid_t)-1 && !clock_gettime(clocks[i], &ts))
			sum += ts.tv_sec + ts.tv_nsec * 1e-9;
	}
	return sum;
}

int bench_harness_main(const struct bench_harness *h, int argc, char **argv)
{
	struct bench_res res;
	double *rates, mean = 0, var = 0, start, next, last;
	double *cpu_rates, cpu_mean = 0, cpu_var = 0, cpu_last;
	clockid_t *clocks;
	int iters, measured = 0, err;

	bench_env.producers = h->producers > 0 ? h->producers : 1;
	if (parse_env(argc, argv))
		return 2;
	iters = bench_env.warmup_s + bench_env.duration_s;
	printf("Setting up benchmark '%s'...\n", h->name);
	fflush(stdout);
	if (h->setup && (err = h->setup())) {
		/* setup printed why on stderr; the last line says it too */
		printf("Skipped: %s\n", bench_skip_reason[0] ? bench_skip_reason : strerror(-err));
		return 0;
	}
	rates = calloc(iters, sizeof(*rates));
	if (!rates)
		return 1;
	printf("Benchmark '%s' started.\n", h->name);
	fflush(stdout);
	clocks = calloc(bench_env.producers, sizeof(*clocks));
	cpu_rates = calloc(iters, sizeof(*cpu_rates));
	if (!clocks || !cpu_rates)
		return 1;
	for (long i = 0; i < bench_env.producers; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, h->producer, (void *)i)) {
			fprintf(stderr, "cannot start producer %ld\n", i);
			return 1;
		}
		if (bench_env.affinity)
			set_affinity(t);
		if (pthread_getcpuclockid(t, &clocks[i]))
			clocks[i] = (clockid_t)-1;
	}
	if (h->measure)
		h->measure(&res); /* discard what came before the clock starts */
	start = last = now_s();
	cpu_last = producers_cpu_s(clocks);
	for (int it = 0; it < iters; it++) {
		struct timespec ts;
		double t, secs, cpu;

		next = start + it + 1;
		while ((t = now_s()) < next) {
			double left = next - t;

			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
		memset(&res, 0, sizeof(res));
		h->measure(&res);
		secs = t - last;
		last = t;
		rates[it] = res.hits / secs / 1e6;
		/* Per producer CPU-second: what preemption by other load on the
		 * machine does not change. */
		cpu = producers_cpu_s(clocks);
		cpu_rates[it] = cpu > cpu_last ? res.hits / (cpu - cpu_last) / 1e6 : 0;
		cpu_last = cpu;
		printf("Iter %3d (%7.3lfus): hits %8.3lfM/s (%7.3lfM/prod), drops %8.3lfM/s%s\n",
		       it, (t - next) * 1e6, rates[it], rates[it] / bench_env.producers,
		       res.drops / secs / 1e6, it < bench_env.warmup_s ? " (warm-up)" : "");
		fflush(stdout);
	}
	for (int it = bench_env.warmup_s; it < iters; it++, measured++) {
		mean += rates[it];
		cpu_mean += cpu_rates[it];
	}
	mean /= measured;
	cpu_mean /= measured;
	for (int it = bench_env.warmup_s; it < iters; it++) {
		var += (rates[it] - mean) * (rates[it] - mean);
		cpu_var += (cpu_rates[it] - cpu_mean) * (cpu_rates[it] - cpu_mean);
	}
	var = measured > 1 ? var / (measured - 1) : 0;
	cpu_var = measured > 1 ? cpu_var / (measured - 1) : 0;
	if (h->teardown)
		h->teardown();
	printf("Per producer CPU-second: hits %8.3lf \u00b1 %5.3lfM/s (%.2f ns/event)\n",
	       cpu_mean, sqrt(cpu_var), cpu_mean > 0 ? 1e3 / cpu_mean : 0.0);
	printf("Summary: hits %8.3lf \u00b1 %5.3lfM/s (%7.3lfM/prod), drops %8.3lf \u00b1 %5.3lfM/s\n",
	       mean, sqrt(var), mean / bench_env.producers, 0.0, 0.0);
	free(rates);
	free(cpu_rates);
	free(clocks);
	fflush(stdout);
	/* Producers run until the process exits, as in the kernel's bench. */
	_exit(0);
}

char bench_skip_reason[256];

int bench_skip(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(bench_skip_reason, sizeof(bench_skip_reason), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", bench_skip_reason);
	return err < 0 ? err : -EINVAL;
}

/* ---- host side: bpfrt programs on a host tracepoint ------------------- */

BPFRT_DECLARE_TRACEPOINT(bench_trigger, int id);
BPFRT_DEFINE_TRACEPOINT(bench_trigger);

/* What the producers call. The two differ only by the tracepoint. */
__attribute__((noinline)) void bench_trigger_base_func(int id)
{
	__asm__ volatile("" : : "r"(id) : "memory");
}

/* Disabled: "nop5; ret" (the firing call is in .text.unlikely). */
__attribute__((noinline)) void bench_trigger_tp_func(int id)
{
	BPFRT_TRACEPOINT(bench_trigger, id);
}

static _Atomic long base_hits;
static long *prog_hits;        /* the attached program's `hits` */
static struct bpfrt_object *trig_obj;
static struct bpfrt_link *trig_link;

static void *base_producer(void *arg)
{
	for (;;) {
		bench_trigger_base_func(1);
		atomic_fetch_add_explicit(&base_hits, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *tp_disabled_producer(void *arg)
{
	for (;;) {
		bench_trigger_tp_func(1);
		atomic_fetch_add_explicit(&base_hits, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *tp_producer(void *arg)
{
	for (;;)
		bench_trigger_tp_func(1);
	return NULL;
}

static void base_measure(struct bench_res *res)
{
	res->hits = atomic_exchange(&base_hits, 0);
}

static void prog_measure(struct bench_res *res)
{
	res->hits = __atomic_exchange_n(prog_hits, 0, __ATOMIC_RELAXED);
}

int bench_bpfrt_attach(const char *obj_file, const char *prog_name, long **hits,
		       struct bpfrt_object **objp, struct bpfrt_link **linkp)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = !getenv("BPFRT_BENCH_INTERP"));
	char path[PATH_MAX + 64];
	struct bpfrt_prog *prog;
	int err;

	snprintf(path, sizeof(path), "%s/%s", bench_default_progs_dir(), obj_file);
	err = bpfrt_object_open(path, NULL, objp);
	if (!err)
		err = bpfrt_object_load(*objp, &lo);
	if (err)
		return bench_skip(err, "%s: %s", path, bpfrt_last_error());
	*hits = bpfrt_object_global(*objp, "hits", NULL);
	prog = bpfrt_object_find_prog(*objp, prog_name);
	if (!*hits || !prog)
		return bench_skip(-ENOENT, "%s: %s", path, bpfrt_last_error());
	err = bpfrt_prog_attach(prog, NULL, linkp);
	if (err)
		return bench_skip(err, "attach %s: %s", prog_name, bpfrt_last_error());
	return 0;
}

static int tp_setup(void)
{
	return bench_bpfrt_attach("trigger.bpf.o", "bench_trigger_tp", &prog_hits, &trig_obj,
				  &trig_link);
}

static int rawtp_setup(void)
{
	return bench_bpfrt_attach("trigger.bpf.o", "bench_trigger_rawtp", &prog_hits, &trig_obj,
				  &trig_link);
}

static void bpfrt_teardown(void)
{
	bpfrt_link_destroy(trig_link);
	trig_link = NULL;
}

static const struct bench_harness h_base = {
	.name = "trig-base", .producer = base_producer, .measure = base_measure,
};
static const struct bench_harness h_tp_disabled = {
	.name = "trig-tp-disabled", .producer = tp_disabled_producer, .measure = base_measure,
};
static const struct bench_harness h_tp = {
	.name = "trig-tp", .setup = tp_setup, .producer = tp_producer,
	.measure = prog_measure, .teardown = bpfrt_teardown,
};
static const struct bench_harness h_rawtp = {
	.name = "trig-rawtp", .setup = rawtp_setup, .producer = tp_producer,
	.measure = prog_measure, .teardown = bpfrt_teardown,
};

/* ---- kernel side (libbpf) --------------------------------------------- */

/* Uprobe targets with a known first instruction. */
__asm__(".text\n"
	".globl bench_uprobe_nop5\n"
	".type bench_uprobe_nop5, @function\n"
	".p2align 4\n"
	"bench_uprobe_nop5:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	ret\n"
	".size bench_uprobe_nop5, .-bench_uprobe_nop5\n"
	".globl bench_uprobe_push\n"
	".type bench_uprobe_push, @function\n"
	".p2align 4\n"
	"bench_uprobe_push:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size bench_uprobe_push, .-bench_uprobe_push\n");
void bench_uprobe_nop5(void);
void bench_uprobe_push(void);

static struct bpf_object *kobj;
static struct bpf_link *klink;

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("BPFRT_BENCH_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static bool tracefs_mounted(void)
{
	struct stat st;

	return !stat("/sys/kernel/tracing/events", &st) ||
	       !stat("/sys/kernel/debug/tracing/events", &st);
}

/* usdt_probe "PROVIDER:NAME": the program is a USDT one of usdt_bench.bpf.o,
 * attached with libbpf's bpf_program__attach_usdt to this executable. */
static int kernel_setup_any(const char *obj_file, const char *prog_name, const char *uprobe_func,
			    bool retprobe, const char *usdt_provider, const char *usdt_name)
{
	char path[PATH_MAX + 64];
	struct bpf_program *prog;
	struct bpf_map *bss;
	size_t size;
	int err;

	if (geteuid() != 0)
		return bench_skip(-EPERM, "kernel side needs root (BPF_PROG_LOAD)");
	libbpf_set_print(libbpf_quiet);
	snprintf(path, sizeof(path), "%s/%s", bench_default_progs_dir(), obj_file);
	kobj = bpf_object__open_file(path, NULL);
	if (!kobj)
		return bench_skip(-errno, "%s: %s", path, strerror(errno));
	/* Load only the program this benchmark uses. */
	bpf_object__for_each_program(prog, kobj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), prog_name));
	err = bpf_object__load(kobj);
	if (err)
		return bench_skip(err, "kernel refused %s: %s", prog_name, strerror(-err));
	prog = bpf_object__find_program_by_name(kobj, prog_name);
	bss = bpf_object__find_map_by_name(kobj, ".bss");
	if (!prog || !bss)
		return bench_skip(-ENOENT, "%s: no program %s or .bss", path, prog_name);
	/* The live counter: libbpf maps global data over the kernel's only in
	 * skeleton loads, so map the .bss array ourselves. */
	size = (size_t)sysconf(_SC_PAGESIZE);
	prog_hits = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(bss), 0);
	if (prog_hits == MAP_FAILED)
		return bench_skip(-errno, "%s: cannot mmap .bss: %s", path, strerror(errno));
	if (!uprobe_func && strstr(bpf_program__section_name(prog), "tp/") ==
	    bpf_program__section_name(prog) && !tracefs_mounted())
		return bench_skip(-ENOENT, "tracefs is not mounted (mount -t tracefs nodev "
				  "/sys/kernel/tracing): the kernel cannot find the tracepoint id");
	if (usdt_provider) {
		klink = bpf_program__attach_usdt(prog, getpid(), "/proc/self/exe", usdt_provider,
						 usdt_name, NULL);
	} else if (uprobe_func) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = uprobe_func, .retprobe = retprobe);

		klink = bpf_program__attach_uprobe_opts(prog, 0, "/proc/self/exe", 0, &uo);
	} else {
		klink = bpf_program__attach(prog);
	}
	if (!klink)
		return bench_skip(-errno, "kernel refused to attach %s: %s", prog_name,
				  strerror(errno));
	return 0;
}

static int kernel_setup_ret(const char *prog_name, const char *uprobe_func, bool retprobe)
{
	return kernel_setup_any("trigger_kernel.bpf.o", prog_name, uprobe_func, retprobe, NULL,
				NULL);
}

static int kernel_setup(const char *prog_name, const char *uprobe_func)
{
	return kernel_setup_ret(prog_name, uprobe_func, false);
}

static void kernel_teardown(void)
{
	bpf_link__destroy(klink);
	klink = NULL;
}

static void *getpgid_base_producer(void *arg)
{
	for (;;) {
		(void)syscall(__NR_getpgid);
		atomic_fetch_add_explicit(&base_hits, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *getpgid_producer(void *arg)
{
	for (;;)
		(void)syscall(__NR_getpgid);
	return NULL;
}

static void *uprobe_nop5_producer(void *arg)
{
	for (;;)
		bench_uprobe_nop5();
	return NULL;
}

static void *uprobe_push_producer(void *arg)
{
	for (;;)
		bench_uprobe_push();
	return NULL;
}

static void *usdt_producer(void *arg)
{
	for (long i = 0;; i++)
		bench_usdt_site(i);
	return NULL;
}

static int usdt_setup(void)
{
	return kernel_setup_any("usdt_bench.bpf.o", "bench_usdt", NULL, false, "bpfrt_bench",
				"site");
}

static int ktp_setup(void) { return kernel_setup("bench_trigger_ktp", NULL); }
static int krawtp_setup(void) { return kernel_setup("bench_trigger_krawtp", NULL); }
static int uprobe_nop5_setup(void) { return kernel_setup("bench_trigger_uprobe", "bench_uprobe_nop5"); }
static int uprobe_push_setup(void) { return kernel_setup("bench_trigger_uprobe", "bench_uprobe_push"); }
static int uretprobe_push_setup(void)
{
	return kernel_setup_ret("bench_trigger_uprobe", "bench_uprobe_push", true);
}

static const struct bench_harness h_kbase = {
	.name = "trig-kernel-base", .producer = getpgid_base_producer, .measure = base_measure,
};
static const struct bench_harness h_ktp = {
	.name = "trig-kernel-tp", .setup = ktp_setup, .producer = getpgid_producer,
	.measure = prog_measure, .teardown = kernel_teardown,
};
static const struct bench_harness h_krawtp = {
	.name = "trig-kernel-rawtp", .setup = krawtp_setup, .producer = getpgid_producer,
	.measure = prog_measure, .teardown = kernel_teardown,
};
static const struct bench_harness h_uprobe_nop5 = {
	.name = "trig-uprobe-nop5", .setup = uprobe_nop5_setup, .producer = uprobe_nop5_producer,
	.measure = prog_measure, .teardown = kernel_teardown,
};
static const struct bench_harness h_uprobe_push = {
	.name = "trig-uprobe-push", .setup = uprobe_push_setup, .producer = uprobe_push_producer,
	.measure = prog_measure, .teardown = kernel_teardown,
};

static const struct bench_harness h_uretprobe_push = {
	.name = "trig-uretprobe-push", .setup = uretprobe_push_setup,
	.producer = uprobe_push_producer, .measure = prog_measure, .teardown = kernel_teardown,
};

static const struct bench_harness h_usdt = {
	.name = "trig-usdt", .setup = usdt_setup, .producer = usdt_producer,
	.measure = prog_measure, .teardown = kernel_teardown,
};

/* ---- registry entries ------------------------------------------------- */

#define TRIG_BENCH(var, h, text)					\
	static int var##_run(int argc, char **argv)			\
	{								\
		return bench_harness_main(&h, argc, argv);		\
	}								\
	const struct bench var = { h.name, text, var##_run }

TRIG_BENCH(bench_trig_base, h_base, "producers call a host function, no tracepoint");
TRIG_BENCH(bench_trig_tp_disabled, h_tp_disabled,
	   "the same function with a BPFRT_TRACEPOINT, nothing attached");
TRIG_BENCH(bench_trig_tp, h_tp, "tp/ program on the host tracepoint");
TRIG_BENCH(bench_trig_rawtp, h_rawtp, "raw_tp/ program on the host tracepoint");
TRIG_BENCH(bench_trig_kernel_base, h_kbase, "kernel: getpgid syscall, no program");
TRIG_BENCH(bench_trig_kernel_tp, h_ktp, "kernel: tp/syscalls/sys_enter_getpgid");
TRIG_BENCH(bench_trig_kernel_rawtp, h_krawtp, "kernel: raw_tp/sys_enter, getpgid only");
TRIG_BENCH(bench_trig_uprobe_nop5, h_uprobe_nop5,
	   "kernel: uprobe on a function starting with a nop5");
TRIG_BENCH(bench_trig_uprobe_push, h_uprobe_push,
	   "kernel: uprobe on a function starting with push %rbp");
TRIG_BENCH(bench_trig_uretprobe_push, h_uretprobe_push,
	   "kernel: uretprobe on the same function");
TRIG_BENCH(bench_trig_usdt, h_usdt,
	   "kernel: USDT (libbpf attach_usdt: a kernel uprobe) on bpfrt-usdt's site");
