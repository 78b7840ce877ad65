/* Linux's kfuncs of kernel objects (tasks, cgroups, cpumasks, keys, files)
 * and its context casts, under their Linux names, prototypes and flags
 * (kernel_kfuncs.c), in every environment, so programs written for Linux
 * load and verify as there: the verifier types these calls itself
 * (verifier/kfuncs_kernel.c), found by function as the iterators are.
 *
 * A user-space process has none of these objects: the lookups and
 * acquires that may fail in Linux (KF_RET_NULL) find nothing here and
 * return NULL, releases have nothing to drop, the queries answer 0, so a
 * program that passes Linux's verifier runs here and takes its "not
 * found" path. The casts have a user-space meaning and keep it:
 * bpf_cast_to_kern_ctx returns the context itself, bpf_rdonly_cast its
 * argument. */
#ifndef BPFRT_HELPERS_KERNEL_KFUNCS_H
#define BPFRT_HELPERS_KERNEL_KFUNCS_H

#include "bpfrt/helpers.h"

#include <stdbool.h>
#include <stdint.h>

/* Linux's KF_* flags (include/linux/btf.h), the ones these kfuncs carry */
#define BPFRT_KF_ACQUIRE      (1u << 0)  /* returns a reference the program must release */
#define BPFRT_KF_RELEASE      (1u << 1)  /* releases the reference its first pointer holds */
#define BPFRT_KF_RET_NULL     (1u << 2)  /* the result may be NULL */
#define BPFRT_KF_TRUSTED_ARGS (1u << 4)  /* pointer arguments trusted or referenced */
#define BPFRT_KF_SLEEPABLE    (1u << 5)  /* sleepable programs only */
#define BPFRT_KF_RCU          (1u << 7)  /* pointer arguments trusted or RCU-protected */

/* Which of Linux's kfunc sets a kfunc is in: which program kinds may
 * call it (bpf_prog_type_to_kfunc_hook with the sets' registrations). */
enum bpfrt_kfunc_set {
	BPFRT_KSET_COMMON,   /* every kind (Linux's common_kfunc_set) */
	BPFRT_KSET_GENERIC,  /* tracing, tc, xdp, struct_ops, syscall, cgroup kinds */
	BPFRT_KSET_CPUMASK,  /* tracing, struct_ops, syscall */
	BPFRT_KSET_TRACING,  /* tracing kinds (the key kfuncs) */
	BPFRT_KSET_LSM,      /* lsm programs (the fs kfuncs' filter) */
	BPFRT_KSET_HELPER,   /* a helper (by id), not a kfunc: every kind */
};

enum bpfrt_kfunc_arg {
	BPFRT_KARG_NONE = 0,
	BPFRT_KARG_SCALAR,      /* a number */
	BPFRT_KARG_BTF,         /* a pointer to struct `type` (a kernel object) */
	BPFRT_KARG_MEM,         /* memory the kfunc writes, its size the next argument */
	BPFRT_KARG_MEM_SIZE,    /* the size of the memory argument before it */
	BPFRT_KARG_CTX,         /* the program's context, unmodified */
	BPFRT_KARG_ANY,         /* anything initialised (Linux's __ign) */
	BPFRT_KARG_CONST_BTF_ID, /* a constant BTF type id of a struct */
};

enum bpfrt_kfunc_ret {
	BPFRT_KRET_VOID = 0,
	BPFRT_KRET_INT,
	BPFRT_KRET_BTF,         /* a pointer to struct `ret_type` */
	BPFRT_KRET_CTX_ADDR,    /* bpf_cast_to_kern_ctx: the context's address */
	BPFRT_KRET_CAST,        /* bpf_rdonly_cast: untrusted pointer to the id's struct */
};

struct bpfrt_kernel_kfunc {
	const char *name;
	bpfrt_helper_fn fn;
	uint32_t flags;                 /* BPFRT_KF_* */
	enum bpfrt_kfunc_set set;
	enum bpfrt_kfunc_ret ret;
	const char *ret_type;           /* BPFRT_KRET_BTF: the struct's name */
	enum bpfrt_kfunc_arg args[5];
	const char *arg_type[5];        /* BPFRT_KARG_BTF: the struct's name */
	int32_t helper_id;              /* BPFRT_KSET_HELPER: the Linux helper id */
};

/* The kernel kfunc (or kernel-object helper) fn is, or NULL. */
const struct bpfrt_kernel_kfunc *bpfrt_kernel_kfunc_of(bpfrt_helper_fn fn);

/* Why a program of kind (bpfrt_prog_kind, with its section name: tp_btf
 * is Linux's tracing kind) may not call k, or NULL if it may. */
const char *bpfrt_kernel_kfunc_kind_refusal(const struct bpfrt_kernel_kfunc *k, int kind,
					    const char *sec_name);

/* The i-th entry of the table (for docs and fuzzers), NULL past the end. */
const struct bpfrt_kernel_kfunc *bpfrt_kernel_kfunc_at(uint32_t i);

struct bpfrt_env;
/* Registers them in env under their Linux names (the helper under its
 * id), each only where the name or id is still free. */
void bpfrt_env_add_kernel_kfuncs(struct bpfrt_env *env);

#endif
