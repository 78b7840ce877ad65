/* `bpfrt-bench cpu`: interpreter vs JIT vs the Linux JIT on CPU-bound XDP
 * programs.
 *
 * The same unrelocated bytecode from bench/progs/NAME.bpf.o is
 *  - loaded into bpfrt twice (interpreter, JIT) and run in a loop here;
 *  - loaded into the kernel as BPF_PROG_TYPE_XDP and run with
 *    BPF_PROG_TEST_RUN (repeat = N), whose reported duration is the
 *    kernel's average ns per run.
 * Every engine's return value must equal the C reference of the program.
 *
 * The XDP context. Linux's struct xdp_md has u32 data/data_end fields that
 * the kernel verifier rewrites into loads of the real packet pointers.
 * bpfrt has no context rewriting yet, so the unmodified bytecode gets a
 * struct xdp_md whose u32 fields already hold the pointers: the packet is
 * mapped below 4 GiB (MAP_32BIT) so that its address fits in 32 bits.
 *
 * Timing: after a warm-up, each repetition times one batch per engine
 * (engines interleaved, so drift and noise hit all of them alike), each
 * batch sized to take about --ms milliseconds; before every repetition
 * after the first, both JITs load the program afresh (engine_reload says
 * why). A cell is the mean over repetitions without the fastest and
 * slowest 10% (--median: the median) and +- half the min..max range as a
 * percentage. Not the median, because placement makes the JIT figures
 * bimodal (engine_reload) and a median then flips between the modes from
 * run to run. Our batches are timed in thread CPU time, so that time spent preempted by
 * other load is not counted, as the kernel's test-run timer does not count
 * it either (it stops around cond_resched). */
#define _GNU_SOURCE
#include "bench.h"
#include "interp/interp.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <capstone/capstone.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PKT_LEN 1500
#define MAX_REPS 101
#define KERNEL_LOG_SIZE (1 << 20)

/* ---- the programs and their C references ------------------------------- */

static uint32_t ref_alu_loop(const uint8_t *pkt, size_t len)
{
	uint64_t x, acc = 0x9e3779b97f4a7c15ULL;

	if (len < 8)
		return 0;
	memcpy(&x, pkt, sizeof(x));
	x |= 1;
	for (int i = 0; i < 2000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		acc += x ^ (acc >> 29);
		acc = (acc << 21 | acc >> 43) * 0xbf58476d1ce4e5b9ULL;
	}
	return (uint32_t)(acc ^ (acc >> 32));
}

static uint32_t ref_sieve(const uint8_t *pkt, size_t len)
{
	static uint8_t composite[2048];
	uint32_t count = 0;

	memset(composite, 0, sizeof(composite));
	for (uint32_t i = 2; i < 2048; i++) {
		if (composite[i])
			continue;
		count++;
		for (uint32_t j = i * i; j < 2048; j += i)
			composite[j] = 1;
	}
	return count;
}

static uint32_t ref_checksum(const uint8_t *pkt, size_t len)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < len && i < 1500; i++)
		sum += (uint64_t)pkt[i] << (i & 1 ? 0 : 8);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint64_t ref_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static uint32_t ref_calls(const uint8_t *pkt, size_t len)
{
	uint64_t seed, h = 0xcbf29ce484222325ULL;

	if (len < 8)
		return 0;
	memcpy(&seed, pkt, sizeof(seed));
	h ^= seed;
	for (int i = 0; i < 1000; i++)
		h = ref_mix(h, (uint64_t)i);
	return (uint32_t)(h ^ (h >> 32));
}

struct cpu_prog {
	const char *name; /* the object is NAME.bpf.o, the program NAME */
	const char *what;
	uint32_t (*reference)(const uint8_t *pkt, size_t len);
	/* Shown, but kept out of the targets and the geometric mean: why. */
	const char *extra;
};

static const struct cpu_prog cpu_progs[] = {
	{ "alu_loop", "xorshift64 + multiply/rotate mix, 2,000 rounds", ref_alu_loop },
	{ "sieve", "sieve of Eratosthenes, 2,048 bits on the stack", ref_sieve },
	{ "checksum", "RFC 1071 checksum, byte by byte, over a 1,500-byte packet", ref_checksum },
	{ "calls", "a 4-instruction mix function called 1,000 times (BPF-to-BPF)", ref_calls,
	  "the kernel's JIT ends every function with a jump to the return thunk of its"
	  " SRSO/retbleed mitigation (see the header) and user space has none; that, not"
	  " the JITs' code, is most of the gap" },
};

#define CPU_PROG_CNT (int)(sizeof(cpu_progs) / sizeof(cpu_progs[0]))

/* ---- options ------------------------------------------------------------ */

struct cpu_opts {
	int reps;
	double ms;        /* per batch */
	double warmup_ms; /* per engine and program */
	int cpu;
	bool kernel;
	bool checked;     /* the checking interpreter as a fourth engine */
	bool reload;      /* fresh JIT images for every repetition */
	bool median;      /* report medians instead of trimmed means */
	bool verbose;
	const char *dir;
	const char *dump_dir;
	const char *only; /* comma-separated program names, or NULL */
};

/* ---- the engines ---------------------------------------------------------- */

enum engine_id { ENG_INTERP, ENG_JIT, ENG_KERNEL, ENG_CHECKED, ENG_CNT };

static const char *const engine_names[ENG_CNT] = { "interpreter", "bpfrt JIT", "kernel",
						   "checking interpreter" };

struct engine {
	bool ok;
	char why[256];     /* why not ok */
	uint64_t batch;    /* runs per sample */
	double samples[MAX_REPS];
	struct bench_stats st;
};

/* The figure a cell shows: see "Timing" at the top of this file. */
static bool use_median;
/* --checked: the checking interpreter's figures too */
static bool show_checked;

static double center(const struct engine *e)
{
	return use_median ? e->st.median : e->st.tmean;
}

struct prog_result {
	const struct cpu_prog *cp;
	bool loaded;
	bool mismatch;      /* some engine disagreed with the reference */
	uint64_t executed;  /* instructions the interpreter executed per run */
	size_t insn_cnt;
	size_t jit_bytes, kernel_jit_bytes;
	struct engine eng[ENG_CNT];
};

struct cpu_env {
	const struct cpu_opts *o;
	uint8_t *pkt;            /* PKT_LEN bytes below 4 GiB */
	struct xdp_md ctx;       /* points at pkt */
	const struct bpf_insn *insns; /* of the program being measured */
	struct bpfrt_prog *interp, *jit;
	struct bpfrt_prog *checked; /* verified as XDP: its packet is a region */
	int kernel_fd;
	char *kernel_log;
};

static void engine_fail(struct engine *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void engine_fail(struct engine *e, const char *fmt, ...)
{
	va_list ap;

	e->ok = false;
	va_start(ap, fmt);
	vsnprintf(e->why, sizeof(e->why), fmt, ap);
	va_end(ap);
}

/* Runs n times in bpfrt and returns ns per run; *ret gets the last r0. */
static double bpfrt_batch(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode,
			  const struct xdp_md *ctx, uint64_t n, uint64_t *ret)
{
	uint64_t t0 = bench_thread_ns();

	if (mode == BPFRT_EXEC_CHECKED)
		for (uint64_t i = 0; i < n; i++)
			bpfrt_prog_run(prog, mode, (uintptr_t)ctx, sizeof(*ctx), ret);
	else
		for (uint64_t i = 0; i < n; i++)
			bpfrt_prog_run(prog, mode, (uintptr_t)ctx, 0, ret);
	return (double)(bench_thread_ns() - t0) / (double)n;
}

/* BPF_PROG_TEST_RUN with repeat = n: the kernel's own ns per run. */
static int kernel_batch(int fd, const uint8_t *pkt, uint64_t n, double *ns, uint32_t *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts,
		.data_in = pkt,
		.data_size_in = PKT_LEN,
		.repeat = (int)n,
	);
	int err = bpf_prog_test_run_opts(fd, &topts);

	if (err)
		return -errno;
	*ns = topts.duration;
	*ret = topts.retval;
	return 0;
}

/* One sample of engine id with n runs; returns ns/run or < 0 on error. */
static double engine_sample(struct cpu_env *env, enum engine_id id, uint64_t n, uint32_t *ret)
{
	uint64_t r0 = 0;
	double ns = -1;

	switch (id) {
	case ENG_INTERP:
		ns = bpfrt_batch(env->interp, BPFRT_EXEC_INTERP, &env->ctx, n, &r0);
		break;
	case ENG_JIT:
		ns = bpfrt_batch(env->jit, BPFRT_EXEC_JIT, &env->ctx, n, &r0);
		break;
	case ENG_CHECKED:
		ns = bpfrt_batch(env->checked, BPFRT_EXEC_CHECKED, &env->ctx, n, &r0);
		break;
	default: {
		uint32_t kret = 0;

		if (kernel_batch(env->kernel_fd, env->pkt, n, &ns, &kret))
			return -1;
		r0 = kret;
		break;
	}
	}
	*ret = (uint32_t)r0;
	return ns;
}

/* Warms the engine up for warmup_ms and sizes its batches to take ms. */
static void engine_calibrate(struct cpu_env *env, enum engine_id id, struct engine *e,
			     uint32_t expect)
{
	uint64_t n = 1, spent = 0, budget = (uint64_t)(env->o->warmup_ms * 1e6);
	double ns = 0, target = env->o->ms * 1e6;
	uint32_t ret;

	for (;;) {
		uint64_t t0 = bench_now_ns();

		ns = engine_sample(env, id, n, &ret);
		spent += bench_now_ns() - t0;
		if (ns < 0) {
			engine_fail(e, "test run failed: %s", strerror(errno));
			return;
		}
		if (ret != expect) {
			engine_fail(e, "returned %" PRIu32 ", reference %" PRIu32, ret, expect);
			return;
		}
		if (spent >= budget || n >= (1ull << 30))
			break;
		n *= 2;
	}
	if (ns < 0.1)
		ns = 0.1;
	e->batch = (uint64_t)(target / ns);
	if (e->batch < 1)
		e->batch = 1;
	if (e->batch > INT32_MAX) /* the kernel's repeat is a u32 */
		e->batch = INT32_MAX;
}

/* ---- loading ---------------------------------------------------------- */

/* The verifier's verdict: the last line of its log that is not the
 * closing "processed N insns ..." statistics. */
static void kernel_log_verdict(const char *log, char *out, size_t out_len)
{
	const char *end = log + strlen(log), *start;

	for (;;) {
		while (end > log && end[-1] == '\n')
			end--;
		start = end;
		while (start > log && start[-1] != '\n')
			start--;
		if (start == log || strncmp(start, "processed ", 10))
			break;
		end = start;
	}
	snprintf(out, out_len, "%.*s", (int)(end - start), start);
}

static size_t kernel_jited_len(int fd)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return 0;
	return info.jited_prog_len;
}

static int kernel_load(struct cpu_env *env, struct prog_result *r, const struct bpf_insn *insns)
{
	char tail[200] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, lopts,
		.log_buf = env->kernel_log,
		.log_size = KERNEL_LOG_SIZE,
		.log_level = 0,
	);
	int fd, e;

	env->kernel_log[0] = '\0';
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, r->cp->name, "GPL", insns, r->insn_cnt, &lopts);
	e = errno;
	if (fd < 0 && e != EPERM && e != ENOSYS) {
		/* again with the verifier log on, to say why (keeping the first
		 * errno: a long log may fail with ENOSPC instead) */
		lopts.log_level = 1;
		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, r->cp->name, "GPL", insns, r->insn_cnt, &lopts);
	}
	if (fd < 0) {
		kernel_log_verdict(env->kernel_log, tail, sizeof(tail));
		if (e == EPERM)
			engine_fail(&r->eng[ENG_KERNEL], "not permitted (needs root or CAP_BPF+CAP_NET_ADMIN)");
		else if (e == ENOSYS)
			engine_fail(&r->eng[ENG_KERNEL], "kernel without BPF syscall");
		else
			engine_fail(&r->eng[ENG_KERNEL], "bpf_prog_load: %s%s%s", strerror(e),
				    tail[0] ? ": " : "", tail);
		return -e;
	}
	env->kernel_fd = fd;
	r->eng[ENG_KERNEL].ok = true;
	r->kernel_jit_bytes = kernel_jited_len(fd);
	return 0;
}

static bool selected(const struct cpu_opts *o, const char *name)
{
	const char *p = o->only;
	size_t len = strlen(name);

	if (!p)
		return true;
	while (*p) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == len && !strncmp(p, name, len))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/* ---- the native-code dumps (--dump DIR) ------------------------------- */

static FILE *dump_open(const char *dir, const char *name, const char *suffix)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, suffix);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "bpfrt-bench: %s: %s\n", path, strerror(errno));
	return f;
}

static void disasm_x86(FILE *out, const uint8_t *code, size_t len)
{
	csh cs;
	cs_insn *insn;
	size_t cnt;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		fprintf(out, "(capstone unavailable)\n");
		return;
	}
	cnt = cs_disasm(cs, code, len, 0, 0, &insn);
	for (size_t i = 0; i < cnt; i++)
		fprintf(out, "%5" PRIx64 ":  %-8s %s\n", insn[i].address, insn[i].mnemonic,
			insn[i].op_str);
	if (cnt)
		cs_free(insn, cnt);
	cs_close(&cs);
}

static void kernel_dump_jited(FILE *out, int fd)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	uint8_t *code;
	__u32 len;

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len) || !info.jited_prog_len) {
		fprintf(out, "(kernel gives no JIT image)\n");
		return;
	}
	len = info.jited_prog_len;
	code = calloc(1, len);
	if (!code)
		return;
	memset(&info, 0, sizeof(info));
	info.jited_prog_len = len;
	info.jited_prog_insns = (uintptr_t)code;
	info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		fprintf(out, "(bpf_obj_get_info_by_fd: %s)\n", strerror(errno));
	else
		disasm_x86(out, code, len);
	free(code);
}

static void dump_prog(struct cpu_env *env, struct prog_result *r, const struct bpf_insn *insns)
{
	const char *dir = env->o->dump_dir, *name = r->cp->name;
	FILE *f;

	if ((f = dump_open(dir, name, ".bin"))) {
		fwrite(insns, sizeof(*insns), r->insn_cnt, f);
		fclose(f);
	}
	if ((f = dump_open(dir, name, ".xlated.txt"))) {
		bpfrt_disasm(insns, r->insn_cnt, f);
		fclose(f);
	}
	if (env->jit && (f = dump_open(dir, name, ".bpfrt-jited.txt"))) {
		if (bpfrt_prog_dump_jited(env->jit, f))
			fprintf(f, "(%s)\n", bpfrt_last_error());
		fclose(f);
	}
	if (env->kernel_fd >= 0 && (f = dump_open(dir, name, ".kernel-jited.txt"))) {
		kernel_dump_jited(f, env->kernel_fd);
		fclose(f);
	}
}

/* ---- one program ------------------------------------------------------ */

/* Where a JIT image lands decides how its loops meet the 32-byte fetch
 * blocks, worth 20% on checksum's loop here. Both allocators randomise the
 * image start, so one load is one draw: reloading before every repetition
 * makes the figure an average over placements, for our JIT and the
 * kernel's alike. A small image has only a few possible starts (16-byte
 * steps within its 64-byte chunks), so the samples are bimodal, e.g. 57%
 * near 600 ns and 43% near 735 ns: their median flips between the modes
 * from run to run, the trimmed mean does not. */
static void engine_reload(struct cpu_env *env, struct prog_result *r, enum engine_id id,
			  uint32_t expect)
{
	struct engine *e = &r->eng[id];
	uint32_t ret;

	if (id == ENG_JIT) {
		BPFRT_OPTS(bpfrt_prog_load_opts, lo, .name = r->cp->name,
			   .jit = true);

		bpfrt_prog_free(env->jit);
		env->jit = NULL;
		if (bpfrt_prog_load(env->insns, r->insn_cnt, &lo, &env->jit)) {
			engine_fail(e, "reload: %s", bpfrt_last_error());
			return;
		}
	} else if (id == ENG_KERNEL) {
		close(env->kernel_fd);
		env->kernel_fd = -1;
		if (kernel_load(env, r, env->insns))
			return;
	} else {
		return;
	}
	/* warm the new image's cache lines and branch history, untimed */
	engine_sample(env, id, e->batch / 4 + 1, &ret);
}

static void print_samples(const struct prog_result *r, enum engine_id id, int reps)
{
	fprintf(stderr, "%s, %s, sorted ns/run:", r->cp->name, engine_names[id]);
	for (int i = 0; i < reps; i++)
		fprintf(stderr, " %.0f", r->eng[id].samples[i]);
	fprintf(stderr, "\n");
}

static void run_prog(struct cpu_env *env, struct prog_result *r)
{
	const struct cpu_opts *o = env->o;
	uint32_t expect = r->cp->reference(env->pkt, PKT_LEN);
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .name = r->cp->name);
	struct bpf_insn *insns = NULL;
	char path[4096];
	uint64_t r0;
	int err;

	env->interp = env->jit = env->checked = NULL;
	env->kernel_fd = -1;
	snprintf(path, sizeof(path), "%s/%s.bpf.o", o->dir, r->cp->name);
	if (bench_load_obj_insns(path, r->cp->name, &insns, &r->insn_cnt))
		return;

	err = bpfrt_prog_load(insns, r->insn_cnt, &lo, &env->interp);
	if (err) {
		engine_fail(&r->eng[ENG_INTERP], "load: %s", bpfrt_last_error());
		engine_fail(&r->eng[ENG_JIT], "load: %s", bpfrt_last_error());
	} else {
		r->eng[ENG_INTERP].ok = true;
		r0 = bpfrt_interp_run_counted(env->interp, (uintptr_t)&env->ctx, 0, &r->executed);
		if ((uint32_t)r0 != expect) {
			engine_fail(&r->eng[ENG_INTERP], "returned %" PRIu32 ", reference %" PRIu32,
				    (uint32_t)r0, expect);
		}
		lo.jit = true;
		err = bpfrt_prog_load(insns, r->insn_cnt, &lo, &env->jit);
		if (err)
			engine_fail(&r->eng[ENG_JIT], "load: %s", bpfrt_last_error());
		else
			r->eng[ENG_JIT].ok = true;
		if (env->jit)
			bpfrt_prog_jited(env->jit, &r->jit_bytes);
	}
	r->loaded = true;
	if (o->checked && !err) {
		BPFRT_OPTS(bpfrt_prog_load_opts, co, .name = r->cp->name,
			   .kind = BPFRT_PROG_XDP);

		if (bpfrt_prog_load(insns, r->insn_cnt, &co, &env->checked))
			engine_fail(&r->eng[ENG_CHECKED], "load as XDP: %s", bpfrt_last_error());
		else
			r->eng[ENG_CHECKED].ok = true;
	} else {
		engine_fail(&r->eng[ENG_CHECKED], "not asked for (--checked)");
	}
	if (o->kernel)
		kernel_load(env, r, insns);
	else
		engine_fail(&r->eng[ENG_KERNEL], "disabled (--no-kernel)");
	if (o->dump_dir)
		dump_prog(env, r, insns);
	env->insns = insns;

	for (int id = 0; id < ENG_CNT; id++)
		if (r->eng[id].ok)
			engine_calibrate(env, id, &r->eng[id], expect);

	for (int rep = 0; rep < o->reps; rep++) {
		for (int id = 0; id < ENG_CNT; id++) {
			struct engine *e = &r->eng[id];
			uint32_t ret;
			double ns;

			if (e->ok && rep > 0 && o->reload)
				engine_reload(env, r, id, expect);
			if (!e->ok)
				continue;
			ns = engine_sample(env, id, e->batch, &ret);
			if (ns < 0)
				engine_fail(e, "test run failed: %s", strerror(errno));
			else if (ret != expect)
				engine_fail(e, "returned %" PRIu32 ", reference %" PRIu32, ret, expect);
			else
				e->samples[rep] = ns;
		}
	}
	for (int id = 0; id < ENG_CNT; id++) {
		struct engine *e = &r->eng[id];

		if (e->ok) {
			bench_stats_of(e->samples, o->reps, &e->st);
			if (o->verbose)
				print_samples(r, id, o->reps);
		} else if (strstr(e->why, "reference")) {
			r->mismatch = true;
		}
	}

	bpfrt_prog_free(env->interp);
	bpfrt_prog_free(env->jit);
	bpfrt_prog_free(env->checked);
	if (env->kernel_fd >= 0)
		close(env->kernel_fd);
	free(insns);
	env->insns = NULL;
}

/* ---- output ----------------------------------------------------------- */

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			colon += 2;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void print_header(const struct cpu_opts *o, int cpu)
{
	struct utsname u;
	char model[256];
	double load[3] = { 0 };

	cpu_model(model, sizeof(model));
	uname(&u);
	getloadavg(load, 3);
	printf("bpfrt-bench cpu: interpreter vs JIT vs Linux JIT (XDP, BPF_PROG_TEST_RUN)\n");
	printf("machine: %s, %ld CPUs, pinned to cpu %d; %s %s; load average %.2f\n",
	       model, sysconf(_SC_NPROCESSORS_ONLN), cpu, u.sysname, u.release, load[0]);
	if (o->kernel) {
		long jit = bench_read_sysctl("/proc/sys/net/core/bpf_jit_enable");

		char srso[128], retbleed[128];

		printf("kernel: bpf_jit_enable=%ld bpf_jit_harden=%ld bpf_stats_enabled=%ld%s\n",
		       jit, bench_read_sysctl("/proc/sys/net/core/bpf_jit_harden"),
		       bench_read_sysctl("/proc/sys/kernel/bpf_stats_enabled"),
		       jit == 0 ? " (the kernel column is the kernel's interpreter)" : "");
		read_line("/sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow",
			  srso, sizeof(srso));
		read_line("/sys/devices/system/cpu/vulnerabilities/retbleed",
			  retbleed, sizeof(retbleed));
		printf("kernel return mitigations: SRSO: %s; retbleed: %s\n", srso, retbleed);
	}
	printf("%d repetitions x ~%.0f ms per engine, engines interleaved, %.0f ms warm-up,"
	       " %s;\n%s +-half the min..max range\n\n", o->reps, o->ms, o->warmup_ms,
	       o->reload ? "JIT images reloaded every repetition" : "one JIT image per engine",
	       o->median ? "median" : "mean without the fastest and slowest 10%,");
}

static void fmt_ns(char *buf, size_t len, const struct engine *e)
{
	if (!e->ok)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f +-%.1f%%", center(e), bench_spread_pct(&e->st));
}

static void fmt_ratio(char *buf, size_t len, const struct engine *num, const struct engine *den)
{
	if (!num->ok || !den->ok || center(den) <= 0)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.2fx", center(num) / center(den));
}

struct verdict {
	double ratios[CPU_PROG_CNT]; /* kernel ns / our JIT ns */
	int ratio_cnt;
	int measured; /* programs with interpreter and JIT figures */
	int interp_measured;
	int extra_cnt;
	bool jit_5x, interp_fast, none_slower, all_measured;
};

static void print_table(struct prog_result *res, int cnt, struct verdict *v)
{
	const char *fmt = "%-10s %9s %17s %8s %15s %15s %10s %10s\n";

	memset(v, 0, sizeof(*v));
	v->jit_5x = v->interp_fast = v->none_slower = v->all_measured = true;
	printf(fmt, "program", "executed", "interp", "interp", "JIT", "kernel JIT",
	       "JIT vs", "ours vs");
	printf(fmt, "", "insns", "ns/run", "ns/insn", "ns/run", "ns/run", "interp", "kernel");
	for (int i = 0; i < cnt; i++) {
		struct prog_result *r = &res[i];
		struct engine *in = &r->eng[ENG_INTERP], *jit = &r->eng[ENG_JIT];
		struct engine *k = &r->eng[ENG_KERNEL];
		char ex[32], a[40], b[32], c[40], d[40], s[32], g[32], name[32];

		if (!r->loaded)
			continue;
		snprintf(ex, sizeof(ex), "%" PRIu64, r->executed);
		fmt_ns(a, sizeof(a), in);
		if (in->ok && r->executed)
			snprintf(b, sizeof(b), "%.2f", center(in) / (double)r->executed);
		else
			snprintf(b, sizeof(b), "n/a");
		fmt_ns(c, sizeof(c), jit);
		fmt_ns(d, sizeof(d), k);
		fmt_ratio(s, sizeof(s), in, jit);
		fmt_ratio(g, sizeof(g), k, jit);
		snprintf(name, sizeof(name), "%s%s", r->cp->name, r->cp->extra ? "*" : "");
		printf(fmt, name, ex, a, b, c, d, s, g);

		if (r->cp->extra) {
			v->extra_cnt++;
			continue;
		}
		if (!in->ok || !jit->ok || !k->ok)
			v->all_measured = false;
		if (in->ok && jit->ok)
			v->measured++;
		if (in->ok && r->executed)
			v->interp_measured++;
		if (!in->ok || !jit->ok || center(in) < 5 * center(jit))
			v->jit_5x = false;
		if (!in->ok || !r->executed || center(in) / (double)r->executed >= 2.5)
			v->interp_fast = false;
		if (jit->ok && k->ok) {
			double ratio = center(k) / center(jit);

			v->ratios[v->ratio_cnt++] = ratio;
			if (ratio < 1.0)
				v->none_slower = false;
		}
	}
}

static void print_notes(struct prog_result *res, int cnt, const struct verdict *v)
{
	double gm = bench_geomean(v->ratios, v->ratio_cnt);

	if (v->ratio_cnt)
		printf("\ngeometric mean, ours vs kernel (kernel ns / our JIT ns): %.2fx over %d programs%s\n",
		       gm, v->ratio_cnt, v->extra_cnt ? " (without *)" : "");
	else
		printf("\ngeometric mean, ours vs kernel: n/a (no kernel figures)\n");

	/* a target that could not be measured is not met either */
	printf("targets:\n");
	printf("  JIT at least 5x faster than the interpreter on each program: %s\n",
	       !v->measured ? "MISSED (not measured)" : v->jit_5x ? "met" : "MISSED");
	printf("  interpreter under 2.5 ns per instruction: %s\n",
	       !v->interp_measured ? "MISSED (not measured)" : v->interp_fast ? "met" : "MISSED");
	printf("  our JIT at least 1.2x the kernel's (geometric mean, none slower): %s\n",
	       !v->ratio_cnt ? "MISSED (no kernel figures: run as root)" :
	       (gm >= 1.2 && v->none_slower && v->all_measured) ? "met" : "MISSED");

	for (int i = 0; i < cnt; i++)
		if (res[i].loaded && res[i].cp->extra)
			printf("* %s: not in the targets or the mean: %s\n", res[i].cp->name,
			       res[i].cp->extra);

	printf("\nnative code bytes (bpfrt JIT / kernel JIT), BPF insns:");
	for (int i = 0; i < cnt; i++)
		if (res[i].loaded)
			printf(" %s %zu/%zu (%zu)", res[i].cp->name, res[i].jit_bytes,
			       res[i].kernel_jit_bytes, res[i].insn_cnt);
	printf("\n");

	if (show_checked) {
		printf("\nchecking interpreter (BPFRT_EXEC_CHECKED) vs interpreter, ns/insn:");
		for (int i = 0; i < cnt; i++) {
			const struct engine *in = &res[i].eng[ENG_INTERP];
			const struct engine *ch = &res[i].eng[ENG_CHECKED];

			if (!res[i].loaded || !in->ok || !ch->ok || !res[i].executed)
				continue;
			printf(" %s %.2f/%.2f (%.1fx)", res[i].cp->name,
			       center(ch) / (double)res[i].executed,
			       center(in) / (double)res[i].executed, center(ch) / center(in));
		}
		printf("\n");
	}
	for (int i = 0; i < cnt; i++)
		for (int id = 0; id < ENG_CNT; id++)
			if (res[i].loaded && !res[i].eng[id].ok &&
			    (id != ENG_CHECKED || show_checked))
				printf("note: %s, %s: %s\n", res[i].cp->name, engine_names[id],
				       res[i].eng[id].why);
}

/* ---- entry ------------------------------------------------------------ */

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static void cpu_usage(FILE *f)
{
	fprintf(f,
		"usage: bpfrt-bench cpu [options]\n"
		"  -r, --reps N        repetitions per engine (default 21)\n"
		"  -t, --ms MS         milliseconds per timed batch (default 10)\n"
		"  -w, --warmup MS     warm-up per engine and program (default 100)\n"
		"  -c, --cpu N         pin to CPU N (default: the current one)\n"
		"  -p, --prog A,B      only these programs\n"
		"  -d, --dir DIR       where NAME.bpf.o are (default: <binary dir>/bench/progs)\n"
		"  -k, --no-kernel     skip the kernel column\n"
		"  -C, --checked       also time the checking interpreter (BPFRT_EXEC_CHECKED,\n"
		"                      the program verified as XDP) against the interpreter\n"
		"  -D, --dump DIR      write NAME.bin, NAME.xlated.txt, NAME.bpfrt-jited.txt and\n"
		"                      NAME.kernel-jited.txt into DIR\n"
		"  -R, --no-reload     keep one JIT image per engine instead of loading the\n"
		"                      program afresh (new image placement) every repetition\n"
		"  -M, --median        report medians instead of 10%%-trimmed means\n"
		"  -v, --verbose       libbpf's messages and every sample (stderr)\n"
		"programs:\n");
	for (int i = 0; i < CPU_PROG_CNT; i++)
		fprintf(f, "  %-10s %s\n", cpu_progs[i].name, cpu_progs[i].what);
}

static int parse_opts(int argc, char **argv, struct cpu_opts *o)
{
	static const struct option longopts[] = {
		{ "reps", required_argument, NULL, 'r' },
		{ "ms", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "prog", required_argument, NULL, 'p' },
		{ "dir", required_argument, NULL, 'd' },
		{ "no-kernel", no_argument, NULL, 'k' },
		{ "checked", no_argument, NULL, 'C' },
		{ "dump", required_argument, NULL, 'D' },
		{ "no-reload", no_argument, NULL, 'R' },
		{ "median", no_argument, NULL, 'M' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	*o = (struct cpu_opts){ .reps = 21, .ms = 10, .warmup_ms = 100, .cpu = -1,
				.kernel = true, .reload = true,
				.dir = bench_default_progs_dir() };
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:t:w:c:p:d:kCD:RMvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': o->reps = atoi(optarg); break;
		case 't': o->ms = atof(optarg); break;
		case 'w': o->warmup_ms = atof(optarg); break;
		case 'c': o->cpu = atoi(optarg); break;
		case 'p': o->only = optarg; break;
		case 'd': o->dir = optarg; break;
		case 'k': o->kernel = false; break;
		case 'C': o->checked = true; show_checked = true; break;
		case 'D': o->dump_dir = optarg; break;
		case 'R': o->reload = false; break;
		case 'M': o->median = true; break;
		case 'v': o->verbose = true; break;
		case 'h': cpu_usage(stdout); exit(0);
		default: cpu_usage(stderr); return -EINVAL;
		}
	}
	if (o->only) {
		int hits = 0;

		for (int i = 0; i < CPU_PROG_CNT; i++)
			hits += selected(o, cpu_progs[i].name);
		if (!hits) {
			fprintf(stderr, "bpfrt-bench cpu: no program named in '%s'\n", o->only);
			return -EINVAL;
		}
	}
	if (o->reps < 1 || o->reps > MAX_REPS || o->ms <= 0 || o->warmup_ms < 0) {
		fprintf(stderr, "bpfrt-bench cpu: reps must be 1..%d, ms > 0\n", MAX_REPS);
		return -EINVAL;
	}
	return 0;
}

/* A packet below 4 GiB so that struct xdp_md's u32 fields can hold its
 * address (see the top of this file). */
static uint8_t *map_low_packet(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	if (p == MAP_FAILED || (uintptr_t)p + 4096 > UINT32_MAX) {
		fprintf(stderr, "bpfrt-bench cpu: no memory below 4 GiB: %s\n", strerror(errno));
		return NULL;
	}
	return p;
}

/* Deterministic pseudo-random payload: the same packet every run. */
static void fill_packet(uint8_t *pkt)
{
	uint32_t s = 0x2545f491;

	for (int i = 0; i < PKT_LEN; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		pkt[i] = (uint8_t)s;
	}
}

static int cpu_run(int argc, char **argv)
{
	struct prog_result res[CPU_PROG_CNT];
	struct cpu_env env = { 0 };
	struct cpu_opts o;
	struct verdict v;
	int cpu, bad = 0;

	if (parse_opts(argc, argv, &o))
		return 2;
	use_median = o.median;
	env.o = &o;
	libbpf_set_print(o.verbose ? NULL : libbpf_quiet);
	env.pkt = map_low_packet();
	env.kernel_log = malloc(KERNEL_LOG_SIZE);
	if (!env.pkt || !env.kernel_log)
		return 1;
	fill_packet(env.pkt);
	env.ctx = (struct xdp_md){
		.data = (uint32_t)(uintptr_t)env.pkt,
		.data_end = (uint32_t)(uintptr_t)(env.pkt + PKT_LEN),
		.data_meta = (uint32_t)(uintptr_t)env.pkt,
		.ingress_ifindex = 1,
	};
	cpu = bench_pin_cpu(o.cpu);
	if (cpu < 0)
		fprintf(stderr, "bpfrt-bench cpu: cannot pin: %s\n", strerror(-cpu));
	print_header(&o, cpu);

	memset(res, 0, sizeof(res));
	for (int i = 0; i < CPU_PROG_CNT; i++) {
		res[i].cp = &cpu_progs[i];
		if (!selected(&o, cpu_progs[i].name))
			continue;
		run_prog(&env, &res[i]);
		if (!res[i].loaded || res[i].mismatch)
			bad = 1;
	}
	print_table(res, CPU_PROG_CNT, &v);
	print_notes(res, CPU_PROG_CNT, &v);
	free(env.kernel_log);
	munmap(env.pkt, 4096);
	return bad;
}

const struct bench bench_cpu = {
	.name = "cpu",
	.summary = "interpreter vs JIT vs kernel JIT on CPU-bound XDP programs (ns/run)",
	.run = cpu_run,
};
