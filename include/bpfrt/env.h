/* Environments: what programs are loaded against, the helper and kfunc
 * tables, the load limits and a sink for load failures.
 *
 * Every call that names no environment (bpfrt_helper_register,
 * bpfrt_prog_load without opts.env, ...) uses the default one; an embedder
 * hosting several independent users gives each its own, so the same
 * helper id can be a different function in each.
 *
 * A program's helpers are fixed at load: bpfrt copies the entries of the
 * helpers and kfuncs its instructions call (or, for a program with callx,
 * the whole table) from its environment into the program. Registering or
 * unregistering an id afterwards changes what later loads call, never
 * what a loaded program calls, in the interpreter and the JIT alike.
 *
 * Ownership: bpfrt_env_new gives the caller an environment it gives up
 * with bpfrt_env_free; programs loaded in it keep it alive until they are
 * freed. Tables copy struct bpfrt_helper; a helper's name must stay valid
 * while loaded programs may report it, a kfunc's name is copied.
 *
 * Thread safety: registration, lookups and loads may run concurrently on
 * any threads (each table is under its environment's lock); runs never
 * read the tables. */
#ifndef BPFRT_PUBLIC_ENV_H
#define BPFRT_PUBLIC_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "bpfrt/export.h"
#include "bpfrt/helpers.h"
#include "bpfrt/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_env;

/* Called with the message of every program load in the environment that
 * fails (the text bpfrt_last_error() then returns on that thread), on the
 * loading thread. */
typedef void (*bpfrt_env_log_fn)(void *ctx, const char *msg);

struct bpfrt_env_opts {
	size_t sz;                    /* sizeof(struct bpfrt_env_opts) */
	uint32_t max_insns;           /* instructions per program; 0 or more than
				       * BPFRT_MAX_INSNS: BPFRT_MAX_INSNS */
	uint64_t max_processed_insns; /* verifier budget per load; 0: Linux's 1M */
	bpfrt_env_log_fn log_fn;      /* NULL: failures only in bpfrt_last_error() */
	void *log_ctx;
};
#define bpfrt_env_opts__last_field log_ctx

/* A new environment with the helpers the default environment gets at its
 * first load (Linux's, and the host's defaults such as the tracing
 * helpers) and the limits and sink of opts. Returns 0 and *env, or -errno. */
BPFRT_API int bpfrt_env_new(const struct bpfrt_env_opts *opts, struct bpfrt_env **env);
/* Gives the caller's environment up (its programs keep it until they are
 * freed). NULL is a no-op. */
BPFRT_API void bpfrt_env_free(struct bpfrt_env *env);

/* bpfrt_helper_register, _unregister, bpfrt_kfunc_register and
 * bpfrt_kfunc_id (bpfrt/helpers.h) on env; NULL env is the default one. */
BPFRT_API int bpfrt_env_helper_register(struct bpfrt_env *env, uint32_t id,
					const struct bpfrt_helper *helper);
BPFRT_API int bpfrt_env_helper_unregister(struct bpfrt_env *env, uint32_t id);
BPFRT_API int bpfrt_env_kfunc_register(struct bpfrt_env *env, const char *name,
				       const struct bpfrt_helper *proto);
BPFRT_API int bpfrt_env_kfunc_id(struct bpfrt_env *env, const char *name);

#ifdef __cplusplus
}
#endif
#endif
