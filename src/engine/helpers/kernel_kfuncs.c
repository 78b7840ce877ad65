/* Linux's kernel-object kfuncs and context casts (kernel_kfuncs.h), with
 * Linux's names, flags and kfunc sets (own code; the prototypes are those
 * of kernel/bpf/helpers.c, kernel/bpf/cpumask.c, kernel/trace/bpf_trace.c
 * and fs/bpf_fs_kfuncs.c in Linux 6.12).
 *
 * The run-time functions: user space has no kernel task, cgroup, key or
 * file, and bpfrt no cpumask allocator, so every lookup or acquire that
 * Linux lets fail (KF_RET_NULL) finds none, and NULL is what a program
 * verified as Linux verifies it handles; the verifier's reference
 * tracking then leaves it nothing to release. The functions that cannot
 * fail take a pointer the program can only have had from one of those
 * (none exists at run time) or from bpf_get_current_task_btf, which is 0
 * here (no kernel task; typed loads through it read zeros, as every load
 * through a PTR_TO_BTF_ID is fault-safe), and never read through it. */
#include "helpers/kernel_kfuncs.h"
#include "core/env.h"
#include "core/prog_kind.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>

#define U(x) (void)(x)

/* nothing of the kind exists in user space: NULL, 0, or nothing to do */
static uint64_t kf_none(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	U(r1), U(r2), U(r3), U(r4), U(r5);
	return 0;
}

/* bpf_cpumask_acquire: a new reference to the same mask (it takes only
 * a trusted mask, and at run time there is none: never called with one) */
static uint64_t kf_same(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	U(r2), U(r3), U(r4), U(r5);
	return r1;
}

/* bpf_path_d_path: there is no kernel path to resolve */
static uint64_t kf_path_d_path(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	U(r1), U(r2), U(r3), U(r4), U(r5);
	return (uint64_t)(int64_t)-ENOENT;
}

/* distinct functions: the verifier finds each kfunc by its function */
#define NONE_FN(n) \
	static uint64_t kf_##n(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e) \
	{ return kf_none(a, b, c, d, e); }
NONE_FN(task_from_pid)
NONE_FN(task_acquire)
NONE_FN(task_release)
NONE_FN(cgroup_from_id)
NONE_FN(cgroup_acquire)
NONE_FN(cgroup_ancestor)
NONE_FN(cgroup_release)
NONE_FN(task_under_cgroup)
NONE_FN(cpumask_create)
NONE_FN(cpumask_release)
NONE_FN(cpumask_set_cpu)
NONE_FN(cpumask_clear_cpu)
NONE_FN(cpumask_test_cpu)
NONE_FN(cpumask_empty)
NONE_FN(cpumask_weight)
NONE_FN(lookup_user_key)
NONE_FN(lookup_system_key)
NONE_FN(key_put)
NONE_FN(get_task_exe_file)
NONE_FN(put_file)
NONE_FN(get_current_task_btf)

/* bpf_cast_to_kern_ctx: bpfrt's context is the one the program sees (no
 * kernel struct behind it): its own address */
static uint64_t kf_cast_to_kern_ctx(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5)
{
	return kf_same(r1, r2, r3, r4, r5);
}

/* bpf_rdonly_cast: the same address, typed by the verifier */
static uint64_t kf_rdonly_cast(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return kf_same(r1, r2, r3, r4, r5);
}

#define A(t) BPFRT_KARG_##t
#define ACQ BPFRT_KF_ACQUIRE
#define REL BPFRT_KF_RELEASE
#define RNULL BPFRT_KF_RET_NULL
#define TRUSTED BPFRT_KF_TRUSTED_ARGS
#define SLEEP BPFRT_KF_SLEEPABLE
#define RCU BPFRT_KF_RCU

static const struct bpfrt_kernel_kfunc table[] = {
	/* the helper that hands out the current task (BTF-typed) */
	{ "get_current_task_btf", kf_get_current_task_btf, 0, BPFRT_KSET_HELPER,
	  BPFRT_KRET_BTF, "task_struct", { 0 }, { 0 }, BPF_FUNC_get_current_task_btf },
	/* tasks */
	{ "bpf_task_from_pid", kf_task_from_pid, ACQ | RNULL, BPFRT_KSET_GENERIC,
	  BPFRT_KRET_BTF, "task_struct", { A(SCALAR) }, { 0 }, 0 },
	{ "bpf_task_acquire", kf_task_acquire, ACQ | RCU | RNULL, BPFRT_KSET_GENERIC,
	  BPFRT_KRET_BTF, "task_struct", { A(BTF) }, { "task_struct" }, 0 },
	{ "bpf_task_release", kf_task_release, REL, BPFRT_KSET_GENERIC,
	  BPFRT_KRET_VOID, NULL, { A(BTF) }, { "task_struct" }, 0 },
	/* cgroups */
	{ "bpf_cgroup_from_id", kf_cgroup_from_id, ACQ | RNULL, BPFRT_KSET_GENERIC,
	  BPFRT_KRET_BTF, "cgroup", { A(SCALAR) }, { 0 }, 0 },
	{ "bpf_cgroup_acquire", kf_cgroup_acquire, ACQ | RCU | RNULL, BPFRT_KSET_GENERIC,
	  BPFRT_KRET_BTF, "cgroup", { A(BTF) }, { "cgroup" }, 0 },
	{ "bpf_cgroup_ancestor", kf_cgroup_ancestor, ACQ | RCU | RNULL, BPFRT_KSET_GENERIC,
	  BPFRT_KRET_BTF, "cgroup", { A(BTF), A(SCALAR) }, { "cgroup" }, 0 },
	{ "bpf_cgroup_release", kf_cgroup_release, REL, BPFRT_KSET_GENERIC,
	  BPFRT_KRET_VOID, NULL, { A(BTF) }, { "cgroup" }, 0 },
	{ "bpf_task_under_cgroup", kf_task_under_cgroup, RCU, BPFRT_KSET_GENERIC,
	  BPFRT_KRET_INT, NULL, { A(BTF), A(BTF) }, { "task_struct", "cgroup" }, 0 },
	/* cpumasks (struct bpf_cpumask begins with its struct cpumask) */
	{ "bpf_cpumask_create", kf_cpumask_create, ACQ | RNULL, BPFRT_KSET_CPUMASK,
	  BPFRT_KRET_BTF, "bpf_cpumask", { 0 }, { 0 }, 0 },
	{ "bpf_cpumask_acquire", kf_same, ACQ | TRUSTED, BPFRT_KSET_CPUMASK,
	  BPFRT_KRET_BTF, "bpf_cpumask", { A(BTF) }, { "bpf_cpumask" }, 0 },
	{ "bpf_cpumask_release", kf_cpumask_release, REL, BPFRT_KSET_CPUMASK,
	  BPFRT_KRET_VOID, NULL, { A(BTF) }, { "bpf_cpumask" }, 0 },
	{ "bpf_cpumask_set_cpu", kf_cpumask_set_cpu, RCU, BPFRT_KSET_CPUMASK,
	  BPFRT_KRET_VOID, NULL, { A(SCALAR), A(BTF) }, { NULL, "bpf_cpumask" }, 0 },
	{ "bpf_cpumask_clear_cpu", kf_cpumask_clear_cpu, RCU, BPFRT_KSET_CPUMASK,
	  BPFRT_KRET_VOID, NULL, { A(SCALAR), A(BTF) }, { NULL, "bpf_cpumask" }, 0 },
	{ "bpf_cpumask_test_cpu", kf_cpumask_test_cpu, RCU, BPFRT_KSET_CPUMASK,
	  BPFRT_KRET_INT, NULL, { A(SCALAR), A(BTF) }, { NULL, "cpumask" }, 0 },
	{ "bpf_cpumask_empty", kf_cpumask_empty, RCU, BPFRT_KSET_CPUMASK,
	  BPFRT_KRET_INT, NULL, { A(BTF) }, { "cpumask" }, 0 },
	{ "bpf_cpumask_weight", kf_cpumask_weight, RCU, BPFRT_KSET_CPUMASK,
	  BPFRT_KRET_INT, NULL, { A(BTF) }, { "cpumask" }, 0 },
	/* keys */
	{ "bpf_lookup_user_key", kf_lookup_user_key, ACQ | RNULL | SLEEP, BPFRT_KSET_TRACING,
	  BPFRT_KRET_BTF, "bpf_key", { A(SCALAR), A(SCALAR) }, { 0 }, 0 },
	{ "bpf_lookup_system_key", kf_lookup_system_key, ACQ | RNULL, BPFRT_KSET_TRACING,
	  BPFRT_KRET_BTF, "bpf_key", { A(SCALAR) }, { 0 }, 0 },
	{ "bpf_key_put", kf_key_put, REL, BPFRT_KSET_TRACING,
	  BPFRT_KRET_VOID, NULL, { A(BTF) }, { "bpf_key" }, 0 },
	/* files */
	{ "bpf_get_task_exe_file", kf_get_task_exe_file, ACQ | TRUSTED | RNULL, BPFRT_KSET_LSM,
	  BPFRT_KRET_BTF, "file", { A(BTF) }, { "task_struct" }, 0 },
	{ "bpf_put_file", kf_put_file, REL, BPFRT_KSET_LSM,
	  BPFRT_KRET_VOID, NULL, { A(BTF) }, { "file" }, 0 },
	{ "bpf_path_d_path", kf_path_d_path, TRUSTED, BPFRT_KSET_LSM,
	  BPFRT_KRET_INT, NULL, { A(BTF), A(MEM), A(MEM_SIZE) }, { "path" }, 0 },
	/* context casts */
	{ "bpf_cast_to_kern_ctx", kf_cast_to_kern_ctx, 0, BPFRT_KSET_COMMON,
	  BPFRT_KRET_CTX_ADDR, NULL, { A(CTX) }, { 0 }, 0 },
	{ "bpf_rdonly_cast", kf_rdonly_cast, 0, BPFRT_KSET_COMMON,
	  BPFRT_KRET_CAST, NULL, { A(ANY), A(CONST_BTF_ID) }, { 0 }, 0 },
};

#define TABLE_CNT (sizeof(table) / sizeof(table[0]))

const struct bpfrt_kernel_kfunc *bpfrt_kernel_kfunc_of(bpfrt_helper_fn fn)
{
	/* kf_same also backs bpf_cpumask_acquire: the first entry with fn */
	for (size_t i = 0; fn && i < TABLE_CNT; i++)
		if (table[i].fn == fn)
			return &table[i];
	return NULL;
}

const struct bpfrt_kernel_kfunc *bpfrt_kernel_kfunc_at(uint32_t i)
{
	return i < TABLE_CNT ? &table[i] : NULL;
}

/* Linux's BTF_KFUNC_HOOK_TRACING: tracing programs (fentry, fexit,
 * fmod_ret, tp_btf, iter and their kin), tracepoints, perf events, LSM */
static bool tracing_hook(int kind, const char *sec)
{
	switch (kind) {
	case BPFRT_PROG_FENTRY:
	case BPFRT_PROG_FEXIT:
	case BPFRT_PROG_FMOD_RET:
	case BPFRT_PROG_FENTRY_MULTI:
	case BPFRT_PROG_FEXIT_MULTI:
	case BPFRT_PROG_FSESSION:
	case BPFRT_PROG_ITER:
	case BPFRT_PROG_TRACEPOINT:
	case BPFRT_PROG_PERF_EVENT:
	case BPFRT_PROG_LSM:
		return true;
	case BPFRT_PROG_RAW_TRACEPOINT:
		/* tp_btf is Linux's tracing kind; raw_tp is its own, with no set
		 * (a leading '?' only keeps the program from autoloading) */
		if (sec && *sec == '?')
			sec++;
		return sec && !strncmp(sec, "tp_btf", 6);
	default:
		return false;
	}
}

static bool cgroup_hook(int kind)
{
	return kind == BPFRT_PROG_CGROUP_SKB || kind == BPFRT_PROG_CGROUP_SOCK ||
	       kind == BPFRT_PROG_CGROUP_SOCK_ADDR || kind == BPFRT_PROG_CGROUP_SOCKOPT ||
	       kind == BPFRT_PROG_CGROUP_SYSCTL || kind == BPFRT_PROG_CGROUP_DEVICE;
}

const char *bpfrt_kernel_kfunc_kind_refusal(const struct bpfrt_kernel_kfunc *k, int kind,
					    const char *sec)
{
	switch (k->set) {
	case BPFRT_KSET_COMMON:
	case BPFRT_KSET_HELPER:
		return NULL;
	case BPFRT_KSET_GENERIC:
		return tracing_hook(kind, sec) || cgroup_hook(kind) || kind == BPFRT_PROG_SCHED_CLS ||
		       kind == BPFRT_PROG_XDP || kind == BPFRT_PROG_STRUCT_OPS ||
		       kind == BPFRT_PROG_SYSCALL ? NULL :
		       "only tracing (fentry, fexit, tp_btf, tracepoint, perf_event, lsm, iter), tc, "
		       "xdp, struct_ops, syscall and cgroup programs may";
	case BPFRT_KSET_CPUMASK:
		return tracing_hook(kind, sec) || kind == BPFRT_PROG_STRUCT_OPS ||
		       kind == BPFRT_PROG_SYSCALL ? NULL :
		       "only tracing (fentry, fexit, tp_btf, tracepoint, perf_event, lsm, iter), "
		       "struct_ops and syscall programs may";
	case BPFRT_KSET_TRACING:
		return tracing_hook(kind, sec) ? NULL :
		       "only tracing (fentry, fexit, tp_btf, tracepoint, perf_event, lsm, iter) "
		       "programs may";
	case BPFRT_KSET_LSM:
		return kind == BPFRT_PROG_LSM ? NULL : "only lsm programs may";
	}
	return "unknown kfunc set";
}

void bpfrt_env_add_kernel_kfuncs(struct bpfrt_env *env)
{
	for (size_t i = 0; i < TABLE_CNT; i++) {
		const struct bpfrt_kernel_kfunc *k = &table[i];
		struct bpfrt_helper h = { .name = k->name, .fn = k->fn,
					  .ret = k->ret == BPFRT_KRET_VOID ? BPFRT_RET_VOID :
						 BPFRT_RET_INTEGER };

		/* the verifier checks the arguments itself (kfuncs_kernel.c) */
		for (int a = 0; a < 5; a++)
			h.args[a] = k->args[a] ? BPFRT_ARG_ANYTHING : BPFRT_ARG_NONE;
		if (k->set == BPFRT_KSET_HELPER)
			bpfrt_env_helper_register_default(env, (uint32_t)k->helper_id, &h);
		else if (bpfrt_env_kfunc_id(env, k->name) < 0)
			bpfrt_env_kfunc_register(env, k->name, &h);
	}
}
