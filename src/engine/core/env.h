/* The environment programs are loaded in: the helper and kfunc tables,
 * the load limits and the log sink. Nothing of it is process-global
 * mutable state: the default environment (what every call without an
 * environment uses) is one instance among others, and every table is
 * written under the environment's lock.
 *
 * Programs never read a table after load: bpfrt_env_snapshot copies the
 * entries of the helpers and kfuncs a program's instructions call into
 * the program (prog->helpers), and the validator, the verifier, the
 * interpreter and every JIT backend use that copy only. Registering an
 * id again therefore changes what later loads call, never what a loaded
 * program calls, and the interpreter and the JIT of one program always
 * call the same function. */
#ifndef BPFRT_CORE_ENV_H
#define BPFRT_CORE_ENV_H

#include "bpfrt/bpfrt.h"
#include "bpfrt/env.h"

#include <pthread.h>

struct bpfrt_env_limits {
	uint32_t max_insns;
	uint64_t max_processed_insns;
};

struct bpfrt_env_name; /* kfunc names the environment owns */

struct bpfrt_env {
	pthread_mutex_t lock;        /* every table write; snapshots read under it */
	/* Helpers below BPFRT_KFUNC_ID_BASE, kfuncs from it (their names
	 * owned by the environment: names keeps each until the end, as
	 * loaded programs' snapshots point at them). NULL fn = free id. */
	struct bpfrt_helper helpers[BPFRT_MAX_HELPER_ID];
	struct bpfrt_env_name *names;
	bool is_default;             /* static: never freed */
	struct bpfrt_env_limits limits;
	bpfrt_env_log_fn log_fn;
	void *log_ctx;
	/* The creator's reference plus one per program loaded in it: a
	 * program's snapshot may point at kfunc names the environment owns. */
	uint32_t refs;
};

/* The environment of every call that names none. Its Linux helpers are
 * filled in at the first load (bpfrt_helpers_init), where ids are free. */
struct bpfrt_env *bpfrt_env_default(void);
/* env, or the default if NULL, with a reference the caller must put. */
struct bpfrt_env *bpfrt_env_hold(struct bpfrt_env *env);
void bpfrt_env_put(struct bpfrt_env *env);

/* Under env->lock: a copy of name that lives as long as env (the same
 * copy for the same name), or NULL when out of memory. */
const char *bpfrt_env_keep_name(struct bpfrt_env *env, const char *name);
/* Passes a failed load's message to the environment's sink; returns err. */
int bpfrt_env_log_failure(struct bpfrt_env *env, int err);

/* Table operations are helpers/registry.c's: bpfrt_env_helper_register
 * etc. (bpfrt/env.h), and bpfrt_helper_register etc. on the default
 * environment. This one registers only if id is free (Linux's defaults:
 * an embedder's helper under a Linux id wins). Returns 0 either way, or
 * -EINVAL. */
int bpfrt_env_helper_register_default(struct bpfrt_env *env, uint32_t id,
				      const struct bpfrt_helper *helper);
/* Copies entry id into *out under the lock; -ENOENT if free. */
int bpfrt_env_helper_copy(struct bpfrt_env *env, uint32_t id, struct bpfrt_helper *out);
/* Linux's helpers into the free ids of env, and its generic kfuncs (the
 * open-coded iterators, helpers/iter.c) where their names are free
 * (helpers/linux.c). */
void bpfrt_env_add_linux_helpers(struct bpfrt_env *env);
/* The same plus the host's defaults (bpfrt_helpers_add_defaults, the
 * tracing helpers), as a new environment starts. */
void bpfrt_env_add_defaults(struct bpfrt_env *env);

/* Copies the entries of every helper and kfunc id prog->insns call into
 * prog->helpers (prog->helper_cnt entries, indexed by id; the whole table
 * if the program has a callx, whose id is known only at run time). An
 * id that is not registered gets an empty entry: validation refuses the
 * call. Returns 0 or -ENOMEM. */
int bpfrt_env_snapshot(struct bpfrt_env *env, struct bpfrt_prog *prog);

#endif
