/* `bpfrt-bench prog-pack`: JIT images packed into 2 MiB prog packs vs one
 * mapping per image, modelled on Linux's prog-pack stress tool.
 *
 * Scenarios, each measured with packing on and off
 * (bpfrt_execmem_set_packing before loading):
 *  - stress shape: 20 instances x 8 programs loaded, 5 of each instance (100)
 *    run round-robin;
 *  - 1,000 programs loaded, all run round-robin;
 *  - --spread N programs (default 4,000) loaded, all run: a working set
 *    past the second-level iTLB of current x86 cores (1,536-2,048 entries
 *    of 4 KiB) when every image has a page of its own.
 * Each program is small (25-50 instructions of ALU work and forward
 * jumps, generated from a seed so that every program's code differs) and
 * JIT-compiled. Producer threads (default 2) each go round-robin over all
 * running programs, starting at different places, as every CPU of the
 * stress tool's machine triggers every program.
 *
 * Figures per scenario and mode: runs/s, executable mappings
 * (/proc/self/maps), huge pages mapped executable (/proc/self/smaps), RSS
 * growth over the unloaded process, packs and own mappings, iTLB read
 * misses where perf_event_open gives them. Then load+JIT+free throughput.
 *
 * Timing: each thread times batches of ~2,000 runs and its rate is that of
 * its median batch; runs/s is the sum over threads, so time preempted by
 * other load on the machine is not counted. Trials of pack and no-pack
 * alternate (the order flips every repetition) and the table gives the
 * median of the repetitions and +- half their range. */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PP_MAX_REPS    51
#define PP_MAX_THREADS 16
#define PP_MAX_INSNS   64
#define PP_CTX_LEN     64

/* ---- instruction builders (the tests/insns.h shapes) --------------------- */

#define PP_INSN(CODE, DST, SRC, OFF, IMM) \
	((struct bpf_insn){ .code = (CODE), .dst_reg = (DST), .src_reg = (SRC), \
			    .off = (OFF), .imm = (IMM) })
#define PP_ALU64_IMM(OP, DST, IMM) PP_INSN(BPF_ALU64 | (OP) | BPF_K, DST, 0, 0, IMM)
#define PP_ALU64_REG(OP, DST, SRC) PP_INSN(BPF_ALU64 | (OP) | BPF_X, DST, SRC, 0, 0)
#define PP_LDX_DW(DST, SRC, OFF)   PP_INSN(BPF_LDX | BPF_DW | BPF_MEM, DST, SRC, OFF, 0)
#define PP_JMP_IMM(OP, DST, IMM, OFF) PP_INSN(BPF_JMP | (OP) | BPF_K, DST, 0, OFF, IMM)
#define PP_EXIT()                  PP_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* ---- options ---------------------------------------------------------------- */

struct pp_opts {
	int reps;
	double ms;          /* per run trial */
	int threads;
	int many;           /* programs of the "all loaded run" scenario */
	int spread;         /* programs of the spread scenario, 0: none */
	int churn;          /* programs per load+JIT+free batch */
	bool shuffle;       /* run in a random order, not load (= address) order */
	const char *sweep;  /* comma-separated program counts, or NULL */
	bool direct;        /* call the native images, not bpfrt_prog_run */
	bool fn_table;      /* direct, entries collected before timing */
	bool verbose;
};

/* ---- the programs --------------------------------------------------------- */

static uint64_t pp_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Program number seed: loads two words of the context (r1), then 20-40
 * random ALU operations on r0, r3-r5 with random immediates and the odd
 * forward jump, and folds everything into r0. Returns the insn count. */
static size_t pp_gen_prog(uint32_t seed, struct bpf_insn *insns)
{
	static const uint8_t imm_ops[] = { BPF_ADD, BPF_SUB, BPF_XOR, BPF_OR, BPF_AND, BPF_MUL,
					   BPF_LSH, BPF_RSH, BPF_ARSH };
	static const uint8_t reg_ops[] = { BPF_ADD, BPF_SUB, BPF_XOR, BPF_OR, BPF_MUL };
	static const uint8_t jmp_ops[] = { BPF_JGT, BPF_JEQ, BPF_JSET, BPF_JNE };
	static const uint8_t regs[] = { BPF_REG_0, BPF_REG_3, BPF_REG_4, BPF_REG_5 };
	uint64_t st = 0x5eed0000ull + seed;
	size_t n = 0;
	int ops = 20 + (int)(pp_rand(&st) % 21);

	insns[n++] = PP_LDX_DW(BPF_REG_0, BPF_REG_1, 0);
	insns[n++] = PP_LDX_DW(BPF_REG_3, BPF_REG_1, 8);
	insns[n++] = PP_ALU64_IMM(BPF_MOV, BPF_REG_4, (int32_t)pp_rand(&st));
	insns[n++] = PP_ALU64_IMM(BPF_MOV, BPF_REG_5, (int32_t)seed);
	for (int i = 0; i < ops; i++) {
		uint64_t r = pp_rand(&st);
		uint8_t dst = regs[r % 4], src = regs[(r >> 2) % 4];
		int32_t imm = (int32_t)(r >> 32);

		switch ((r >> 8) % 8) {
		case 0: case 1: case 2: {
			uint8_t op = imm_ops[(r >> 12) % sizeof(imm_ops)];

			if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
				imm &= 63;
			insns[n++] = PP_ALU64_IMM(op, dst, imm);
			break;
		}
		case 3: case 4: case 5:
			insns[n++] = PP_ALU64_REG(reg_ops[(r >> 12) % sizeof(reg_ops)], dst, src);
			break;
		case 6:
			/* skip the next operation on some inputs */
			insns[n++] = PP_JMP_IMM(jmp_ops[(r >> 12) % sizeof(jmp_ops)], dst, imm, 1);
			insns[n++] = PP_ALU64_IMM(BPF_XOR, src, imm ^ 0x55aa);
			break;
		default:
			insns[n++] = PP_ALU64_IMM(BPF_ADD, dst, imm | 1);
			break;
		}
	}
	insns[n++] = PP_ALU64_REG(BPF_XOR, BPF_REG_0, BPF_REG_3);
	insns[n++] = PP_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_4);
	insns[n++] = PP_ALU64_REG(BPF_XOR, BPF_REG_0, BPF_REG_5);
	insns[n++] = PP_EXIT();
	return n;
}

struct pp_code {
	struct bpf_insn insns[PP_MAX_INSNS];
	size_t cnt;
};

/* The context every program reads (r1). */
static uint64_t pp_ctx[PP_CTX_LEN / 8] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };

/* ---- process figures: mappings, huge pages, RSS --------------------------- */

struct pp_mem {
	int exec_maps;      /* r-x mappings of the process */
	int jit_maps;       /* of those, JIT code (memfd "bpfrt-jit", or a pack) */
	long huge_kb;       /* huge pages mapped executable */
	long rss_kb;
};

/* Anonymous-THP packs have no name in /proc/self/maps: they are found by
 * the pack addresses execmem reports. */
static bool pp_is_pack(const struct bpfrt_execmem_stats *st, unsigned long lo, unsigned long hi)
{
	for (uint32_t i = 0; i < st->pack_info_cnt; i++)
		if (st->packs[i].addr >= lo && st->packs[i].addr < hi)
			return true;
	return false;
}

static void pp_count_maps(struct pp_mem *m)
{
	FILE *f = fopen("/proc/self/maps", "re");
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };
	char line[512];

	if (!f)
		return;
	if (bpfrt_execmem_stats(&st))
		st.pack_info_cnt = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8] = "";

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[2] != 'x')
			continue;
		m->exec_maps++;
		if (strstr(line, "bpfrt-jit") || pp_is_pack(&st, lo, hi))
			m->jit_maps++;
	}
	fclose(f);
}

/* Huge pages mapped in executable mappings: THP (anonymous, shmem, file)
 * and hugetlb (KernelPageSize 2048 kB). */
static void pp_count_huge(struct pp_mem *m)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool exec = false;
	long rss = 0, v;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%*x-%*x %7s", perms) == 1) {
			exec = perms[2] == 'x';
			continue;
		}
		if (!exec)
			continue;
		if (sscanf(line, "Rss: %ld kB", &v) == 1)
			rss = v;
		else if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1 ||
			 sscanf(line, "ShmemPmdMapped: %ld kB", &v) == 1 ||
			 sscanf(line, "FilePmdMapped: %ld kB", &v) == 1)
			m->huge_kb += v;
		else if (sscanf(line, "KernelPageSize: %ld kB", &v) == 1 && v >= 2048)
			m->huge_kb += rss;
	}
	fclose(f);
}

static long pp_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void pp_measure_mem(struct pp_mem *m)
{
	memset(m, 0, sizeof(*m));
	pp_count_maps(m);
	pp_count_huge(m);
	m->rss_kb = pp_rss_kb();
}

/* ---- iTLB read misses ------------------------------------------------------- */

static bool itlb_ok;
static char itlb_why[128];

static int pp_itlb_open(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HW_CACHE;
	attr.config = PERF_COUNT_HW_CACHE_ITLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
		      (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static void pp_itlb_probe(void)
{
	int fd = pp_itlb_open();

	if (fd < 0) {
		snprintf(itlb_why, sizeof(itlb_why), "perf_event_open: %s", strerror(errno));
		return;
	}
	close(fd);
	itlb_ok = true;
}

/* ---- one scenario ------------------------------------------------------------ */

enum { PP_PACK, PP_NOPACK, PP_MODES };

static const char *const pp_mode_names[PP_MODES] = { "pack", "no-pack" };

struct pp_scenario {
	const char *name;
	int loaded;
	int instances;       /* 0: every program runs */
	int per_instance;
	int run_per_instance;
};

struct pp_sample {
	double runs_per_s;      /* sum over threads of their median batch's rate */
	double cpu_runs_per_s;  /* sum over threads of runs / thread CPU time */
	double wall_runs_per_s;
	double itlb_per_krun;   /* < 0: not measured */
	double load_per_s;
	struct pp_mem mem;      /* relative to the unloaded process for rss_kb */
	uint32_t packs, own;
	uint64_t bytes_used;
};

struct pp_result {
	struct pp_sample s[PP_MODES][PP_MAX_REPS];
	int n;
};

/* Runs are timed in batches of about PP_BATCH_RUNS (whole passes over the
 * running programs); a thread's rate is that of its median batch. A batch
 * lasts some microseconds, so few are hit by preemption or by the cache
 * and TLB refills after another process ran on the core, while a trial's
 * average over thread CPU time still carries those refills (the machine
 * is shared with compilers). */
#define PP_BATCH_RUNS   2000

/* The native entry of a JIT image: r1, r2 in, r0 out. */
typedef uint64_t (*pp_native_fn)(uint64_t r1, uint64_t r2);
#define PP_MAX_BATCHES  (1 << 17)

struct pp_worker {
	pthread_t tid;
	struct bpfrt_prog *const *run;
	pp_native_fn *fns;   /* --fn-table: the entries of run[] */
	int run_cnt;
	bool direct;
	int start;
	atomic_bool *stop;
	pthread_barrier_t *barrier;
	uint64_t runs, cpu_ns, itlb;
	double *batch_ns;
	int batches;
	bool itlb_ok;
	int err;
};

static void *pp_worker_main(void *arg)
{
	struct pp_worker *w = arg;
	int passes = (PP_BATCH_RUNS + w->run_cnt - 1) / w->run_cnt;
	uint64_t t0, r0, runs = 0;
	int fd = itlb_ok ? pp_itlb_open() : -1;
	int i = w->start;

	pthread_barrier_wait(w->barrier);
	if (fd >= 0) {
		ioctl(fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	t0 = bench_thread_ns();
	while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
		uint64_t b0 = bench_now_ns();

		for (int k = passes * w->run_cnt; k > 0; k--) {
			if (w->fns) {
				r0 += w->fns[i]((uintptr_t)pp_ctx, sizeof(pp_ctx));
			} else if (w->direct) {
				pp_native_fn fn = (pp_native_fn)bpfrt_prog_jited(w->run[i], NULL);

				r0 += fn((uintptr_t)pp_ctx, sizeof(pp_ctx));
			} else if (bpfrt_prog_run(w->run[i], BPFRT_EXEC_JIT, (uintptr_t)pp_ctx,
						  sizeof(pp_ctx), &r0)) {
				w->err = -EINVAL;
				goto out;
			}
			if (++i == w->run_cnt)
				i = 0;
		}
		if (w->batches < PP_MAX_BATCHES)
			w->batch_ns[w->batches++] = (double)(bench_now_ns() - b0);
		runs += (uint64_t)passes * (uint64_t)w->run_cnt;
	}
out:
	w->cpu_ns = bench_thread_ns() - t0;
	if (fd >= 0) {
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		w->itlb_ok = read(fd, &w->itlb, sizeof(w->itlb)) == sizeof(w->itlb);
		close(fd);
	}
	w->runs = runs;
	return NULL;
}

static int pp_run_trial(const struct pp_opts *o, struct bpfrt_prog *const *run, int run_cnt,
			struct pp_sample *s)
{
	struct pp_worker w[PP_MAX_THREADS];
	pthread_barrier_t barrier;
	atomic_bool stop = false;
	uint64_t t0, total = 0, itlb = 0;
	struct timespec nap = { .tv_sec = (time_t)(o->ms / 1000),
				.tv_nsec = (long)((o->ms - 1000.0 * (long)(o->ms / 1000)) * 1e6) };
	int err = 0, started = 0;
	bool itlb_all = itlb_ok;
	pp_native_fn *fns = NULL;

	if (o->fn_table) {
		fns = malloc((size_t)run_cnt * sizeof(*fns));
		if (!fns)
			return -ENOMEM;
		for (int i = 0; i < run_cnt; i++)
			fns[i] = (pp_native_fn)bpfrt_prog_jited(run[i], NULL);
	}
	pthread_barrier_init(&barrier, NULL, (unsigned)o->threads + 1);
	for (int t = 0; t < o->threads; t++) {
		w[t] = (struct pp_worker){ .run = run, .fns = fns, .run_cnt = run_cnt, .direct = o->direct,
					   .start = (int)((long)run_cnt * t / o->threads),
					   .stop = &stop, .barrier = &barrier,
					   .batch_ns = malloc(PP_MAX_BATCHES * sizeof(double)) };
		if (!w[t].batch_ns || pthread_create(&w[t].tid, NULL, pp_worker_main, &w[t])) {
			fprintf(stderr, "bpfrt-bench prog-pack: cannot start a thread\n");
			exit(1);
		}
		started++;
	}
	pthread_barrier_wait(&barrier);
	t0 = bench_now_ns();
	nanosleep(&nap, NULL);
	atomic_store(&stop, true);
	s->runs_per_s = s->cpu_runs_per_s = 0;
	for (int t = 0; t < started; t++) {
		struct bench_stats st;
		int passes = (PP_BATCH_RUNS + run_cnt - 1) / run_cnt;

		pthread_join(w[t].tid, NULL);
		if (w[t].err)
			err = w[t].err;
		total += w[t].runs;
		itlb += w[t].itlb;
		itlb_all = itlb_all && w[t].itlb_ok;
		if (w[t].cpu_ns)
			s->cpu_runs_per_s += (double)w[t].runs * 1e9 / (double)w[t].cpu_ns;
		bench_stats_of(w[t].batch_ns, w[t].batches, &st);
		if (st.median > 0)
			s->runs_per_s += (double)passes * run_cnt * 1e9 / st.median;
		free(w[t].batch_ns);
	}
	s->wall_runs_per_s = (double)total * 1e9 / (double)(bench_now_ns() - t0);
	s->itlb_per_krun = itlb_all && total ? 1000.0 * (double)itlb / (double)total : -1;
	pthread_barrier_destroy(&barrier);
	free(fns);
	return err;
}

/* Loads (JIT) programs from code[0..n); returns 0 and the thread CPU
 * time it took, or -errno. */
static int pp_load_all(const struct pp_code *code, int n, struct bpfrt_prog **progs,
		       uint64_t *ns)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "pp", .jit = true);
	uint64_t t0 = bench_thread_ns();

	for (int i = 0; i < n; i++) {
		int err = bpfrt_prog_load(code[i].insns, code[i].cnt, &opts, &progs[i]);

		if (err) {
			fprintf(stderr, "bpfrt-bench prog-pack: program %d: %s\n", i,
				bpfrt_last_error());
			while (i--)
				bpfrt_prog_free(progs[i]);
			return err;
		}
	}
	*ns = bench_thread_ns() - t0;
	return 0;
}

static void pp_free_all(struct bpfrt_prog **progs, int n)
{
	for (int i = 0; i < n; i++)
		bpfrt_prog_free(progs[i]);
	bpfrt_execmem_trim();
}

/* JIT and interpreter must agree on every program (the figures are for
 * code that does what it says). */
static int pp_check_all(struct bpfrt_prog **progs, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t a = 0, b = 1;

		if (bpfrt_prog_run(progs[i], BPFRT_EXEC_JIT, (uintptr_t)pp_ctx, sizeof(pp_ctx), &a) ||
		    bpfrt_prog_run(progs[i], BPFRT_EXEC_INTERP, (uintptr_t)pp_ctx, sizeof(pp_ctx), &b) ||
		    a != b) {
			fprintf(stderr, "bpfrt-bench prog-pack: program %d: JIT %#llx, interpreter %#llx\n",
				i, (unsigned long long)a, (unsigned long long)b);
			return -EINVAL;
		}
	}
	return 0;
}

static int pp_sample_scenario(const struct pp_opts *o, const struct pp_scenario *sc,
			      const struct pp_code *code, int mode, bool check,
			      struct pp_sample *s)
{
	struct bpfrt_prog **progs = calloc((size_t)sc->loaded, sizeof(*progs));
	struct bpfrt_prog **run = calloc((size_t)sc->loaded, sizeof(*run));
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };
	struct pp_mem base;
	uint64_t ns;
	int run_cnt = 0, err;

	if (!progs || !run) {
		free(progs);
		free(run);
		return -ENOMEM;
	}
	memset(s, 0, sizeof(*s));
	pp_measure_mem(&base);
	bpfrt_execmem_set_packing(mode == PP_PACK);
	err = pp_load_all(code, sc->loaded, progs, &ns);
	if (err)
		goto out;
	s->load_per_s = ns ? (double)sc->loaded * 1e9 / (double)ns : 0;
	if (check && (err = pp_check_all(progs, sc->loaded)))
		goto out_free;
	pp_measure_mem(&s->mem);
	s->mem.rss_kb -= base.rss_kb;
	bpfrt_execmem_stats(&st);
	s->packs = st.pack_cnt;
	s->own = st.own_cnt;
	s->bytes_used = st.bytes_used;
	if (sc->instances) {
		for (int i = 0; i < sc->instances; i++)
			for (int j = 0; j < sc->run_per_instance; j++)
				run[run_cnt++] = progs[i * sc->per_instance + j];
	} else {
		memcpy(run, progs, (size_t)sc->loaded * sizeof(*run));
		run_cnt = sc->loaded;
	}
	if (o->shuffle) {
		uint64_t st = 42;

		for (int i = run_cnt - 1; i > 0; i--) {
			int j = (int)(pp_rand(&st) % (uint64_t)(i + 1));
			struct bpfrt_prog *t = run[i];

			run[i] = run[j];
			run[j] = t;
		}
	}
	err = pp_run_trial(o, run, run_cnt, s);
	if (err)
		fprintf(stderr, "bpfrt-bench prog-pack: a run failed: %s\n", bpfrt_last_error());
out_free:
	pp_free_all(progs, sc->loaded);
out:
	free(progs);
	free(run);
	return err;
}

/* ---- load+JIT+free throughput ----------------------------------------------- */

/* Loads o->churn programs and frees them again, batch after batch, until
 * o->ms has passed. Returns programs per second of thread CPU time in the
 * median batch (a batch takes milliseconds, long enough to be preempted
 * on a busy machine, which CPU time does not count); *cpu gets the rate
 * over the whole sample's CPU time. */
static double pp_churn(const struct pp_opts *o, const struct pp_code *code, int ncode, int mode,
		       double *cpu)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "pp", .jit = true);
	struct bpfrt_prog **progs = calloc((size_t)o->churn, sizeof(*progs));
	double *batch_ns = malloc(PP_MAX_BATCHES * sizeof(double));
	uint64_t cpu0, wall0, done = 0;
	struct bench_stats st;
	double result = 0;
	int batches = 0;

	*cpu = 0;
	if (!progs || !batch_ns)
		goto out;
	bpfrt_execmem_set_packing(mode == PP_PACK);
	cpu0 = bench_thread_ns();
	wall0 = bench_now_ns();
	while (bench_now_ns() - wall0 < (uint64_t)(o->ms * 1e6) && batches < PP_MAX_BATCHES) {
		uint64_t b0 = bench_thread_ns();

		for (int i = 0; i < o->churn; i++) {
			const struct pp_code *c = &code[(done + (uint64_t)i) % (uint64_t)ncode];

			if (bpfrt_prog_load(c->insns, c->cnt, &opts, &progs[i])) {
				fprintf(stderr, "bpfrt-bench prog-pack: load: %s\n", bpfrt_last_error());
				while (i--)
					bpfrt_prog_free(progs[i]);
				goto out;
			}
		}
		for (int i = 0; i < o->churn; i++)
			bpfrt_prog_free(progs[i]);
		batch_ns[batches++] = (double)(bench_thread_ns() - b0);
		done += (uint64_t)o->churn;
	}
	*cpu = (double)done * 1e9 / (double)(bench_thread_ns() - cpu0);
	bench_stats_of(batch_ns, batches, &st);
	result = st.median > 0 ? o->churn * 1e9 / st.median : 0;
out:
	bpfrt_execmem_trim();
	free(batch_ns);
	free(progs);
	return result;
}

/* ---- the table ------------------------------------------------------------- */

static struct bench_stats pp_stat(const struct pp_result *r, int mode, size_t field_off)
{
	double v[PP_MAX_REPS];
	struct bench_stats st;

	for (int i = 0; i < r->n; i++)
		v[i] = *(const double *)((const char *)&r->s[mode][i] + field_off);
	bench_stats_of(v, r->n, &st);
	return st;
}

static const char *pp_fmt_rate(double v, char *buf, size_t len)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

/* Prints one scenario's table; returns the median of the repetitions'
 * pack/no-pack ratios. */
static double pp_print_scenario(const struct pp_opts *o, const struct pp_scenario *sc,
				const struct pp_result *r, int run_cnt)
{
	struct bench_stats rs[PP_MODES], ratio_st;
	double ratios[PP_MAX_REPS], ratio;
	char a[32], b[48], itlb[32];

	printf("\n%s: %d loaded, %d run round-robin by %d threads\n", sc->name, sc->loaded,
	       run_cnt, o->threads);
	printf("  %-8s %16s %8s %7s %6s %6s %9s %8s %9s %10s\n", "mode", "runs/s", "ns/run",
	       "x-maps", "(jit)", "packs", "own-maps", "huge-2M", "RSS+ MiB", "iTLB/krun");
	for (int m = 0; m < PP_MODES; m++) {
		const struct pp_sample *s0 = &r->s[m][0];
		struct bench_stats it = pp_stat(r, m, offsetof(struct pp_sample, itlb_per_krun));

		rs[m] = pp_stat(r, m, offsetof(struct pp_sample, runs_per_s));
		snprintf(b, sizeof(b), "%s +-%.1f%%", pp_fmt_rate(rs[m].median, a, sizeof(a)),
			 bench_spread_pct(&rs[m]));
		if (it.min >= 0)
			snprintf(itlb, sizeof(itlb), "%.2f", it.median);
		else
			snprintf(itlb, sizeof(itlb), "n/a");
		printf("  %-8s %16s %8.1f %7d %6d %6u %9u %8ld %9.1f %10s\n", pp_mode_names[m], b,
		       rs[m].median > 0 ? o->threads * 1e9 / rs[m].median : 0,
		       s0->mem.exec_maps, s0->mem.jit_maps, s0->packs, s0->own,
		       s0->mem.huge_kb / 2048, (double)s0->mem.rss_kb / 1024, itlb);
	}
	ratio = rs[PP_NOPACK].median > 0 ? rs[PP_PACK].median / rs[PP_NOPACK].median : 0;
	for (int i = 0; i < r->n; i++)
		ratios[i] = r->s[PP_NOPACK][i].runs_per_s > 0 ?
			    r->s[PP_PACK][i].runs_per_s / r->s[PP_NOPACK][i].runs_per_s : 0;
	bench_stats_of(ratios, r->n, &ratio_st);
	if (o->verbose)
		for (int i = 0; i < r->n; i++)
			printf("    rep %d: pack %.1fM (CPU time %.1fM, wall %.1fM), "
			       "no-pack %.1fM (CPU time %.1fM, wall %.1fM) runs/s\n", i,
			       r->s[PP_PACK][i].runs_per_s / 1e6, r->s[PP_PACK][i].cpu_runs_per_s / 1e6,
			       r->s[PP_PACK][i].wall_runs_per_s / 1e6,
			       r->s[PP_NOPACK][i].runs_per_s / 1e6, r->s[PP_NOPACK][i].cpu_runs_per_s / 1e6,
			       r->s[PP_NOPACK][i].wall_runs_per_s / 1e6);
	/* Pack and no-pack trials of one repetition run back to back, under
	 * the same outside load: their ratio is steadier than the medians'. */
	printf("  pack/no-pack runs/s: %.3fx (median of the repetitions' ratios, %.3f..%.3f; "
	       "ratio of medians %.3f)\n", ratio_st.median, ratio_st.min, ratio_st.max, ratio);
	return ratio_st.median;
}

/* ---- entry ----------------------------------------------------------------- */

static void pp_usage(FILE *f)
{
	fprintf(f,
		"usage: bpfrt-bench prog-pack [options]\n"
		"  -r, --reps N      repetitions, median reported (default 7)\n"
		"  -t, --ms MS       milliseconds per run trial and churn sample (default 200)\n"
		"  -j, --threads N   producer threads (default 2)\n"
		"  -n, --many N      programs of the all-run scenario (default 1000)\n"
		"  -s, --spread N    programs of the spread scenario, 0 for none (default 4000)\n"
		"  -c, --churn N     programs per load+JIT+free batch (default 100)\n"
		"  -S, --shuffle     run the programs in a random order (default: load order)\n"
		"  -w, --sweep N,N.. only the all-run scenario for each program count: where\n"
		"                    packing starts to pay (iTLB reach)\n"
		"  -d, --direct      call each native image directly instead of through\n"
		"                    bpfrt_prog_run (no RCU read section: its fence per run\n"
		"                    serialises the CPU and hides code-placement effects)\n"
		"  -F, --fn-table    direct calls through a table of the native entries made\n"
		"                    before timing: no program struct is read per run (the\n"
		"                    data side; same table in both modes)\n"
		"  -v, --verbose     every repetition's figures\n");
}

static int pp_parse(int argc, char **argv, struct pp_opts *o)
{
	static const struct option longopts[] = {
		{ "reps", required_argument, NULL, 'r' },
		{ "ms", required_argument, NULL, 't' },
		{ "threads", required_argument, NULL, 'j' },
		{ "many", required_argument, NULL, 'n' },
		{ "spread", required_argument, NULL, 's' },
		{ "churn", required_argument, NULL, 'c' },
		{ "shuffle", no_argument, NULL, 'S' },
		{ "sweep", required_argument, NULL, 'w' },
		{ "direct", no_argument, NULL, 'd' },
		{ "fn-table", no_argument, NULL, 'F' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct pp_opts){ .reps = 7, .ms = 200, .threads = 2, .many = 1000,
			       .spread = 4000, .churn = 100 };
	while ((c = getopt_long(argc, argv, "r:t:j:n:s:c:Sw:dFvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': o->reps = atoi(optarg); break;
		case 't': o->ms = atof(optarg); break;
		case 'j': o->threads = atoi(optarg); break;
		case 'n': o->many = atoi(optarg); break;
		case 's': o->spread = atoi(optarg); break;
		case 'c': o->churn = atoi(optarg); break;
		case 'S': o->shuffle = true; break;
		case 'w': o->sweep = optarg; break;
		case 'd': o->direct = true; break;
		case 'F': o->direct = o->fn_table = true; break;
		case 'v': o->verbose = true; break;
		case 'h': pp_usage(stdout); exit(0);
		default: pp_usage(stderr); return -EINVAL;
		}
	}
	if (o->reps < 1 || o->reps > PP_MAX_REPS || o->ms <= 0 || o->threads < 1 ||
	    o->threads > PP_MAX_THREADS || o->many < 1 || o->spread < 0 || o->churn < 1 ||
	    optind != argc) {
		pp_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static void pp_print_setup(const struct pp_opts *o, const struct pp_code *code, int ncode)
{
	char model[128] = "unknown", line[256], thp[128] = "?";
	FILE *f = fopen("/proc/cpuinfo", "re");
	double insns = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "model name : %127[^\n]", model) == 1)
			break;
	if (f)
		fclose(f);
	f = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "re");
	if (f && fgets(thp, sizeof(thp), f))
		thp[strcspn(thp, "\n")] = '\0';
	if (f)
		fclose(f);
	for (int i = 0; i < ncode; i++)
		insns += (double)code[i].cnt;
	printf("prog-pack: JIT images in 2 MiB packs vs one mapping each\n");
	printf("cpu: %s, %ld online; page size %ld\n", model, sysconf(_SC_NPROCESSORS_ONLN),
	       sysconf(_SC_PAGESIZE));
	printf("shmem THP: %s; hugetlb pages reserved: %ld\n", thp,
	       bench_read_sysctl("/proc/sys/vm/nr_hugepages"));
	printf("programs: %.1f BPF insns on average (ALU work, forward jumps, two loads), "
	       "each different\n", insns / ncode);
	printf("timing: median of %d repetitions of %.0f ms per trial; runs/s = sum over threads of\n"
	       "        the rate of their median batch of ~%d runs (preemption not counted)%s\n",
	       o->reps, o->ms, PP_BATCH_RUNS, o->shuffle ? "; random run order" : "");
	printf("runs: %s\n", o->fn_table ? "native images called directly from a table of "
	       "entries (--fn-table)" : o->direct ? "native images called directly (--direct)" :
	       "bpfrt_prog_run(BPFRT_EXEC_JIT), the public API");
	if (itlb_ok)
		printf("iTLB misses: perf_event_open ITLB read misses, user mode, per 1,000 runs\n");
	else
		printf("iTLB misses: not available (%s)\n", itlb_why);
}

/* One line per program count: runs/s with and without packing, and the
 * 4 KiB pages the running code spans in each mode (the iTLB entries it
 * needs). */
static int pp_sweep(const struct pp_opts *o)
{
	int counts[64], ncount = 0, max = 0, err = 0;
	struct pp_code *code;
	char *list = strdup(o->sweep), *save = NULL;

	for (char *t = strtok_r(list, ",", &save); t && ncount < 64; t = strtok_r(NULL, ",", &save)) {
		counts[ncount] = atoi(t);
		if (counts[ncount] < 1 || counts[ncount] > 100000) {
			fprintf(stderr, "bpfrt-bench prog-pack: --sweep: bad count '%s'\n", t);
			free(list);
			return 2;
		}
		if (counts[ncount] > max)
			max = counts[ncount];
		ncount++;
	}
	free(list);
	code = calloc((size_t)max, sizeof(*code));
	if (!code)
		return 1;
	for (int i = 0; i < max; i++)
		code[i].cnt = pp_gen_prog((uint32_t)i, code[i].insns);
	printf("prog-pack sweep: %d threads, median of %d repetitions of %.0f ms%s%s\n", o->threads,
	       o->reps, o->ms, o->shuffle ? ", random run order" : "",
	       o->fn_table ? ", native images called from a table of entries" :
	       o->direct ? ", native images called directly" : ", through bpfrt_prog_run");
	printf("  %8s %12s %12s %9s %10s %12s\n", "programs", "pack runs/s", "no-pack", "ratio",
	       "pack pages", "no-pack maps");
	for (int c = 0; c < ncount && !err; c++) {
		struct pp_scenario sc = { "sweep", counts[c], 0, 0, 0 };
		static struct pp_result r;
		struct bench_stats st[PP_MODES], ratio_st;
		double ratios[PP_MAX_REPS];

		for (int rep = 0; rep < o->reps && !err; rep++)
			for (int k = 0; k < PP_MODES && !err; k++) {
				int mode = rep % 2 ? PP_MODES - 1 - k : k;

				err = pp_sample_scenario(o, &sc, code, mode, rep == 0, &r.s[mode][rep]);
			}
		if (err)
			break;
		r.n = o->reps;
		for (int m = 0; m < PP_MODES; m++)
			st[m] = pp_stat(&r, m, offsetof(struct pp_sample, runs_per_s));
		for (int i = 0; i < r.n; i++)
			ratios[i] = r.s[PP_NOPACK][i].runs_per_s > 0 ?
				    r.s[PP_PACK][i].runs_per_s / r.s[PP_NOPACK][i].runs_per_s : 0;
		bench_stats_of(ratios, r.n, &ratio_st);
		printf("  %8d %11.1fM %11.1fM %8.3fx %10llu %12u\n", counts[c], st[PP_PACK].median / 1e6,
		       st[PP_NOPACK].median / 1e6, ratio_st.median,
		       (unsigned long long)((r.s[PP_PACK][0].bytes_used + 4095) / 4096),
		       r.s[PP_NOPACK][0].own);
		fflush(stdout);
	}
	free(code);
	return err ? 1 : 0;
}

static int bench_prog_pack_run(int argc, char **argv)
{
	static struct pp_result results[3];
	struct pp_opts o;
	struct pp_scenario sc[3] = {
		{ "stress shape (20 instances x 8 programs, 5 of each run)", 160, 20, 8, 5 },
		{ "all run", 0 },
		{ "spread", 0 },
	};
	struct bench_stats churn_st[PP_MODES], load_st;
	double churn[PP_MODES][PP_MAX_REPS], churn_cpu[PP_MODES][PP_MAX_REPS];
	double ratio_many = 0, jit_bytes = 0;
	int nsc = 2, ncode, err = 0;
	struct pp_code *code;
	bool restore_packing = bpfrt_execmem_packing();

	if (pp_parse(argc, argv, &o))
		return 2;
	if (o.sweep) {
		err = pp_sweep(&o);
		bpfrt_execmem_set_packing(restore_packing);
		return err;
	}
	sc[1].loaded = o.many;
	if (o.spread) {
		sc[2].loaded = o.spread;
		nsc = 3;
	}
	ncode = 160;
	for (int i = 1; i < nsc; i++)
		if (sc[i].loaded > ncode)
			ncode = sc[i].loaded;
	if (o.churn > ncode)
		ncode = o.churn;
	code = calloc((size_t)ncode, sizeof(*code));
	if (!code)
		return 1;
	for (int i = 0; i < ncode; i++)
		code[i].cnt = pp_gen_prog((uint32_t)i, code[i].insns);
	pp_itlb_probe();
	pp_print_setup(&o, code, ncode);
	fflush(stdout);

	for (int rep = 0; rep < o.reps && !err; rep++) {
		for (int i = 0; i < nsc && !err; i++) {
			for (int k = 0; k < PP_MODES && !err; k++) {
				int mode = rep % 2 ? PP_MODES - 1 - k : k;

				err = pp_sample_scenario(&o, &sc[i], code, mode, rep == 0,
							 &results[i].s[mode][rep]);
			}
			results[i].n = rep + 1;
		}
	}
	if (err)
		goto out;
	{
		/* average JIT image size, for the packing arithmetic */
		BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "pp", .jit = true);

		for (int i = 0; i < 100; i++) {
			struct bpfrt_prog *p;
			size_t len = 0;

			if (bpfrt_prog_load(code[i].insns, code[i].cnt, &opts, &p))
				break;
			bpfrt_prog_jited(p, &len);
			jit_bytes += (double)len / 100;
			bpfrt_prog_free(p);
		}
	}
	printf("JIT image: %.0f bytes on average (%.1f chunks of %u bytes)\n", jit_bytes,
	       jit_bytes / BPFRT_EXECMEM_CHUNK_SIZE, BPFRT_EXECMEM_CHUNK_SIZE);
	printf("x-maps: r-x mappings of the process ((jit): of JIT code); huge-2M: huge pages mapped\n"
	       "executable (smaps); RSS+: growth over the process without the programs\n");
	for (int i = 0; i < nsc; i++) {
		int run_cnt = sc[i].instances ? sc[i].instances * sc[i].run_per_instance : sc[i].loaded;
		double ratio;
		char name[64];

		if (i > 0) {
			snprintf(name, sizeof(name), "%s, %d programs", i == 1 ? "all run" : "spread",
				 sc[i].loaded);
			sc[i].name = name;
		}
		ratio = pp_print_scenario(&o, &sc[i], &results[i], run_cnt);
		if (i == 1)
			ratio_many = ratio;
	}

	/* load+JIT+free */
	for (int rep = 0; rep < o.reps; rep++)
		for (int k = 0; k < PP_MODES; k++) {
			int mode = rep % 2 ? PP_MODES - 1 - k : k;

			churn[mode][rep] = pp_churn(&o, code, ncode, mode, &churn_cpu[mode][rep]);
		}
	printf("\nload+JIT+free: batches of %d programs loaded (validate + JIT), then freed\n", o.churn);
	printf("  %-8s %18s %18s\n", "mode", "programs/s", "(whole sample)");
	for (int m = 0; m < PP_MODES; m++) {
		struct bench_stats cpu_st;
		char a[32], b[48], c[32];

		bench_stats_of(churn[m], o.reps, &churn_st[m]);
		bench_stats_of(churn_cpu[m], o.reps, &cpu_st);
		snprintf(b, sizeof(b), "%s +-%.1f%%", pp_fmt_rate(churn_st[m].median, a, sizeof(a)),
			 bench_spread_pct(&churn_st[m]));
		printf("  %-8s %18s %18s\n", pp_mode_names[m], b,
		       pp_fmt_rate(cpu_st.median, c, sizeof(c)));
	}
	{
		double v[PP_MAX_REPS];

		for (int i = 0; i < results[1].n; i++)
			v[i] = results[1].s[PP_PACK][i].load_per_s;
		bench_stats_of(v, results[1].n, &load_st);
	}
	printf("  pack/no-pack: %.2fx; loading alone (the %d-program scenario, pack): %.0f programs/s\n",
	       churn_st[PP_NOPACK].median > 0 ? churn_st[PP_PACK].median / churn_st[PP_NOPACK].median : 0,
	       o.many, load_st.median);

	{
		uint32_t packs = results[1].s[PP_PACK][0].packs;
		double churn_pack = churn_st[PP_PACK].median;

		printf("\ntargets:\n");
		printf("  1,000 small programs in at most 2 packs\n");
		printf("    %u packs for %d programs: %s\n", packs, o.many,
		       o.many != 1000 ? "MISSED (not measured: run with -n 1000)" : packs <= 2 ? "met" : "MISSED");
		printf("  round-robin runs/s with 1,000 programs >= 1.1x no-pack\n");
		printf("    %.3fx: %s\n", ratio_many,
		       o.many != 1000 ? "MISSED (not measured: run with -n 1000)" : ratio_many >= 1.1 ? "met" : "MISSED");
		printf("  load+JIT+free >= 20,000 small programs/s\n");
		printf("    %.0f programs/s (pack): %s\n", churn_pack,
		       churn_pack >= 20000 ? "met" : "MISSED");
	}
out:
	bpfrt_execmem_set_packing(restore_packing);
	free(code);
	return err ? 1 : 0;
}

const struct bench bench_prog_pack = {
	.name = "prog-pack",
	.summary = "prog packs vs a mapping per JIT image: runs/s, mappings, RSS, load rate",
	.run = bench_prog_pack_run,
};
