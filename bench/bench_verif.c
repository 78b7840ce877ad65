/* verif: a veristat-like comparison of bpfrt's verifier with the kernel's
 * on the same BPF objects. For each program of each object it prints the
 * instructions the verifier processed, the states it kept (total and at
 * the peak), the memory of the kept states at the peak and the wall time,
 * bpfrt's beside the kernel's where the kernel can load the program.
 *
 * bpfrt: the object is loaded trusted (maps, relocations), then
 * bpfrt_prog_verify runs on the program; the time is the best of -n runs.
 * Kernel: libbpf loads the object with only that program autoloaded and
 * log level 4 (BPF_LOG_STATS), whose log says "verification time N usec"
 * and "processed N insns (limit ...) max_states_per_insn N total_states N
 * peak_states N". The kernel reports no memory: its column is peak_states
 * times the size of one kernel state of the program's frames (struct
 * bpf_verifier_state + bpf_func_state + a bpf_stack_state per 8 bytes of
 * stack, sizes read from the running kernel's BTF), an estimate that
 * leaves out its per-insn lists and jump histories. */
#include "bench.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KLOG_SIZE (16u << 20)

struct verif_row {
	bool ok;
	bool ran;
	char why[96];
	uint64_t insns;
	uint64_t states, peak_states;
	uint64_t peak_bytes;   /* kernel: estimate (see above) */
	double ms;
};

static int bpfrt_side(const char *path, const char *prog_name, int runs, struct verif_row *r)
{
	struct bpfrt_object *obj = NULL;
	struct bpfrt_prog *p;
	int err;

	r->ran = true;
	if ((err = bpfrt_object_open(path, NULL, &obj))) {
		snprintf(r->why, sizeof(r->why), "open: %s", bpfrt_last_error());
		return err;
	}
	err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .trusted = true,
		/* privileged, as the kernel's root loads are (pointer
		 * subtraction, comparisons) */
		.prog_flags = BPFRT_F_ALLOW_PTR_LEAKS });
	if (err) {
		snprintf(r->why, sizeof(r->why), "load: %s", bpfrt_last_error());
		bpfrt_object_close(obj);
		return err;
	}
	p = bpfrt_object_find_prog(obj, prog_name);
	if (!p) {
		snprintf(r->why, sizeof(r->why), "no program %s", prog_name);
		bpfrt_object_close(obj);
		return -ENOENT;
	}
	r->ms = 0;
	for (int i = 0; i < runs; i++) {
		BPFRT_OPTS(bpfrt_verify_opts, vo);
		uint64_t t0 = bench_now_ns();
		double ms;

		err = bpfrt_prog_verify(p, &vo);
		ms = (double)(bench_now_ns() - t0) / 1e6;
		if (!i || ms < r->ms)
			r->ms = ms;
		r->insns = vo.insn_processed;
		r->states = vo.states;
		r->peak_states = vo.peak_states;
		r->peak_bytes = vo.peak_state_bytes;
		r->ok = !err;
		if (err) {
			snprintf(r->why, sizeof(r->why), "%s", bpfrt_last_error());
			break;
		}
	}
	bpfrt_object_close(obj);
	return 0;
}

/* Size of a struct of the running kernel, from its BTF (0 if unknown). */
static long kernel_struct_size(const struct btf *vmlinux, const char *name)
{
	int id = vmlinux ? btf__find_by_name_kind(vmlinux, name, BTF_KIND_STRUCT) : -1;

	return id > 0 ? btf__resolve_size(vmlinux, id) : 0;
}

static const char *log_find_u64(const char *log, const char *key, uint64_t *v)
{
	const char *at = strstr(log, key);

	if (at)
		*v = strtoull(at + strlen(key), NULL, 10);
	return at;
}

static void kernel_side(const char *path, const char *prog_name, const struct btf *vmlinux,
			struct verif_row *r)
{
	struct bpf_object *obj;
	struct bpf_program *p, *target = NULL;
	char *log;
	uint64_t usec = 0, depth = 0;
	int err;

	r->ran = true;
	if (geteuid() != 0) {
		snprintf(r->why, sizeof(r->why), "not root");
		r->ran = false;
		return;
	}
	log = calloc(1, KLOG_SIZE);
	if (!log) {
		snprintf(r->why, sizeof(r->why), "out of memory");
		return;
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		snprintf(r->why, sizeof(r->why), "libbpf open: %s", strerror(errno));
		free(log);
		return;
	}
	bpf_object__for_each_program(p, obj) {
		bool mine = !strcmp(bpf_program__name(p), prog_name);

		bpf_program__set_autoload(p, mine);
		if (mine)
			target = p;
	}
	if (!target) {
		snprintf(r->why, sizeof(r->why), "libbpf: no program %s", prog_name);
		goto out;
	}
	bpf_program__set_log_level(target, 4);
	bpf_program__set_log_buf(target, log, KLOG_SIZE);
	err = bpf_object__load(obj);
	r->ok = !err;
	if (!log_find_u64(log, "processed ", &r->insns)) {
		snprintf(r->why, sizeof(r->why), "kernel refused the load: %s (no verifier log)",
			 strerror(-err));
		r->ran = false;
		goto out;
	}
	log_find_u64(log, "total_states ", &r->states);
	log_find_u64(log, "peak_states ", &r->peak_states);
	log_find_u64(log, "verification time ", &usec);
	/* "stack depth 120+24": the main program's frame first */
	log_find_u64(log, "stack depth ", &depth);
	r->ms = (double)usec / 1e3;
	{
		long vs = kernel_struct_size(vmlinux, "bpf_verifier_state");
		long fs = kernel_struct_size(vmlinux, "bpf_func_state");
		long ss = kernel_struct_size(vmlinux, "bpf_stack_state");

		r->peak_bytes = vs && fs && ss ?
			r->peak_states * (uint64_t)(vs + fs + (long)((depth + 7) / 8) * ss) : 0;
	}
	if (err) {
		/* the rejection: the line before "verification time ..." */
		const char *end = strstr(log, "verification time "), *line;

		if (!end)
			end = strstr(log, "processed ");
		while (end > log && end[-1] == '\n')
			end--;
		line = end;
		while (line > log && line[-1] != '\n')
			line--;
		snprintf(r->why, sizeof(r->why), "%.*s", (int)(end - line), line);
	}
out:
	bpf_object__close(obj);
	free(log);
}

static void print_row(const char *who, const struct verif_row *r)
{
	if (!r->ran) {
		printf("  %-7s skipped: %s\n", who, r->why);
		return;
	}
	printf("  %-7s %-6s %9" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10.1f %10.2f%s%s\n", who,
	       r->ok ? "ok" : "REJECT", r->insns, r->states, r->peak_states,
	       (double)r->peak_bytes / 1024, r->ms, r->ok ? "" : "  ", r->ok ? "" : r->why);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bpfrt-bench verif [-n RUNS] [--no-kernel] OBJ[@KERNEL_OBJ][:PROG]...\n"
		   "  every program of each object (or PROG only): processed insns, states\n"
		   "  (total, peak), peak state memory (KiB; kernel: estimated) and wall time\n"
		   "  (ms; bpfrt: best of RUNS, default 3; kernel: its verification time).\n"
		   "  KERNEL_OBJ: the kernel verifies that object instead (a variant of OBJ\n"
		   "  for a program kind bpfrt does not have)\n");
}

static int run_one(const char *path, const char *kpath, const char *prog_name, int runs,
		   bool kernel, const struct btf *vmlinux)
{
	struct verif_row b = { 0 }, k = { 0 };
	const char *base = strrchr(path, '/');

	bpfrt_side(path, prog_name, runs, &b);
	printf("%s:%s\n", base ? base + 1 : path, prog_name);
	print_row("bpfrt", &b);
	if (kernel) {
		kernel_side(kpath, prog_name, vmlinux, &k);
		print_row("kernel", &k);
	}
	fflush(stdout);
	return b.ok ? 0 : 1;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int verif_run(int argc, char **argv)
{
	struct btf *vmlinux = NULL;
	bool kernel = true;
	int runs = 3, i, fails = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			runs = atoi(argv[++i]);
			if (runs < 1)
				runs = 1;
		} else if (!strcmp(argv[i], "--no-kernel")) {
			kernel = false;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (i == argc) {
		usage(stderr);
		return 2;
	}
	libbpf_set_print(libbpf_quiet);
	if (kernel)
		vmlinux = btf__load_vmlinux_btf();
	printf("%-9s %-6s %9s %8s %8s %10s %10s\n", "", "", "insns", "states", "peak", "peak KiB",
	       "ms");
	for (; i < argc; i++) {
		char path[4096], *colon, *kpath, *at;
		struct bpf_object *obj;
		struct bpf_program *p;

		snprintf(path, sizeof(path), "%s", argv[i]);
		kpath = path;
		if ((at = strchr(path, '@'))) {
			*at = 0;
			kpath = at + 1;
		}
		colon = strrchr(kpath, ':');
		if (colon && colon > strrchr(kpath, '/')) {
			*colon = 0;
			fails += run_one(path, kpath, colon + 1, runs, kernel, vmlinux);
			continue;
		}
		/* every program, named as libbpf names them */
		obj = bpf_object__open_file(path, NULL);
		if (!obj) {
			printf("%s: cannot open: %s\n", path, strerror(errno));
			fails++;
			continue;
		}
		bpf_object__for_each_program(p, obj)
			fails += run_one(path, kpath, bpf_program__name(p), runs, kernel, vmlinux);
		bpf_object__close(obj);
	}
	btf__free(vmlinux);
	return fails ? 1 : 0;
}

const struct bench bench_verif = {
	.name = "verif",
	.summary = "verifier: processed insns, states, peak memory, time; bpfrt beside the kernel",
	.run = verif_run,
};
