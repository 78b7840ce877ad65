/* Environments: lifetime, limits, log sink. The tables are helpers/registry.c's. */
#include "core/env.h"
#include "core/error.h"
#include "core/opts.h"
#include "verifier/verifier.h"

#include <stdlib.h>
#include <string.h>

struct bpfrt_env_name {
	struct bpfrt_env_name *next;
	char s[];
};

static struct bpfrt_env default_env = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.is_default = true,
	.limits = { .max_insns = BPFRT_MAX_INSNS,
		    .max_processed_insns = BPFRT_VERIFY_MAX_PROCESSED },
	.refs = 1,
};

struct bpfrt_env *bpfrt_env_default(void)
{
	return &default_env;
}

int bpfrt_env_new(const struct bpfrt_env_opts *opts, struct bpfrt_env **out)
{
	struct bpfrt_env *env;
	int err;

	if (!out)
		return bpfrt_err(-EINVAL, "env_new: no output pointer");
	*out = NULL;
	if (!OPTS_VALID(opts, bpfrt_env_opts))
		return -EINVAL;
	env = calloc(1, sizeof(*env));
	if (!env)
		return bpfrt_err(-ENOMEM, "env_new: out of memory");
	err = pthread_mutex_init(&env->lock, NULL);
	if (err) {
		free(env);
		return bpfrt_err(-err, "env_new: cannot create its lock");
	}
	env->limits.max_insns = OPTS_GET(opts, max_insns, 0);
	if (!env->limits.max_insns || env->limits.max_insns > BPFRT_MAX_INSNS)
		env->limits.max_insns = BPFRT_MAX_INSNS;
	env->limits.max_processed_insns = OPTS_GET(opts, max_processed_insns, 0);
	if (!env->limits.max_processed_insns)
		env->limits.max_processed_insns = BPFRT_VERIFY_MAX_PROCESSED;
	env->log_fn = OPTS_GET(opts, log_fn, NULL);
	env->log_ctx = OPTS_GET(opts, log_ctx, NULL);
	env->refs = 1;
	bpfrt_env_add_defaults(env);
	*out = env;
	return 0;
}

struct bpfrt_env *bpfrt_env_hold(struct bpfrt_env *env)
{
	if (!env)
		env = &default_env;
	if (!env->is_default)
		__atomic_add_fetch(&env->refs, 1, __ATOMIC_RELAXED);
	return env;
}

void bpfrt_env_put(struct bpfrt_env *env)
{
	struct bpfrt_env_name *n, *next;

	if (!env || env->is_default || __atomic_sub_fetch(&env->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (n = env->names; n; n = next) {
		next = n->next;
		free(n);
	}
	pthread_mutex_destroy(&env->lock);
	free(env);
}

void bpfrt_env_free(struct bpfrt_env *env)
{
	bpfrt_env_put(env);
}

/* Under env->lock. The copy lives as long as the environment: snapshots
 * of loaded programs point at it whatever is registered later. */
const char *bpfrt_env_keep_name(struct bpfrt_env *env, const char *name)
{
	size_t len = strlen(name);
	struct bpfrt_env_name *n;

	for (n = env->names; n; n = n->next)
		if (!strcmp(n->s, name))
			return n->s;
	n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return NULL;
	memcpy(n->s, name, len + 1);
	n->next = env->names;
	env->names = n;
	return n->s;
}

int bpfrt_env_log_failure(struct bpfrt_env *env, int err)
{
	if (!env)
		env = &default_env;
	if (err && env->log_fn)
		env->log_fn(env->log_ctx, bpfrt_last_error());
	return err;
}
