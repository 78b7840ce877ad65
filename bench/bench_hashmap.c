/* `bpfrt-bench hashmap`: the hash map workload of the private-stack benchmark in
 * bpfrt's interpreter, bpfrt's JIT and the kernel.
 *
 * bench/progs/hash_iters.bpf.c does `iters` iterations of update (insert),
 * lookup (hit) and delete of a 48-byte key with a 48-byte value in a
 * BPF_MAP_TYPE_HASH. The same .bpf.o is
 *  - opened and loaded by bpfrt_object_open/load (twice: interpreter, JIT),
 *    the knob set through bpfrt_object_global, and run here in a loop;
 *  - opened by libbpf (bpf_object__open_file), its map replaced by one made
 *    with bpf_map_create (bpf_map__reuse_fd), the knob set in .rodata, loaded
 *    as XDP and run with BPF_PROG_TEST_RUN (repeat = N), whose duration is
 *    the kernel's average ns per run.
 * Before timing, user space fills each map with --fill other keys, so the
 * lookups walk a table that is not empty. Every engine must return the
 * same checksum.
 *
 * Timing as `bpfrt-bench cpu`: after a warm-up each repetition times one
 * batch per engine (engines interleaved), batches sized to take --ms; a
 * cell is the mean without the fastest and slowest 10% of repetitions, and
 * +- half the min..max range as a percentage. bpfrt's batches are timed in
 * thread CPU time, as the kernel's test-run timer excludes preemption. */
#define _GNU_SOURCE
#include "bench.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_REPS 101
#define MAX_ITERS 4096 /* the program's own bound */
#define KEY_WORDS 6

enum { ENG_INTERP, ENG_JIT, ENG_KERNEL, ENG_CNT };

static const char *const engine_names[ENG_CNT] = { "bpfrt interpreter", "bpfrt JIT",
						    "kernel (XDP test run)" };

struct hm_opts {
	uint32_t iters, fill;
	int reps, cpu;
	double ms, warmup_ms;
	bool kernel, verbose;
	const char *dir;
};

struct hm_engine {
	bool ok;
	char why[256];
	uint32_t ret;
	uint64_t batch;
	double samples[MAX_REPS];
	struct bench_stats st;
};

struct hm_env {
	const struct hm_opts *o;
	char path[4096];
	struct bpfrt_object *obj[2];  /* interpreter, JIT */
	struct bpfrt_prog *prog[2];
	struct bpf_object *kobj;
	int kprog_fd, kmap_fd;
	uint8_t pkt[64];
	struct hm_engine eng[ENG_CNT];
};

static void fill_key(uint64_t *key, uint32_t i)
{
	memset(key, 0, KEY_WORDS * 8);
	key[0] = i;
	key[3] = (uint64_t)i * 0xff51afd7ed558ccdULL;
	key[5] = 0xf111; /* never the program's 0xb0b0 */
}

/* ---- bpfrt ------------------------------------------------------------------ */

static int bpfrt_setup(struct hm_env *env, int jit)
{
	struct hm_engine *e = &env->eng[jit ? ENG_JIT : ENG_INTERP];
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	struct bpfrt_object *obj;
	struct bpfrt_map *map;
	uint32_t *iters;
	size_t sz;
	int err;

	err = bpfrt_object_open(env->path, NULL, &obj);
	if (err) {
		snprintf(e->why, sizeof(e->why), "open: %s", bpfrt_last_error());
		return err;
	}
	env->obj[jit] = obj;
	iters = bpfrt_object_global(obj, "iters", &sz);
	if (!iters || sz != sizeof(*iters)) {
		snprintf(e->why, sizeof(e->why), "no 'iters' knob: %s", bpfrt_last_error());
		return -ENOENT;
	}
	*iters = env->o->iters;
	err = bpfrt_object_load(obj, &lo);
	if (err) {
		snprintf(e->why, sizeof(e->why), "load: %s", bpfrt_last_error());
		return err;
	}
	env->prog[jit] = bpfrt_object_find_prog(obj, "hash_iters");
	map = bpfrt_object_find_map(obj, "hmap");
	if (!env->prog[jit] || !map) {
		snprintf(e->why, sizeof(e->why), "%s", bpfrt_last_error());
		return -ENOENT;
	}
	for (uint32_t i = 0; i < env->o->fill; i++) {
		uint64_t key[KEY_WORDS], val[KEY_WORDS] = { i };

		fill_key(key, i);
		err = bpfrt_map_update_elem(map, key, val, BPF_NOEXIST);
		if (err) {
			snprintf(e->why, sizeof(e->why), "fill: %s", bpfrt_last_error());
			return err;
		}
	}
	e->ok = true;
	return 0;
}

static double bpfrt_batch(struct hm_env *env, int jit, uint64_t n, uint32_t *ret)
{
	enum bpfrt_exec_mode mode = jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	uint64_t r0 = 0, t0 = bench_thread_ns();

	for (uint64_t i = 0; i < n; i++)
		bpfrt_prog_run(env->prog[jit], mode, (uintptr_t)env->pkt, sizeof(env->pkt), &r0);
	*ret = (uint32_t)r0;
	return (double)(bench_thread_ns() - t0) / (double)n;
}

/* ---- the kernel --------------------------------------------------------- */

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* Sets the const volatile `iters` in the .rodata image before load. */
static int kernel_set_iters(struct bpf_object *obj, uint32_t iters)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *ds;
	struct bpf_map *rodata = NULL, *m;
	const void *init;
	size_t size;
	char *img;
	int id, err = -ENOENT;

	bpf_object__for_each_map(m, obj)
		if (strstr(bpf_map__name(m), ".rodata"))
			rodata = m;
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	if (!rodata || id < 0 || !(init = bpf_map__initial_value(rodata, &size)))
		return -ENOENT;
	img = malloc(size);
	if (!img)
		return -ENOMEM;
	memcpy(img, init, size);
	ds = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(ds);
	for (int i = 0; i < btf_vlen(ds); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), "iters") ||
		    vs->offset + sizeof(iters) > size)
			continue;
		memcpy(img + vs->offset, &iters, sizeof(iters));
		err = bpf_map__set_initial_value(rodata, img, size);
		break;
	}
	free(img);
	return err;
}

static int kernel_setup(struct hm_env *env)
{
	struct hm_engine *e = &env->eng[ENG_KERNEL];
	struct bpf_program *prog;
	struct bpf_map *map;
	int err;

	env->kprog_fd = env->kmap_fd = -1;
	env->kobj = bpf_object__open_file(env->path, NULL);
	if (!env->kobj) {
		snprintf(e->why, sizeof(e->why), "bpf_object__open_file: %s", strerror(errno));
		return -errno;
	}
	map = bpf_object__find_map_by_name(env->kobj, "hmap");
	prog = bpf_object__find_program_by_name(env->kobj, "hash_iters");
	if (!map || !prog) {
		snprintf(e->why, sizeof(e->why), "no hmap or hash_iters in the object");
		return -ENOENT;
	}
	bpf_program__set_type(prog, BPF_PROG_TYPE_XDP);
	env->kmap_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "hmap", bpf_map__key_size(map),
				      bpf_map__value_size(map), bpf_map__max_entries(map), NULL);
	if (env->kmap_fd < 0) {
		err = -errno;
		snprintf(e->why, sizeof(e->why), "bpf_map_create: %s%s", strerror(-err),
			 err == -EPERM ? " (needs root or CAP_BPF)" : "");
		return err;
	}
	err = bpf_map__reuse_fd(map, env->kmap_fd);
	if (!err)
		err = kernel_set_iters(env->kobj, env->o->iters);
	if (!err)
		err = bpf_object__load(env->kobj);
	if (err) {
		snprintf(e->why, sizeof(e->why), "libbpf load: %s (-v shows the verifier log)",
			 strerror(err < 0 ? -err : err));
		return err;
	}
	env->kprog_fd = bpf_program__fd(prog);
	for (uint32_t i = 0; i < env->o->fill; i++) {
		uint64_t key[KEY_WORDS], val[KEY_WORDS] = { i };

		fill_key(key, i);
		if (bpf_map_update_elem(env->kmap_fd, key, val, BPF_NOEXIST)) {
			err = -errno;
			snprintf(e->why, sizeof(e->why), "fill: %s", strerror(errno));
			return err;
		}
	}
	e->ok = true;
	return 0;
}

static double kernel_batch(struct hm_env *env, uint64_t n, uint32_t *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts,
		.data_in = env->pkt,
		.data_size_in = sizeof(env->pkt),
		.repeat = (int)n,
	);

	if (bpf_prog_test_run_opts(env->kprog_fd, &topts))
		return -1;
	*ret = topts.retval;
	return topts.duration;
}

/* ---- measuring -------------------------------------------------------------- */

static double sample(struct hm_env *env, int id, uint64_t n, uint32_t *ret)
{
	return id == ENG_KERNEL ? kernel_batch(env, n, ret) : bpfrt_batch(env, id == ENG_JIT, n, ret);
}

static void calibrate(struct hm_env *env, int id)
{
	struct hm_engine *e = &env->eng[id];
	uint64_t n = 1, spent = 0, budget = (uint64_t)(env->o->warmup_ms * 1e6);
	double ns = 0;

	for (;;) {
		uint64_t t0 = bench_now_ns();

		ns = sample(env, id, n, &e->ret);
		spent += bench_now_ns() - t0;
		if (ns < 0) {
			e->ok = false;
			snprintf(e->why, sizeof(e->why), "test run: %s", strerror(errno));
			return;
		}
		if (spent >= budget || n >= (1u << 24))
			break;
		n *= 2;
	}
	e->batch = (uint64_t)(env->o->ms * 1e6 / (ns > 1 ? ns : 1));
	if (e->batch < 1)
		e->batch = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bpfrt-bench hashmap [options]\n"
		"  -n, --iters N     hash iterations per run (update+lookup+delete; default 256, max %d)\n"
		"  -f, --fill N      keys user space puts in the map first (default 1000)\n"
		"  -r, --reps N      repetitions per engine (default 21)\n"
		"  -t, --ms MS       milliseconds per timed batch (default 10)\n"
		"  -w, --warmup MS   warm-up per engine (default 100)\n"
		"  -c, --cpu N       pin to CPU N (default: the current one)\n"
		"  -k, --no-kernel   skip the kernel column\n"
		"  -d, --dir DIR     where hash_iters.bpf.o is (default: <binary dir>/bench/progs)\n"
		"  -v, --verbose     libbpf's messages (the verifier log on failure)\n", MAX_ITERS);
}

static int parse_opts(int argc, char **argv, struct hm_opts *o)
{
	static const struct option lo[] = {
		{ "iters", required_argument, NULL, 'n' }, { "fill", required_argument, NULL, 'f' },
		{ "reps", required_argument, NULL, 'r' }, { "ms", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'w' }, { "cpu", required_argument, NULL, 'c' },
		{ "no-kernel", no_argument, NULL, 'k' }, { "dir", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' }, { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*o = (struct hm_opts){ .iters = 256, .fill = 1000, .reps = 21, .cpu = -1, .ms = 10,
			       .warmup_ms = 100, .kernel = true };
	while ((c = getopt_long(argc, argv, "n:f:r:t:w:c:kd:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'n': o->iters = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'f': o->fill = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': o->reps = atoi(optarg); break;
		case 't': o->ms = atof(optarg); break;
		case 'w': o->warmup_ms = atof(optarg); break;
		case 'c': o->cpu = atoi(optarg); break;
		case 'k': o->kernel = false; break;
		case 'd': o->dir = optarg; break;
		case 'v': o->verbose = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -EINVAL;
		}
	}
	if (o->iters < 1 || o->iters > MAX_ITERS || o->fill > 8000 || o->reps < 1 ||
	    o->reps > MAX_REPS || o->ms <= 0) {
		fprintf(stderr, "bpfrt-bench hashmap: -n 1..%d, -f <= 8000, -r 1..%d, -t > 0\n",
			MAX_ITERS, MAX_REPS);
		return -EINVAL;
	}
	return 0;
}

static void print_table(struct hm_env *env, int cpu)
{
	const struct hm_opts *o = env->o;
	const struct hm_engine *k = &env->eng[ENG_KERNEL];
	struct utsname u;

	uname(&u);
	printf("bpfrt-bench hashmap: %u x (update + lookup + delete), 48-byte keys and values, "
	       "BPF_MAP_TYPE_HASH (8192 entries, %u other keys)\n", o->iters, o->fill);
	printf("machine: %ld CPUs, pinned to cpu %d; Linux %s; bpf_jit_enable=%ld\n",
	       sysconf(_SC_NPROCESSORS_ONLN), cpu, u.release,
	       bench_read_sysctl("/proc/sys/net/core/bpf_jit_enable"));
	printf("%d repetitions x ~%.0f ms per engine, engines interleaved; mean without the "
	       "fastest and slowest 10%%, +-half the min..max range\n\n", o->reps, o->ms);
	printf("%-22s %16s %12s %10s %10s\n", "engine", "ns/run", "ns/iter", "checksum",
	       "vs kernel");
	for (int id = 0; id < ENG_CNT; id++) {
		const struct hm_engine *e = &env->eng[id];
		char vs[32] = "-";

		if (!e->ok) {
			printf("%-22s %s\n", engine_names[id], e->why);
			continue;
		}
		if (k->ok && id != ENG_KERNEL && e->st.tmean > 0)
			snprintf(vs, sizeof(vs), "%.2fx", k->st.tmean / e->st.tmean);
		printf("%-22s %9.1f +-%4.1f%% %12.2f %10" PRIu32 " %10s\n", engine_names[id],
		       e->st.tmean, bench_spread_pct(&e->st), e->st.tmean / o->iters, e->ret, vs);
	}
	if (k->ok && env->eng[ENG_JIT].ok)
		printf("\ntarget: bpfrt JIT no slower than the kernel per iteration: %s\n",
		       env->eng[ENG_JIT].st.tmean <= k->st.tmean ? "met" : "MISSED");
	printf("(vs kernel: kernel ns / engine ns; > 1 means faster than the kernel)\n");
}

static int hashmap_run(int argc, char **argv)
{
	struct hm_opts o;
	struct hm_env *env;
	int cpu, ids[ENG_CNT], n = 0, rc = 0;

	if (parse_opts(argc, argv, &o))
		return 2;
	env = calloc(1, sizeof(*env));
	if (!env)
		return 1;
	env->o = &o;
	env->kprog_fd = env->kmap_fd = -1;
	snprintf(env->path, sizeof(env->path), "%s/hash_iters.bpf.o",
		 o.dir ? o.dir : bench_default_progs_dir());
	if (!o.verbose)
		libbpf_set_print(silent_print);
	cpu = bench_pin_cpu(o.cpu);
	bpfrt_setup(env, 0);
	bpfrt_setup(env, 1);
	if (o.kernel)
		kernel_setup(env);
	else
		snprintf(env->eng[ENG_KERNEL].why, sizeof(env->eng[ENG_KERNEL].why), "skipped (-k)");
	for (int id = 0; id < ENG_CNT; id++) {
		if (env->eng[id].ok)
			calibrate(env, id);
		if (env->eng[id].ok)
			ids[n++] = id;
	}
	/* Every engine must agree on what the lookups saw. */
	for (int i = 1; i < n; i++)
		if (env->eng[ids[i]].ret != env->eng[ids[0]].ret) {
			fprintf(stderr, "bpfrt-bench hashmap: %s returned %" PRIu32 ", %s %" PRIu32 "\n",
				engine_names[ids[i]], env->eng[ids[i]].ret, engine_names[ids[0]],
				env->eng[ids[0]].ret);
			rc = 1;
		}
	for (int rep = 0; rep < o.reps; rep++)
		for (int i = 0; i < n; i++) {
			struct hm_engine *e = &env->eng[ids[i]];
			uint32_t ret;

			e->samples[rep] = sample(env, ids[i], e->batch, &ret);
		}
	for (int i = 0; i < n; i++)
		bench_stats_of(env->eng[ids[i]].samples, o.reps, &env->eng[ids[i]].st);
	print_table(env, cpu);
	if (!env->eng[ENG_INTERP].ok || !env->eng[ENG_JIT].ok)
		rc = 1;
	bpfrt_object_close(env->obj[0]);
	bpfrt_object_close(env->obj[1]);
	bpf_object__close(env->kobj);
	if (env->kmap_fd >= 0)
		close(env->kmap_fd);
	free(env);
	return rc;
}

const struct bench bench_hashmap = {
	.name = "hashmap",
	.summary = "hash map update/lookup/delete, 48-byte keys: interpreter, JIT, kernel",
	.run = hashmap_run,
};
