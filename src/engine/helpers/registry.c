/* Helper and kfunc tables of an environment (core/env.h), and the
 * per-program snapshot the engines call through. */
#include "helpers/helpers.h"
#include "core/env.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/prog.h"
#include "isa/isa.h"

#include <stdlib.h>
#include <string.h>

static int check_helper(uint32_t id, const struct bpfrt_helper *helper)
{
	if (id >= BPFRT_KFUNC_ID_BASE)
		return bpfrt_err(-EINVAL, "helper id %u out of range (max %u; kfuncs use "
				 "bpfrt_kfunc_register)", id, BPFRT_KFUNC_ID_BASE - 1);
	if (!helper || !helper->fn)
		return bpfrt_err(-EINVAL, "helper %u: no function", id);
	return 0;
}

int bpfrt_env_helper_register(struct bpfrt_env *env, uint32_t id,
			      const struct bpfrt_helper *helper)
{
	int err = check_helper(id, helper);

	if (!env)
		env = bpfrt_env_default();
	if (err)
		return err;
	pthread_mutex_lock(&env->lock);
	env->helpers[id] = *helper;
	pthread_mutex_unlock(&env->lock);
	return 0;
}

int bpfrt_env_helper_register_default(struct bpfrt_env *env, uint32_t id,
				      const struct bpfrt_helper *helper)
{
	int err = check_helper(id, helper);

	if (err)
		return err;
	pthread_mutex_lock(&env->lock);
	if (!env->helpers[id].fn)
		env->helpers[id] = *helper;
	pthread_mutex_unlock(&env->lock);
	return 0;
}

int bpfrt_env_helper_unregister(struct bpfrt_env *env, uint32_t id)
{
	int err = 0;

	if (!env)
		env = bpfrt_env_default();
	pthread_mutex_lock(&env->lock);
	if (id >= BPFRT_MAX_HELPER_ID || !env->helpers[id].fn)
		err = bpfrt_err(-ENOENT, "helper %u is not registered", id);
	else
		env->helpers[id] = (struct bpfrt_helper){ 0 };
	pthread_mutex_unlock(&env->lock);
	return err;
}

int bpfrt_env_helper_copy(struct bpfrt_env *env, uint32_t id, struct bpfrt_helper *out)
{
	int err = 0;

	pthread_mutex_lock(&env->lock);
	if (id >= BPFRT_MAX_HELPER_ID || !env->helpers[id].fn)
		err = -ENOENT;
	else
		*out = env->helpers[id];
	pthread_mutex_unlock(&env->lock);
	return err;
}

static int kfunc_find_locked(const struct bpfrt_env *env, const char *name)
{
	for (uint32_t i = BPFRT_KFUNC_ID_BASE; i < BPFRT_MAX_HELPER_ID; i++)
		if (env->helpers[i].fn && env->helpers[i].name && !strcmp(env->helpers[i].name, name))
			return (int)i;
	return -ENOENT;
}

int bpfrt_env_kfunc_id(struct bpfrt_env *env, const char *name)
{
	int id;

	if (!env)
		env = bpfrt_env_default();
	if (!name)
		return -ENOENT;
	pthread_mutex_lock(&env->lock);
	id = kfunc_find_locked(env, name);
	pthread_mutex_unlock(&env->lock);
	return id;
}

int bpfrt_env_kfunc_register(struct bpfrt_env *env, const char *name,
			     const struct bpfrt_helper *proto)
{
	const char *kept;
	int id;

	if (!env)
		env = bpfrt_env_default();
	if (!name || !*name || !proto || !proto->fn)
		return bpfrt_err(-EINVAL, "kfunc_register: name and function required");
	pthread_mutex_lock(&env->lock);
	/* A replaced kfunc keeps its id: later loads call the new function,
	 * loaded programs keep the one their snapshot holds. */
	id = kfunc_find_locked(env, name);
	if (id < 0)
		for (uint32_t i = BPFRT_KFUNC_ID_BASE; i < BPFRT_MAX_HELPER_ID; i++)
			if (!env->helpers[i].fn) {
				id = (int)i;
				break;
			}
	if (id < 0) {
		pthread_mutex_unlock(&env->lock);
		return bpfrt_err(-ENOSPC, "kfunc_register: %s: table full", name);
	}
	kept = bpfrt_env_keep_name(env, name);
	if (!kept) {
		pthread_mutex_unlock(&env->lock);
		return bpfrt_err(-ENOMEM, "kfunc_register: out of memory");
	}
	env->helpers[id] = *proto;
	env->helpers[id].name = kept;
	pthread_mutex_unlock(&env->lock);
	return id;
}

int bpfrt_env_snapshot(struct bpfrt_env *env, struct bpfrt_prog *prog)
{
	uint32_t cnt = 0;
	bool callx = false;
	struct bpfrt_helper *table;

	for (uint32_t pc = 0; pc < prog->insn_cnt; pc++) {
		const struct bpf_insn *insn = &prog->insns[pc];

		if (insn_is_callx(insn))
			callx = true;
		else if (insn_is_helper_call(insn) && (uint32_t)insn->imm < BPFRT_MAX_HELPER_ID &&
			 (uint32_t)insn->imm >= cnt)
			cnt = (uint32_t)insn->imm + 1;
	}
	if (callx)
		cnt = BPFRT_MAX_HELPER_ID;
	prog->helpers = NULL;
	prog->helper_cnt = 0;
	if (!cnt)
		return 0;
	table = calloc(cnt, sizeof(*table));
	if (!table)
		return bpfrt_err(-ENOMEM, "%s: out of memory", prog->name);
	pthread_mutex_lock(&env->lock);
	if (callx)
		memcpy(table, env->helpers, cnt * sizeof(*table));
	else
		for (uint32_t pc = 0; pc < prog->insn_cnt; pc++) {
			const struct bpf_insn *insn = &prog->insns[pc];
			uint32_t id = (uint32_t)insn->imm;

			if (insn_is_helper_call(insn) && id < cnt)
				table[id] = env->helpers[id];
		}
	pthread_mutex_unlock(&env->lock);
	prog->helpers = table;
	prog->helper_cnt = cnt;
	return 0;
}

/* ---- the default environment's tables (the public API) ------------------ */

int bpfrt_helper_register(uint32_t id, const struct bpfrt_helper *helper)
{
	return bpfrt_env_helper_register(bpfrt_env_default(), id, helper);
}

int bpfrt_helper_unregister(uint32_t id)
{
	return bpfrt_env_helper_unregister(bpfrt_env_default(), id);
}

int bpfrt_helper_info(uint32_t id, struct bpfrt_helper_info *info)
{
	struct bpfrt_helper h;

	if (!OUT_VALID(info, bpfrt_helper_info))
		return -EINVAL;
	if (bpfrt_env_helper_copy(bpfrt_env_default(), id, &h))
		return bpfrt_err(-ENOENT, "helper %u is not registered", id);
	OPTS_SET(info, name, h.name);
	OPTS_SET(info, fn, h.fn);
	OPTS_SET(info, ret, h.ret);
	OUT_COPY(info, &h, args);
	return 0;
}

const struct bpfrt_helper *bpfrt_helper_get(uint32_t id)
{
	const struct bpfrt_env *env = bpfrt_env_default();

	/* the entry itself, as before: valid until id is registered again */
	if (id >= BPFRT_MAX_HELPER_ID || !__atomic_load_n(&env->helpers[id].fn, __ATOMIC_ACQUIRE))
		return NULL;
	return &env->helpers[id];
}

int bpfrt_kfunc_id(const char *name)
{
	return bpfrt_env_kfunc_id(bpfrt_env_default(), name);
}

int bpfrt_kfunc_register(const char *name, const struct bpfrt_helper *proto)
{
	return bpfrt_env_kfunc_register(bpfrt_env_default(), name, proto);
}
